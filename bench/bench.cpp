// Timing, side-by-side comparison and the result lines shared by every benchmark.
#include "bench/bench.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <tuple>
#include <utility>

#include "bench/pytorch_process.h"
#include "bench/work_observer.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"

namespace ladder::bench {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

std::function<double()> repeats_of(std::function<void()> work) {
  int calls = 0;  // chosen on the first repeat, so that one repeat lasts about 100 ms
  return [work = std::move(work), calls]() mutable {
    if (calls == 0) {
      // Warm up (caches, allocator, thread pool): three calls, or one if a call takes over 100 ms.
      const auto warm_up = Clock::now();
      work();
      if (elapsed_ms(warm_up) < 100) {
        work();
        work();
      }
      const auto start = Clock::now();
      work();
      const double one_call = elapsed_ms(start);
      calls = std::max(1, static_cast<int>(100.0 / std::max(one_call, 1e-3)));
      if (calls == 1) return one_call;  // that call already lasted a whole repeat
    }
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) work();
    return elapsed_ms(start) / calls;
  };
}

double time_ms(const std::function<void()>& work, int repeats) {
  auto repeat = repeats_of(work);
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) best = std::min(best, repeat());
  return best;
}

std::pair<double, double> time_side_by_side(const std::function<double()>& ours_repeat,
                                            const std::function<double()>& ref_repeat, int repeats) {
  double best_ours = 1e300, best_ref = 1e300;
  for (int i = 0; i < repeats; ++i) {
    best_ours = std::min(best_ours, ours_repeat());
    best_ref = std::min(best_ref, ref_repeat());
  }
  return {best_ours, best_ref};
}

std::vector<Comparison> compare_with_pytorch(const std::string& script, const std::vector<Workload>& workloads) {
  PytorchProcess torch(script);
  const int threads_before = num_threads();
  std::vector<Comparison> results;
  for (const Workload& workload : workloads) {
    if (workload.threads > 0) set_num_threads(workload.threads);
    double ours = 0, ref = -1;
    int torch_threads = 0;
    std::string note = workload.note;
    if (torch.available()) {
      std::tie(ours, ref) = time_side_by_side(repeats_of(workload.step),
                                              [&] { return torch.repeat_ms(workload.name); }, workload.repeats);
      torch_threads = torch.fastest_threads(workload.name);
      note += std::string(workload.threads == 0 ? " [PyTorch fastest at " : " [PyTorch at ") +
              (torch_threads == 1 ? "1 thread]" : std::to_string(torch_threads) + " threads]");
    } else {
      ours = time_ms(workload.step, workload.repeats);
    }
    set_num_threads(threads_before);
    report(workload.name, ours * workload.scale, ref > 0 ? ref * workload.scale : -1, note);
    results.push_back({ours * workload.scale, ref > 0 ? ref * workload.scale : -1, torch_threads});
  }
  return results;
}

double sgemm_gflops(int64_t n) {
  Generator gen(1);
  const Tensor a = randn({n, n}, gen), b = randn({n, n}, gen);
  Tensor c = empty({n, n});
  return 2.0 * n * n * n / (time_ms(raw_sgemm(a, b, c)) * 1e6);
}

std::function<void()> raw_sgemm(const Tensor& a, const Tensor& b, Tensor& c) {
  return [&a, &b, &c] {
    const int m = static_cast<int>(a.size(0)), k = static_cast<int>(a.size(1)), n = static_cast<int>(b.size(1));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
  };
}

void TrainingStep::operator()() const {
  zero_grad();
  loss().backward();
  clip();
  update();
}

void print_breakdown(const TrainingStep& step, int threads, int steps) {
  const int threads_before = num_threads();
  set_num_threads(threads);
  step();  // warm-up
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  // Adds each kind's seconds between two readings of the observer to `sum`.
  const auto add_between = [](WorkTimes& sum, const WorkTimes& before, const WorkTimes& after) {
    for (size_t kind = 0; kind < sum.seconds.size(); ++kind)
      sum.seconds[kind] += after.seconds[kind] - before.seconds[kind];
  };
  double zero = 0, forward = 0, backward = 0, clip = 0, update = 0;  // ms per phase
  WorkTimes in_forward, in_backward, in_step;                         // seconds per kind of work
  WorkObserver work;  // charges the kinds of work until the breakdown is printed
  for (int s = 0; s < steps; ++s) {
    const WorkTimes before_step = work.now();
    Clock::time_point start = Clock::now();
    step.zero_grad();
    zero += ms_since(start);
    const WorkTimes before_forward = work.now();
    start = Clock::now();
    const Tensor loss = step.loss();
    forward += ms_since(start);
    const WorkTimes before_backward = work.now();
    start = Clock::now();
    loss.backward();
    backward += ms_since(start);
    const WorkTimes after_backward = work.now();
    start = Clock::now();
    step.clip();
    clip += ms_since(start);
    start = Clock::now();
    step.update();
    update += ms_since(start);
    add_between(in_forward, before_forward, before_backward);
    add_between(in_backward, before_backward, after_backward);
    add_between(in_step, before_step, work.now());
  }
  set_num_threads(threads_before);
  const double n = steps;
  const auto ms = [n](const WorkTimes& times, Work kind) { return 1e3 * times[kind] / n; };  // per step
  const double forward_kinds =
      ms(in_forward, Work::gemm) + ms(in_forward, Work::attention) + ms(in_forward, Work::sync);
  const double backward_kinds = ms(in_backward, Work::gemm) + ms(in_backward, Work::attention) +
                                ms(in_backward, Work::sync) + ms(in_backward, Work::op_backward);
  std::printf("    where a step's time goes at %d thread%s (mean of %d steps): %.2f ms\n", threads,
              threads == 1 ? "" : "s", steps, (zero + forward + backward + clip + update) / n);
  std::printf("      forward  %6.2f ms = GEMM %.2f + attention %.2f + threads' sync %.2f + the other ops %.2f\n",
              forward / n, ms(in_forward, Work::gemm), ms(in_forward, Work::attention), ms(in_forward, Work::sync),
              forward / n - forward_kinds);
  std::printf(
      "      backward %6.2f ms = GEMM %.2f + attention %.2f + threads' sync %.2f + the ops' backward %.2f + the engine "
      "%.2f\n",
      backward / n, ms(in_backward, Work::gemm), ms(in_backward, Work::attention), ms(in_backward, Work::sync),
      ms(in_backward, Work::op_backward), backward / n - backward_kinds);
  std::printf("      clipping %.2f ms, optimizer %.2f ms, zero_grad %.2f ms (threads' sync in these three: %.2f ms)\n",
              clip / n, update / n, zero / n,
              ms(in_step, Work::sync) - ms(in_forward, Work::sync) - ms(in_backward, Work::sync));
  static bool sync_explained = false;  // the first breakdown of a run says what "threads' sync" is
  if (!std::exchange(sync_explained, true))
    std::printf("      (threads' sync: ladder's parallel loops starting the other thread and waiting for it at their\n"
                "       end, the attention's loops included; the waits inside one OpenBLAS call count in GEMM)\n");
}

void report(const std::string& name, double ours_ms, double ref_ms, const std::string& note) {
  if (ref_ms > 0)
    std::printf("%-34s ours_ms=%.4f ref_ms=%.4f ratio=%.3f  %s\n", name.c_str(), ours_ms, ref_ms, ours_ms / ref_ms,
                note.c_str());
  else
    std::printf("%-34s ours_ms=%.4f ref_ms=n/a ratio=n/a  %s\n", name.c_str(), ours_ms, note.c_str());
  std::fflush(stdout);
}

}  // namespace ladder::bench
