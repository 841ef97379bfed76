#include "core/kernels/parallel.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "core/error.h"

extern "C" {
// OpenBLAS extensions; not all of them are declared in every cblas.h.
char* openblas_get_config(void);
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);
void openblas_set_num_threads(int);
}

namespace ladder {

namespace {

// OpenMP threads that wait for work spin on a core before they sleep: libgomp's default is 300,000
// turns, a fraction of a millisecond. Beside a busy program that spinning takes the very core
// another thread is waiting for; sleeping at once (OMP_WAIT_POLICY=passive) costs a futex wake-up
// per parallel region instead, 20% of a CNN step with its many short loops on an idle machine. A
// short spin (GOMP_SPINCOUNT=10000, some microseconds) keeps the idle speed and is harmless under
// load (bench busy). libgomp reads these once, when it loads, before any constructor of ours
// runs, so the default is set from .preinit_array, which runs before the libraries' constructors.
// The user's setting of either variable wins. (The C library restores the original environment
// just before main, so getenv then shows the user's settings; libgomp has read ours by then.)
void short_spin_by_default(int, char**, char**) {
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT"))
    setenv("GOMP_SPINCOUNT", kDefaultSpinCount, /*overwrite=*/0);
}
[[gnu::section(".preinit_array"), gnu::used]] void (*const set_wait_policy)(int, char**, char**) =
    short_spin_by_default;

struct ThreadState {
  int blocks = omp_get_max_threads();  // num_threads(): OMP_NUM_THREADS, or every core
  int running = blocks;                // the count the OpenMP and BLAS thread counts are set to
  std::atomic<int> wanted = blocks;    // the count set_running_threads asked for
};

ThreadState& state() {
  static ThreadState s;
  return s;
}

void run_threads(int threads) {  // OpenBLAS follows omp_get_max_threads(), but only from > 1
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

}  // namespace

int num_threads() { return state().blocks; }

void set_num_threads(int threads) {
  if (threads < 1) fail("set_num_threads", "needs at least 1 thread, got ", threads);
  ThreadState& s = state();
  s.blocks = s.running = threads;
  s.wanted = threads;
  run_threads(threads);
}

void set_running_threads(int threads) { state().wanted.store(threads, std::memory_order_relaxed); }

int running_threads() {
  if (omp_in_parallel()) return 1;
  ThreadState& s = state();
  const int wanted = std::clamp(s.wanted.load(std::memory_order_relaxed), 1, s.blocks);
  if (wanted != s.running) {
    s.running = wanted;
    run_threads(wanted);
  }
  return s.running;
}

std::string blas_config() {
  const int running = running_threads();  // first takes up a count asked for since the last loop
  const int model = openblas_get_parallel();  // 0 sequential, 1 pthreads, 2 OpenMP
  const char* threading = model == 2 ? "OpenMP" : model == 1 ? "pthreads" : "sequential";
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  const std::string waiting = wait || spin ? cat("OMP_WAIT_POLICY ", wait ? wait : "(unset)", ", GOMP_SPINCOUNT ",
                                                 spin ? spin : "(unset)")
                                           : cat("GOMP_SPINCOUNT ", kDefaultSpinCount, " (ladder's default)");
  return cat(openblas_get_config(), " | core ", openblas_get_corename(), " | threading ", threading,
             " | BLAS threads ", openblas_get_num_threads(), " | OpenMP threads ", omp_get_max_threads(),
             " | ladder threads ", num_threads(), " (", running, " running now)",
             " | ", waiting);
}

}  // namespace ladder
