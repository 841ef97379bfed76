// Training progress. On a terminal: one line, updated in place (step/total, loss, perplexity,
// throughput, ETA). Elsewhere (CI, pipes, a file, mpirun's processes unless their output is a
// terminal): a plain line every tenth of the run, with no carriage return or escape code.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ladder::harness {

class Progress {
 public:
  // unit: what throughput counts ("tok" for tokens, "ex" for examples); show_ppl for language models.
  Progress(int64_t total_steps, std::string unit, bool show_ppl);
  // After `step` steps (1-based) that processed `items` items in all so far.
  void update(int64_t step, double loss, int64_t items);
  void finish();  // ends the updating line

 private:
  std::string line(int64_t step, double loss, int64_t items) const;
  int64_t total_;
  std::string unit_;
  bool show_ppl_, terminal_;
  std::chrono::steady_clock::time_point start_, last_;
  bool open_line_ = false;
};

}  // namespace ladder::harness
