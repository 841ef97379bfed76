// What lessons 07, 09 and 10 record beside their training loops, alike in all three so that their
// runs compare: the tracker (an evaluation every twentieth of the run: val_loss and val_ppl of the
// validation pairs), the weights of the lowest validation loss for a pairs file, the decoders watched
// along the number task's training, and a time estimate before a model trains. Each lesson writes
// its loop itself:
//
//   for (int64_t step = tracker.resume(model, adam, batches); step <= steps; ++step) {
//     model.train();
//     tracker.step(step, optim::train_step(model, adam, task.training_batch(batch, batches), 1.0f), adam.lr());
//     if (tracker.evaluation_due(step)) tracker.evaluate(model, step);
//   }
//   return tracker.finish(model);
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "data/translation_task.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "models/encoder_decoder.h"
#include "optim/adam.h"
#include "optim/train_step.h"

namespace ladder::lessons {

class NormalisationWatch;

// The weights of the lowest validation loss seen, when the task keeps them (keep_best): offered at
// every evaluation, restored after training. A task that does not keep them copies nothing and
// restores nothing, and its model ends with its last weights.
class BestWeights {
 public:
  explicit BestWeights(const data::TranslationTask& task) : keep_(task.keep_best) {}
  void offer(const nn::Module& model, int64_t step, double val_loss);
  // Loads the best weights into `model` and says which step they are from.
  void restore(nn::Module& model) const;
  // The best so far, for the loop's checkpoints (offer before the evaluation is recorded).
  harness::Carried carried();

 private:
  bool keep_;
  int64_t step_ = 0;
  double val_loss_ = 0;
  std::map<std::string, Tensor> weights_;
};

// A translation loop's tracker: the harness's Tracker (progress in pairs per second, `csv` in the
// run folder, curves and divergence messages named `name`), the best weights, and `watch`, when
// given, offered every evaluation (the decoders while the model is still unsure).
class TranslationTracker {
 public:
  TranslationTracker(harness::Run& run, const data::TranslationTask& task, const harness::CommonFlags& flags,
                     const std::string& name, const std::string& csv, NormalisationWatch* watch = nullptr);
  // The step to train from: 1, or after --resume's checkpoint of the model, the optimizer, the
  // batches' generator and the best weights.
  int64_t resume(nn::Module& model, optim::Optimizer& optimizer, Generator& batches);
  void step(int64_t step, const optim::StepResult& result, double lr) { tracker_.step(step, result, lr); }
  bool evaluation_due(int64_t step) const { return tracker_.evaluation_due(step); }
  // In eval mode: the validation pairs' loss per target token and its exp; the best weights and
  // the watch see the model before the checkpoint keeps them.
  void evaluate(models::EncoderDecoder& model, int64_t step);
  // Ends the progress line and puts the best weights back (a pairs file's); the tracker's curves
  // and last figures are the loop's results.
  harness::Tracker finish(nn::Module& model);

 private:
  const data::TranslationTask& task_;
  harness::Tracker tracker_;
  BestWeights best_;
  NormalisationWatch* watch_;
};

// Prints, before a model trains, what --steps will take: the time of a few training steps of a
// scratch model of the same config, with weights and batches of its own (the run's random draws do
// not move), on this machine as loaded now.
template <class Model, class Config>
void print_time_estimate(const Config& config, const data::TranslationTask& task, const harness::CommonFlags& flags) {
  constexpr int64_t kTimed = 8;  // after one untimed step, which pays for first allocations
  Generator init(flags.seed + 1000), batches(flags.seed + 1001);
  Model scratch(config, init);
  scratch.train();
  optim::Adam adam(scratch.named_parameters(), {.lr = flags.lr});
  std::chrono::steady_clock::time_point start;
  for (int64_t step = 0; step <= kTimed; ++step) {
    if (step == 1) start = std::chrono::steady_clock::now();
    optim::train_step(scratch, adam, task.training_batch(flags.batch, batches), 1.0f);
  }
  const double per_step = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kTimed;
  const double total = per_step * static_cast<double>(flags.steps);
  std::printf("time estimate: %.0f ms a step (%lld steps of a scratch copy, here and now): --steps %lld, about %.1f minutes\n",
              1000 * per_step, static_cast<long long>(kTimed), static_cast<long long>(flags.steps), total / 60);
}

}  // namespace ladder::lessons
