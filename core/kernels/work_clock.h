// Where a program's wall time goes, by kind of work, while the work clock records: what `./ladder
// bench gpt` prints as the breakdown of a training step. A TimedWork scope (placed in gemm, the
// fused attention kernels and the backward engine's call of each op's backward) charges its wall
// time to its kind. Scopes nest, and each kind gets its own time only: while a GEMM runs inside an
// op's backward, the clock charges the GEMM, not the backward; the attention alone keeps what runs
// inside it. Only scopes on the main thread outside any parallel region count (work inside a
// parallel loop belongs to the scope that started the loop), so the kinds never overlap and add
// up to at most the wall time recorded. One exception to the region rule: the main thread's time
// starting the other threads of a parallel_for_blocks loop and waiting for them at its end goes to
// Work::sync (the loop's LoopWait charges it), whatever scope is open, the attention's included;
// the waits inside one OpenBLAS call stay in GEMM.
#pragma once

#include <array>
#include <chrono>

namespace ladder {

enum class Work {
  gemm,         // every matrix product through gemm() (core/kernels/gemm.h)
  attention,    // the fused softmax attention kernels, their own GEMMs included
  op_backward,  // the ops' backward functions, minus the GEMMs and attention inside them
  sync,         // ladder's parallel loops: starting the other threads, waiting for the slowest one
  count
};

// Seconds per kind of work since the clock started.
struct WorkTimes {
  std::array<double, static_cast<size_t>(Work::count)> seconds{};
  double operator[](Work kind) const { return seconds[static_cast<size_t>(kind)]; }
};

void start_work_clock();     // zeroes the totals and starts recording
WorkTimes work_clock_now();  // the totals so far (the clock keeps recording)
WorkTimes stop_work_clock();  // stops recording; returns the totals

// Charges the wall time of its lifetime to `kind` while the clock records (else costs one test).
class TimedWork {
 public:
  explicit TimedWork(Work kind);
  ~TimedWork();
  TimedWork(const TimedWork&) = delete;
  TimedWork& operator=(const TimedWork&) = delete;

 private:
  bool counted_;
};

// Times one parallel region of parallel_for_blocks: made before the region, told
// on the main thread when its own blocks start and end, destroyed after the region. Charges the
// main thread's time before its blocks and after them to Work::sync, the rest to the innermost
// scope. Reads the time only while the clock records.
class LoopWait {
 public:
  LoopWait();
  ~LoopWait();
  LoopWait(const LoopWait&) = delete;
  LoopWait& operator=(const LoopWait&) = delete;
  void main_thread_starts();
  void main_thread_ends();

 private:
  bool counted_;
  std::chrono::steady_clock::time_point region_start_, main_start_, main_end_;
};

}  // namespace ladder
