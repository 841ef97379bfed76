#include "core/kernels/parallel.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

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
  bool adapt = true;
  int running = blocks;
  int free_readings = 0;  // consecutive looks that found more free cores than threads running
  std::chrono::steady_clock::time_point next_look{};
};

ThreadState& state() {
  static ThreadState s;
  return s;
}

void run_threads(int threads) {  // OpenBLAS follows omp_get_max_threads(), but only from > 1
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

// Threads of this process that are running now (state R in /proc/self/task/*/stat), this one
// included: an OpenMP worker still spinning after a parallel region is one of ours, not a busy core.
int own_running_threads() {
  int running = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    FILE* file = std::fopen((task.path() / "stat").c_str(), "r");
    if (!file) continue;
    char state = 0;
    // "pid (name) S ...": the state follows the name's closing parenthesis
    if (std::fscanf(file, "%*d (%*[^)]) %c", &state) == 1 && state == 'R') ++running;
    std::fclose(file);
  }
  return std::max(running, 1);
}

// Tasks of other programs that are running or ready to run on the machine: the fourth field of
// /proc/loadavg counts every one of them now ("3/181"), ours too. -1 when it cannot be read.
int other_runnable_tasks() {
  FILE* file = std::fopen("/proc/loadavg", "r");
  if (!file) return -1;
  int runnable = 0;
  const bool read = std::fscanf(file, "%*f %*f %*f %d", &runnable) == 1;
  std::fclose(file);
  return read ? std::max(0, runnable - own_running_threads()) : -1;
}

}  // namespace

int num_threads() { return state().blocks; }

void set_num_threads(int threads, bool adapt_to_load) {
  if (threads < 1) fail("set_num_threads", "needs at least 1 thread, got ", threads);
  ThreadState& s = state();
  s.blocks = s.running = threads;
  s.adapt = adapt_to_load;
  s.free_readings = 0;
  s.next_look = {};
  run_threads(threads);
}

int running_threads() {
  ThreadState& s = state();
  if (omp_in_parallel()) return 1;
  if (!s.adapt) return s.running;
  const auto now = std::chrono::steady_clock::now();
  if (now < s.next_look) return s.running;
  s.next_look = now + std::chrono::milliseconds(100);
  const int others = other_runnable_tasks();
  if (others < 0) return s.running;
  const int free_cores = std::max(1, omp_get_num_procs() - others);
  const int wanted = std::min(s.blocks, free_cores);
  // Fewer threads at once when a core is taken; more only after two looks agree, so that a
  // program that runs for an instant does not make the count flicker.
  s.free_readings = wanted > s.running ? s.free_readings + 1 : 0;
  if (wanted < s.running || s.free_readings >= 2) {
    s.running = wanted;
    s.free_readings = 0;
    run_threads(wanted);
  }
  return s.running;
}

std::string blas_config() {
  const int model = openblas_get_parallel();  // 0 sequential, 1 pthreads, 2 OpenMP
  const char* threading = model == 2 ? "OpenMP" : model == 1 ? "pthreads" : "sequential";
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  const std::string waiting = wait || spin ? cat("OMP_WAIT_POLICY ", wait ? wait : "(unset)", ", GOMP_SPINCOUNT ",
                                                 spin ? spin : "(unset)")
                                           : cat("GOMP_SPINCOUNT ", kDefaultSpinCount, " (ladder's default)");
  return cat(openblas_get_config(), " | core ", openblas_get_corename(), " | threading ", threading,
             " | BLAS threads ", openblas_get_num_threads(), " | OpenMP threads ", omp_get_max_threads(),
             " | ladder threads ", num_threads(), state().adapt ? " (fewer while cores are busy)" : " (fixed)",
             " | ", waiting);
}

}  // namespace ladder
