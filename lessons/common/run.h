// A lesson's run folder: its lock, metrics.csv, summary.json, the files written, the checks that
// stop a diverging run, and the final printout.
#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "lessons/common/cli.h"
#include "nn/module.h"

namespace ladder::lessons {

// Rows of numbers under a header, flushed as they come (a run can be watched, or cut short).
class CsvWriter {
 public:
  CsvWriter(const std::string& path, std::vector<std::string> columns);
  void row(const std::vector<double>& values);
  void row(const std::vector<std::string>& cells);  // for tables with names in them

 private:
  std::ofstream out_;
  size_t columns_;
  std::string path_;
};

// What a training loss is. A cross-entropy (nats) has diverged as soon as its perplexity exp(loss)
// overflows, at a loss of about 710, although the loss itself is still a finite number.
enum class LossKind { plain, cross_entropy };

// Why `loss` shows that training diverged ("the loss is nan"), or "" while it has not. `what`
// names the loss in the message: "the CNN's loss".
std::string divergence(double loss, LossKind kind, const std::string& what = "the loss");

// Training diverged. Run throws it after summary.json says so; lesson_main prints it and exits with
// status 3.
class Diverged : public Error {
 public:
  using Error::Error;
};

// The run stopped after the checkpoint --stop-after asked for, as an interruption would: lesson_main
// prints how to resume it and exits with status 0.
class Stopped : public Error {
 public:
  using Error::Error;
};

// What the final printout says beside a metric: {"test_acc", "softmax regression, 3 clusters, test points"}.
using MetricNotes = std::map<std::string, std::string>;

// summary.json's metrics and their notes, reported part by part, in the order reported.
struct Summary {
  nlohmann::ordered_json metrics;
  MetricNotes notes;
  void report(const std::string& name, const nlohmann::ordered_json& value, const std::string& note) {
    metrics[name] = value, notes[name] = note;
  }
};

class Run {
 public:
  // Creates the output folder and takes its lock (run.lock, holding this process's id): a second
  // run into the same folder is refused while this one runs. A lock left by a run that ended
  // without removing it (killed) is taken over. Starts the clock. A run that is not resumed first
  // removes the resume files an earlier run left in the folder.
  explicit Run(const LessonCli& cli);
  ~Run();  // removes the lock
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // The path of a file in the run folder, remembered for the final printout.
  std::string file(const std::string& name);
  // The same path, not remembered: the stem of files a helper writes and reports (plots).
  std::string path(const std::string& name) const;
  void wrote(const std::vector<std::string>& paths);  // files written by a helper (plots)
  double seconds() const;
  const std::string& lesson() const { return cli_.lesson(); }

  // Checkpoints for --resume (lessons/common/resume.h), which the Tracker keeps for its loop.
  bool resuming() const { return !cli_.common.resume.empty(); }
  // The file of the checkpoint of the loop named `loop` (each loop of a run has its own name); the
  // first call records the run's flags beside it.
  std::string checkpoint_file(const std::string& loop);
  // After each checkpoint written: counts them, for --stop-after.
  void checkpoint_written(int64_t step, const std::string& loop);
  // Throws Stopped once --stop-after's checkpoint is written: called where every loop of that step
  // has saved its own (the next step, or the end of the loop).
  void stop_if_asked() const;

  // Call with each training step's loss (steps from 1): when training has diverged, stops the run
  // (summary.json says where, then Diverged) instead of training on NaN and saving it.
  void check_loss(int64_t step, double loss, LossKind kind = LossKind::plain, const std::string& what = "the loss");
  // Writes `model` to model.safetensors in the run folder with `metadata` and {"lesson": this
  // lesson's name}, unless a weight is NaN or infinite (the last update can break the weights
  // after the last loss was checked): then Diverged.
  std::string save_checkpoint(const nn::Module& model, std::map<std::string, std::string> metadata = {});

  // summary.json: {"lesson", "seconds", "flags", "metrics"}; then prints the metrics (rounded,
  // each with its note), every file written, and `next`: the note's section to read and an
  // exercise to try. The last thing a lesson does.
  // The metrics are printed and saved in the order given.
  void finish(const nlohmann::ordered_json& metrics, const MetricNotes& notes, const std::string& next);

 private:
  [[noreturn]] void diverged(int64_t step, double loss, const std::string& why);
  void write_summary(const nlohmann::ordered_json& fields);
  const LessonCli& cli_;
  std::string folder_;
  int lock_fd_ = -1;
  std::vector<std::string> written_;
  std::vector<std::string> loops_;  // the loops that keep checkpoints
  int64_t checkpoints_ = 0;
  std::string stop_message_;  // set by --stop-after's checkpoint
  std::chrono::steady_clock::time_point start_;
  int64_t last_step_ = 0;  // the last loss check, for a divergence found in the weights
  double last_loss_ = 0;
};

// The main() of every lesson: runs it, and turns an exception (a ladder::Error, or one from a
// library) into a message and exit status 2, so that no input can abort the process; a diverged
// run exits with status 3, one stopped by --stop-after with 0.
int lesson_main(const std::function<void()>& body);

}  // namespace ladder::lessons
