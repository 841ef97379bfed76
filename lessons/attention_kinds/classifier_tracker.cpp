#include "lessons/attention_kinds/classifier_tracker.h"

#include <algorithm>

namespace ladder::lessons {

namespace {

constexpr int64_t kEvaluations = 10;  // per run: the points of each validation curve

}  // namespace

harness::Tracker classifier_tracker(harness::Run& run, int64_t steps, int64_t batch, const std::string& name, const std::string& csv) {
  return harness::Tracker(run, {.steps = steps,
                       .eval_every = std::max<int64_t>(1, steps / kEvaluations),
                       .figures = {"val_loss", "val_acc"},
                       .csv = csv,
                       .unit = "ex",
                       .items_per_step = batch,
                       .name = name});
}

}  // namespace ladder::lessons
