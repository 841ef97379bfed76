// ladder_bench [core|all]: each workload in ladder and in its reference, side by side.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench/bench.h"
#include "core/error.h"
#include "core/kernels/parallel.h"

namespace ladder::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Calls per timed repeat so that one repeat lasts about 100 ms (timer resolution stops mattering).
int calls_per_repeat(const std::function<void()>& work) {
  for (int i = 0; i < 3; ++i) work();  // warm up: caches, allocator, thread pool
  const auto start = Clock::now();
  work();
  const double once = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return std::max(1, static_cast<int>(100.0 / std::max(once, 1e-3)));
}

double repeat_ms(const std::function<void()>& work, int calls) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) work();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / calls;
}

}  // namespace

double time_ms(const std::function<void()>& work) {
  const int calls = calls_per_repeat(work);
  double best = 1e300;
  for (int repeat = 0; repeat < 7; ++repeat) best = std::min(best, repeat_ms(work, calls));
  return best;
}

std::pair<double, double> time_side_by_side(const std::function<void()>& ours, const std::function<void()>& ref) {
  const int ours_calls = calls_per_repeat(ours), ref_calls = calls_per_repeat(ref);
  double best_ours = 1e300, best_ref = 1e300;
  for (int repeat = 0; repeat < 9; ++repeat) {  // alternate, so that drift in machine load hits both alike
    best_ours = std::min(best_ours, repeat_ms(ours, ours_calls));
    best_ref = std::min(best_ref, repeat_ms(ref, ref_calls));
  }
  return {best_ours, best_ref};
}

std::map<std::string, double> pytorch_reference(const std::string& script) {
  std::map<std::string, double> times;
  const std::string command = std::string("/usr/bin/python3 ") + LADDER_SOURCE_DIR + "/bench/pytorch/" + script + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return times;
  char line[512];
  while (fgets(line, sizeof line, pipe)) {
    char name[256];
    double ms;
    if (line[0] != '#' && std::sscanf(line, "%255s %lf", name, &ms) == 2) times[name] = ms;
    else std::printf("  [pytorch] %s", line);  // the script's remarks (versions, threads chosen) or errors
  }
  if (pclose(pipe) != 0 || times.empty())
    std::printf("  PyTorch reference unavailable: install Debian's python3-torch (./ladder setup --bench)\n");
  return times;
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

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  std::printf("BLAS: %s\n", ladder::blas_config().c_str());
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("OPENBLAS_CORETYPE=%s  OMP_NUM_THREADS=%s\n", coretype ? coretype : "(unset)",
              std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "(unset)");
  try {
    if (which != "core" && which != "cnn" && which != "rnn" && which != "all") {
      std::fprintf(stderr, "ladder_bench: unknown benchmark '%s'; available: core, cnn, rnn, all\n", which.c_str());
      return 2;
    }
    if (which == "core" || which == "all") ladder::bench::run_core();
    if (which == "cnn" || which == "all") ladder::bench::run_cnn();
    if (which == "rnn" || which == "all") ladder::bench::run_rnn();
  } catch (const ladder::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
