// Stopping a run and resuming it: what a training loop's checkpoint holds, and the flags a run
// started with. A run folder keeps them in resume/ (removed when the run finishes or diverges):
//   resume/flags.json           the lesson, and every flag as the command line gave it (after defaults)
//   resume/<loop>.safetensors   one per training loop, rewritten at each of its evaluations: the
//                               model ("model.*"), the optimizer ("optimizer.*"), what the loop
//                               carries ("carried.*"), and in the metadata the step, the state of
//                               every generator the loop draws from (and of the default one), the
//                               tracker's records (CSV rows, curves, the last mean loss) and the
//                               checksum of flags.json (an edited flag is refused, not resumed)
// `--resume RUN_DIR` takes the flags of RUN_DIR/resume/flags.json, refuses a flag given with
// another value (only --threads, --out and --stop-after may change), and each loop continues from
// its checkpoint, so that the run ends with the figures of a run never interrupted.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"
#include "dist/communicator.h"
#include "nn/module.h"
#include "optim/optimizer.h"

namespace ladder::harness {

class Run;

// What a loop carries between steps beyond the weights and the optimizer, by name: saved with each
// checkpoint and put back when resuming (truncated BPTT's state and stream position: lessons/char_rnn/truncated_bptt.h).
struct Carried {
  std::function<std::map<std::string, Tensor>()> save;
  std::function<void(const std::map<std::string, Tensor>&)> restore;
};

// Everything a training loop changes from one step to the next.
struct LoopState {
  nn::Module& model;
  optim::Optimizer& optimizer;
  std::vector<Generator*> generators = {};  // those that draw the batches, in a fixed order
  Carried carried = {};
};

// Doubles (integers too: a double holds them exactly below 2^53) as a float32 tensor that gives
// them back bit for bit: a float32 is exact only to 2^24, so each double's 64 bits go in as four 16-bit pieces.
Tensor exact_tensor(const std::vector<double>& values);  // (n, 4)
std::vector<double> exact_values(const Tensor& pieces);

// An integer the loop sets once and reports at the end (lesson 15's peak memory of step 1), exact.
Carried carried_integer(const std::string& name, int64_t& value);
// Numbers the loop appends to at every step (lesson 16's training loss per step), exact.
Carried carried_values(const std::string& name, std::vector<double>& values);
// Several carried states as one, each under its own names.
Carried carried_together(const std::vector<Carried>& parts);

// The folder of a run's resume files, and the file of one loop's checkpoint in it.
std::string resume_folder(const std::string& run_folder);
std::string checkpoint_file(const std::string& run_folder, const std::string& loop);

// Writes `state` after `step` with the tracker's `records` (atomically: a run killed while saving
// keeps the checkpoint before).
void save_loop_checkpoint(const std::string& path, const std::string& lesson, const LoopState& state, int64_t step,
                          const nlohmann::json& records);
// Puts `state` back from the file (the model's own generators, its dropout masks', and the default
// generator too) and returns {step, records}.
std::pair<int64_t, nlohmann::json> load_loop_checkpoint(const std::string& path, const std::string& lesson,
                                                        LoopState& state);

// Lesson 16's processes, of which rank 0 alone has a Run and a Tracker, resume and stop together:
// a process without a Run puts back the checkpoint of the loop that writes `csv` (after which the
// Tracker names it) from the run folder `resumed` (--resume's; empty: not resuming), as it read the
// run's flags from there, and returns the step after it; 1 when there is none.
int64_t resume_without_run(const std::string& resumed, const std::string& lesson, const std::string& csv, LoopState state);
// Runs `part` on every process of `comm`, then stops them all at this same step if one of them was
// stopped: by --stop-after (rank 0's Tracker throws Stopped, and the others would wait for it
// forever), or by a stop signal (harness/stop_signals.h), which mpirun passes to every process but
// which may reach them at different steps: all throw Interrupted, `run` (rank 0's, null elsewhere) first writing it down.
void stop_together(const dist::Communicator& comm, Run* run, const std::function<void()>& part);

// The flags a run folder's resume/flags.json recorded with the lesson that ran; fails in one line
// when the folder has none, or when they are another lesson's (a file from before the lesson was
// recorded holds the flags alone, and is read as this lesson's).
nlohmann::json recorded_flags(const std::string& run_folder, const std::string& lesson);
void record_flags(const std::string& run_folder, const std::string& lesson, const nlohmann::json& flags);

// Flags that may differ when resuming: they change neither the model nor the data.
bool free_to_change(const std::string& flag);

// The command-line arguments that give the flags the command line leaves out (`given`: flag names
// without "--") the values the run recorded, where those are not the `defaults`: "--lr", "0.003",
// "--lines", ... (a flag at its default is left out, so that the lesson sees what the run saw).
std::vector<std::string> arguments_for(const nlohmann::json& recorded, const nlohmann::json& defaults,
                                       const std::vector<std::string>& given);

// The flags whose values differ between the recorded run and this command, as "--lr 0.003 (the
// run: 0.001)", those free to change left out; empty when resuming may go on.
std::vector<std::string> changed_flags(const nlohmann::json& recorded, const nlohmann::json& now);

}  // namespace ladder::harness
