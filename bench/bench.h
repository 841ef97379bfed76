// What every benchmark shares: timing a workload, comparing it with its reference side by side,
// and printing one line per workload: name ours_ms=... ref_ms=... ratio=...
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ladder::bench {

constexpr int kRepeats = 9;  // timed repeats of each side; the fastest counts

// A function that runs one timed repeat of `work` (about 100 ms of calls) and returns the
// milliseconds per call; the first use warms up and picks the number of calls.
std::function<double()> repeats_of(std::function<void()> work);

// Best time of one call in milliseconds: the fastest of several repeats (the minimum is the
// measurement least disturbed by other work on a shared machine).
double time_ms(const std::function<void()>& work, int repeats = kRepeats);
// The same for two workloads, their repeats alternating so that drift in the machine's load hits
// both alike; returns the fastest repeat of each, (ours, ref).
std::pair<double, double> time_side_by_side(const std::function<double()>& ours_repeat,
                                            const std::function<double()>& ref_repeat, int repeats = kRepeats);

// One of our workloads and the workload of the same name in a PyTorch script (bench/pytorch).
struct Workload {
  std::string name;
  std::function<void()> step;
  int threads = 0;     // run ours at this many threads (0: as set); the script fixes its own
  double scale = 1.0;  // from milliseconds per call to the reported unit (the same on both sides)
  std::string note;
  int repeats = kRepeats;  // fewer for workloads whose single call takes seconds
};

// What compare_with_pytorch measured for one workload, in the reported unit; ref < 0 when
// PyTorch did not run, and ref_threads is then 0.
struct Comparison {
  double ours = 0, ref = -1;
  int ref_threads = 0;
};

// Times each workload against the script's, repeats alternating (bench/pytorch_process.h);
// reports ours alone when PyTorch is not installed.
std::vector<Comparison> compare_with_pytorch(const std::string& script, const std::vector<Workload>& workloads);

// The rate of raw cblas_sgemm on (n,n) @ (n,n) at the current thread count, in GFLOP/s: the fastest
// repeat, as every other figure. The yardstick models' FLOP/s are given against.
double sgemm_gflops(int64_t n);
// a (M,K) @ b (K,N) into c (M,N) by raw cblas_sgemm, nothing allocated: the reference GEMM.
std::function<void()> raw_sgemm(const Tensor& a, const Tensor& b, Tensor& c);

// The phases of one training step: the step itself is zero_grad, loss().backward(), clip, update.
struct TrainingStep {
  std::function<void()> zero_grad;
  std::function<Tensor()> loss;  // the forward pass, to the scalar loss
  std::function<void()> clip, update;

  void operator()() const;
};

// Prints where the step's wall time goes at `threads` threads, the mean of `steps` steps: each
// phase, and the forward and the backward split by a WorkObserver (bench/work_observer.h)
// into GEMM, the fused attention, the threads' synchronisation in ladder's parallel loops, the ops'
// backward functions and the rest (in the forward the other ops; in the backward the engine:
// walking the graph, summing gradients that meet).
void print_breakdown(const TrainingStep& step, int threads, int steps = 20);

// One result line; ref_ms < 0 means no reference ran.
void report(const std::string& name, double ours_ms, double ref_ms, const std::string& note = "");

void run_core();
void run_cnn();
void run_rnn();
void run_seq2seq();
void run_attention();
void run_gpt();
// Lesson 15's encoder and LSTM classifiers at its size against PyTorch (run by run_gpt).
void run_classifiers();
// The peak memory one attention forward + backward of this kind at this length adds, printed in
// bytes (run by run_attention in a fresh process: ladder_bench --attention-peak-memory KIND T).
void attention_peak_memory(const std::string& kind, int64_t length);

}  // namespace ladder::bench
