// What a lesson records beside its training step, so that the step itself stays a few plain lines:
// the progress line, the divergence check, the mean training loss since the last evaluation, when
// to evaluate, metrics.csv (one row per evaluation), the curves to plot and, for --resume, a
// checkpoint of the loop at each evaluation. A lesson's loop reads:
//
//   for (int64_t step = tracker.resume({model, optimizer, {&gen}}); step <= steps; ++step) {
//     optimizer.set_lr(schedule(step - 1));
//     const optim::StepResult result = optim::train_step(model, optimizer, batches.sample(batch, gen), 1.0f);
//     tracker.step(step, result, optimizer.lr());
//     if (tracker.evaluation_due(step)) tracker.evaluated(step, {validation_loss(model)});
//   }
//   tracker.finish();
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plot/plot.h"
#include "harness/progress.h"
#include "harness/resume.h"
#include "harness/run.h"
#include "optim/train_step.h"

namespace ladder::harness {

struct TrackerOptions {
  int64_t steps = 0;
  int64_t eval_every = 0;  // steps between evaluations; the last step always has one
  // What each evaluation reports, in this order: the CSV's columns between train_loss and lr.
  std::vector<std::string> figures = {"val_loss"};
  std::string csv = "metrics.csv";  // in the run folder: step, train_loss, the figures, lr, the rate, grad_norm
  // What a step processes, for the progress line and the rate column: "tok" (tokens_per_s),
  // "ex" (examples_per_s), "img" (images_per_s), or any other unit U (U_per_s); items_per_step of
  // them per step.
  std::string unit = "tok";
  int64_t items_per_step = 0;
  LossKind loss_kind = LossKind::cross_entropy;  // cross entropy: the progress line shows perplexity too
  std::string name = "train";  // names the curves, and the loss in a divergence message ("the GRU's loss")
  bool progress = true;         // false: no progress line (a second model trained in the same loop)
  bool stop_if_diverged = true;  // false: a run meant to show divergence goes on (lesson 05's unclipped SGD)
  // false: resume() keeps no checkpoint and a resumed run trains the loop again from step 1 (a short
  // loop that evaluates at every step, where saving costs more than training again)
  bool checkpoints = true;
};

class Tracker {
 public:
  Tracker(Run& run, TrackerOptions options);
  // Keeps a checkpoint of the loop's `state` at each evaluation (resume/<csv or name>.safetensors),
  // and with --resume first puts back the last one, with the CSV rows and curves before it.
  // Returns the step to train from: 1, or the step after the checkpoint (past the last: done).
  int64_t resume(LoopState state);
  // After each step (from 1): stops a diverged run (Run::check_loss), moves the progress line and
  // adds the loss to the mean since the last evaluation.
  void step(int64_t step, const optim::StepResult& result, double lr);
  // Whether `step` ends with an evaluation: every eval_every steps, and the last.
  bool evaluation_due(int64_t step) const;
  // An evaluation's figures at `step`, in the order of TrackerOptions::figures: a row of the CSV
  // and a point on each curve. The time between step() and this call is not training time.
  // Stops a diverged run first: a figure that is not finite (or a loss whose perplexity
  // overflows), or weights or optimizer state that the last update made NaN or infinite.
  void evaluated(int64_t step, const std::vector<double>& figures);
  void finish();  // ends the progress line

  // The mean training loss over the steps between the last two evaluations.
  double train_loss() const { return train_loss_; }
  // The last value of a figure (or of "train_loss"), or a curve of it against step (named options.name).
  double last(const std::string& figure) const;
  const plot::Series& curve(const std::string& figure) const;
  // Seconds since the tracker started; and a step's mean time, evaluations left out (the first
  // step too when there are others: it pays for first allocations).
  double seconds() const;
  double mean_step_seconds() const;

 private:
  size_t column(const std::string& figure) const;  // 0: train_loss, i + 1: figures[i]
  void check_finite(int64_t step, const std::vector<double>& figures);  // Run::check_figure, Run::check_finite
  void record_row(const std::vector<double>& row);  // the CSV and the curves
  nlohmann::json records() const;                   // what a checkpoint keeps of the tracker
  Run& run_;
  TrackerOptions options_;
  std::unique_ptr<CsvWriter> csv_;
  Progress progress_;
  std::vector<plot::Series> curves_;  // train_loss, then each figure
  std::vector<std::vector<double>> rows_;  // the CSV's, for a checkpoint
  std::optional<LoopState> state_;  // set by resume()
  std::string checkpoint_;
  std::chrono::steady_clock::time_point start_, mark_;
  std::chrono::steady_clock::duration training_{}, first_step_{};
  int64_t steps_timed_ = 0;
  double recent_ = 0, train_loss_ = 0, lr_ = 0, grad_norm_ = 0;
  int64_t recent_steps_ = 0;
};

}  // namespace ladder::harness
