#include "harness/schedule_flags.h"

#include <algorithm>

#include "core/error.h"

namespace ladder::harness {

const std::vector<std::string>& ScheduleFlags::decays() {
  static const std::vector<std::string> shapes = {"cosine", "linear", "constant"};
  return shapes;
}

void ScheduleFlags::add_to(LessonCli& cli, const std::string& part) {
  cli.option("--warmup", warmup, part + "steps of linear learning-rate warmup before the decay", non_negative);
  cli.option("--lr-floor", floor, part + "where the decay ends, as a fraction of --lr (1: a constant rate)", {0.0f, 1.0f});
  cli.choice("--decay", decay, part + "the decay's shape after the warmup: cosine (nanoGPT), linear, or constant (makemore)", decays());
}

namespace {

void check_warmup(const std::string& lesson, int64_t warmup, int64_t steps, const std::string& decay) {
  if (warmup >= steps)
    fail(lesson.c_str(), "--warmup ", warmup, " leaves no step of --steps ", steps,
         " for the ", decay, " decay; give a smaller --warmup");
}

}  // namespace

void ScheduleFlags::check(const std::string& lesson, int64_t steps) const {
  check_warmup(lesson, warmup, steps, decay);
}

optim::Schedule ScheduleFlags::schedule(float lr, int64_t steps) const {
  // lr / (1 / floor) rather than floor * lr: the default floor then gives lr / 10 to the bit, as before the flag.
  const float lowest = lr / (1.0f / floor);
  const optim::Schedule cosine = optim::cosine_lr(lr, warmup, steps, lowest);
  if (decay == "cosine") return cosine;
  if (decay != "linear" && decay != "constant") fail("ScheduleFlags", "no decay shape '", decay, "'");
  const int64_t w = warmup;
  const bool linear = decay == "linear";
  return [=](int64_t step) {
    if (step < w) return cosine(step);  // cosine_lr's warmup, the same in every shape
    if (!linear) return lr;
    const float progress = std::min(1.0f, static_cast<float>(step - w) / static_cast<float>(steps - w));
    return lr - (lr - lowest) * progress;
  };
}

void ScheduleFlags::check_after_quick(const std::string& lesson, const LessonCli& cli) const {
  if (!cli.common.quick || cli.given("--warmup")) {
    const nlohmann::json& given = cli.flags_at_start();
    return check_warmup(lesson, given.at("warmup").get<int64_t>(), given.at("steps").get<int64_t>(), decay);
  }
  const int64_t steps = cli.common.steps;
  if (warmup >= steps)
    fail(lesson.c_str(), "--quick runs ", steps, " step", steps == 1 ? "" : "s", " with a warmup of ", warmup,
         " steps, which leaves none for the ", decay, " decay; give --steps ", warmup + 1, " or more, or --warmup 0");
}

}  // namespace ladder::harness
