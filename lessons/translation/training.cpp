#include "lessons/translation/training.h"

#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "lessons/translation/length_normalisation.h"
#include "models/translate.h"

namespace ladder::lessons {

void BestWeights::offer(const nn::Module& model, int64_t step, double val_loss) {
  if (!keep_ || (!weights_.empty() && val_loss >= val_loss_)) return;
  NoGradGuard no_grad;
  for (const auto& [name, tensor] : model.state_dict()) weights_[name] = tensor.detach().clone();
  step_ = step, val_loss_ = val_loss;
}

void BestWeights::restore(nn::Module& model) const {
  if (weights_.empty()) return;
  model.load_state_dict(weights_);
  std::printf("kept the weights of step %lld, the lowest validation loss (%.4f)\n", static_cast<long long>(step_), val_loss_);
}

harness::Carried BestWeights::carried() {
  return {[this] {
            std::map<std::string, Tensor> state = {{"best_step_and_loss", harness::exact_tensor({static_cast<double>(step_), val_loss_})}};
            for (const auto& [name, tensor] : weights_) state["best." + name] = tensor;
            return state;
          },
          [this](const std::map<std::string, Tensor>& state) {
            if (!state.count("best_step_and_loss")) fail("BestWeights", "the checkpoint has no best weights");
            const std::vector<double> step_and_loss = harness::exact_values(state.at("best_step_and_loss"));
            step_ = static_cast<int64_t>(step_and_loss.at(0)), val_loss_ = step_and_loss.at(1);
            weights_.clear();
            for (const auto& [name, tensor] : state)
              if (name.starts_with("best.")) weights_[name.substr(5)] = tensor;
          }};
}

TranslationTracker::TranslationTracker(harness::Run& run, const data::TranslationTask& task, const harness::CommonFlags& flags,
                                       const std::string& name, const std::string& csv, NormalisationWatch* watch)
    : task_(task),
      tracker_(run, {.steps = flags.steps, .eval_every = std::max<int64_t>(1, flags.steps / 20), .figures = {"val_loss", "val_ppl"},
                     .csv = csv, .unit = "pairs", .items_per_step = flags.batch, .name = name}),
      best_(task),
      watch_(watch) {}

int64_t TranslationTracker::resume(nn::Module& model, optim::Optimizer& optimizer, Generator& batches) {
  return tracker_.resume({model, optimizer, {&batches}, best_.carried()});
}

void TranslationTracker::evaluate(models::EncoderDecoder& model, int64_t step) {
  const double val_loss = models::translation_loss(model, task_, task_.val);
  best_.offer(model, step, val_loss);  // before the checkpoint, which keeps it
  if (watch_) watch_->offer(model, task_, step);
  tracker_.evaluated(step, {val_loss, std::exp(val_loss)});
}

harness::Tracker TranslationTracker::finish(nn::Module& model) {
  tracker_.finish();
  best_.restore(model);
  return std::move(tracker_);
}

}  // namespace ladder::lessons
