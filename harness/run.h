// A lesson's run folder: its lock (run_lock.h), summary.json (run_summary.h), the files written, the
// checks that stop a diverging run (divergence.h), Ctrl-C (stop_signals.h), and the final printout.
//
// summary.json says at every moment what the folder holds: its "status" is "running" from the
// start, then "finished", "diverged", "interrupted" (Ctrl-C, kill, --stop-after: the resume
// checkpoint is kept) or "failed" (an error, with its message); it is written atomically.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "harness/cli.h"
#include "harness/csv_writer.h"
#include "harness/divergence.h"
#include "harness/stop_signals.h"
#include "nn/module.h"

namespace ladder::harness {

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

// A stop signal (harness/stop_signals.h: SIGINT from Ctrl-C, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
// SIGUSR2) stopped the run at a step, its last checkpoint kept: lesson_main prints how to resume it
// and exits with status 128 + the signal's number (130, 143, 129, 131, 138, 140), as a shell does.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& message, int signal) : Error(message), signal(signal) {}
  int signal;
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
  // removes what an earlier run left in the folder: the files its summary.json lists, its
  // model.safetensors and its resume files. Then summary.json says "running", the header line
  // says how many threads run on how loaded a machine, and the stop signals (SIGINT, SIGTERM,
  // SIGHUP, ...) only ask the run to stop at its next step (a second one ends it at once,
  // summary.json saying "interrupted").
  explicit Run(const LessonCli& cli);
  ~Run();  // removes the lock, puts the signals' handlers back; an exception: summary.json says "failed"
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // The path of a file in the run folder, remembered for the final printout.
  std::string file(const std::string& name);
  // The same path, not remembered: the stem of files a helper writes and reports (plots).
  std::string path(const std::string& name) const;
  void wrote(const std::vector<std::string>& paths);  // files written by a helper (plots)
  double seconds() const;
  const std::string& lesson() const { return cli_.lesson(); }

  // Checkpoints for --resume (harness/resume.h), which the Tracker keeps for its loop.
  bool resuming() const { return !cli_.common.resume.empty(); }
  // The file of the checkpoint of the loop named `loop` (each loop of a run has its own name); the
  // first call records the run's flags beside it.
  std::string checkpoint_file(const std::string& loop);
  // After each checkpoint written: counts them, for --stop-after.
  void checkpoint_written(int64_t step, const std::string& loop);
  // Throws Stopped once --stop-after's checkpoint is written, Interrupted once a stop signal
  // came, after summary.json says "interrupted": called where every loop of that step has saved
  // its own (the next step, or the end of the loop).
  void stop_if_asked();
  // A loop's last evaluation ({"step": 40, "val_loss": 0.83}), which an interrupted summary reports.
  void evaluated(const std::string& loop, const nlohmann::ordered_json& figures);

  // Call with each training step's loss (steps from 1): when training has diverged (divergence(),
  // against the first loss checked under the name `what`), stops the run (summary.json says where,
  // then Diverged) instead of training on NaN and saving it. Stops an interrupted run too.
  void check_loss(int64_t step, double loss, LossKind kind = LossKind::plain, const std::string& what = "the loss");
  // The same for an evaluation's figure ("val_loss": `kind` judges it; others need only be finite).
  void check_figure(int64_t step, const std::string& figure, double value, LossKind kind);
  // Stops a run whose `tensors` (a model's or an optimizer's state after step `step`'s update)
  // hold NaN or infinity, naming the tensor, before they are evaluated or saved.
  void check_finite(int64_t step, const std::map<std::string, Tensor>& tensors, const std::string& whose);
  // Writes `model` to model.safetensors in the run folder with `metadata` and {"lesson": this
  // lesson's name}, unless a weight is NaN or infinite (the last update can break the weights
  // after the last loss was checked): then Diverged.
  std::string save_checkpoint(const nn::Module& model, std::map<std::string, std::string> metadata = {});

  // summary.json: {"lesson", "status": "finished", "seconds", "machine", "flags", "metrics",
  // "files"}; then prints the metrics (rounded, each with its note) unless the lesson has shown
  // them in tables of its own, every file written, and `next`: the note's section to read and an
  // exercise to try. The last thing a lesson does. The metrics are printed and saved in the order
  // given; one that is NaN or infinite (weights that diverged) stops the run as diverged instead.
  enum class Metrics { listed, shown_above };
  void finish(const nlohmann::ordered_json& metrics, const MetricNotes& notes, const std::string& next,
              Metrics metrics_print = Metrics::listed);

  // Stops the run as `signal` does at a step: summary.json says "interrupted", then Interrupted.
  // Lesson 16's rank 0 calls it when another of its processes received the signal.
  [[noreturn]] void interrupted(int signal);

 private:
  [[noreturn]] void diverged(int64_t step, double loss, const std::string& why);
  void clear_earlier_run();
  void check_only_files();  // no link, pipe or device in the folder or resume/ (removed, or refused when resuming)
  // Fails naming the first file the run lists that is missing or empty (a write the disk refused).
  void check_written() const;
  // summary.json: the fields every status has, `status`, then `fields`, and the files written so
  // far (which the next run into the folder removes); written atomically.
  nlohmann::ordered_json summary(const std::string& status, const nlohmann::ordered_json& fields) const;
  void write_summary(const std::string& status, const nlohmann::ordered_json& fields);
  // Renders what a second signal writes (stop_signals.h): the summary as it stands, "interrupted".
  void prepare_exit_at_once();
  const LessonCli& cli_;
  std::string folder_;
  std::string status_ = "running";
  nlohmann::ordered_json machine_;  // how the run ran: threads, cores, load, BLAS
  nlohmann::ordered_json evaluations_ = nlohmann::ordered_json::object();  // each loop's last
  int lock_fd_ = -1;
  StopSignals stop_signals_;
  std::vector<std::string> written_;
  std::vector<std::string> loops_;  // the loops that keep checkpoints
  int64_t checkpoints_ = 0;
  std::string stop_message_;  // set by --stop-after's checkpoint
  std::chrono::steady_clock::time_point start_;
  int64_t last_step_ = 0;  // the last loss check, for a divergence found in the weights
  double last_loss_ = 0;
  std::map<std::string, double> first_losses_;  // by the loss's name: where each training started
};

// The main() of every lesson: runs it, and turns an exception (a ladder::Error, or one from a
// library) into a message and exit status 2, so that no input can abort the process (a run folder
// it leaves says "failed" with the message); a diverged run exits with status 3, one stopped by
// --stop-after with 0, one interrupted by a signal with 128 + its number.
int lesson_main(const std::function<void()>& body);

}  // namespace ladder::harness
