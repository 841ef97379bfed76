// Timing, side-by-side comparison and the result lines shared by every benchmark.
#include "bench/bench.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <tuple>

#include "bench/pytorch_process.h"
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

void report(const std::string& name, double ours_ms, double ref_ms, const std::string& note) {
  if (ref_ms > 0)
    std::printf("%-34s ours_ms=%.4f ref_ms=%.4f ratio=%.3f  %s\n", name.c_str(), ours_ms, ref_ms, ours_ms / ref_ms,
                note.c_str());
  else
    std::printf("%-34s ours_ms=%.4f ref_ms=n/a ratio=n/a  %s\n", name.c_str(), ours_ms, note.c_str());
  std::fflush(stdout);
}

}  // namespace ladder::bench
