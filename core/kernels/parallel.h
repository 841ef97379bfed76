// Threads: one OpenMP pool, shared by ladder's loops and by OpenBLAS (its OpenMP build), so the
// two never fight over the cores.
//
// Two numbers: num_threads() is how many blocks a big loop is cut into, and so decides the
// results (sums are added per block, in block order); running_threads() is how many threads run
// those blocks at once. They are equal unless the caller asks for fewer to run
// (set_running_threads): a lesson run does while other programs keep cores busy
// (harness/load_policy.h), with the same blocks and so the same results bit for bit in ladder's
// own loops (BLAS may round differently on fewer threads).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "core/observer.h"

namespace ladder {

int num_threads();
// Exactly this many blocks and threads from now on (a lesson's --threads N, tests, benchmarks).
void set_num_threads(int threads);
// Asks that only this many of the num_threads() threads run (clamped to 1..num_threads()), from
// the next parallel loop or BLAS call on: the main thread takes the count up there, because the
// OpenMP and BLAS thread counts belong to the thread that sets them. Callable from any thread.
void set_running_threads(int threads);
// How many threads run a parallel loop or a BLAS call now (1 inside a parallel region); takes up
// the count set_running_threads asked for.
int running_threads();
std::string blas_config();  // library, version, kernel, threading model and thread counts

// Below this much work (roughly: elements touched) waking a second thread costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 15;

// How long idle OpenMP threads spin before they sleep, unless the user set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT (the reason: core/kernels/parallel.cpp).
constexpr const char* kDefaultSpinCount = "10000";

// How many blocks the loops below split n items into: one per thread when the work is big
// enough, else one. The split depends only on n and num_threads(), so results are reproducible
// for a given thread count.
inline int parallel_blocks(int64_t n, int64_t work_per_item) {
  if (n < 2 || n * work_per_item < kMinParallelWork || omp_in_parallel()) return 1;
  return static_cast<int>(std::min<int64_t>(num_threads(), n));
}

// Runs body(begin, end, block) over [0, n) cut into parallel_blocks(n, work_per_item) contiguous
// blocks, numbered from 0 (use the number to index per-block partial results). The blocks are
// shared out among running_threads() threads.
template <class Body>
void parallel_for_blocks(int64_t n, int64_t work_per_item, const Body& body) {
  const int blocks = parallel_blocks(n, work_per_item);
  if (blocks == 1) {
    if (n > 0) body(int64_t{0}, n, 0);
    return;
  }
  const int threads = std::min(blocks, running_threads());
  // One thread: no parallel region. A region of one thread is not "in parallel" to OpenMP, so a
  // BLAS call inside the body would open a team of its own and start a new thread per call.
  if (threads == 1) {
    for (int b = 0; b < blocks; ++b) body(n * b / blocks, n * (b + 1) / blocks, b);
    return;
  }
  // An observer, when one is installed, learns when the main thread waits for the others.
  if (installed_observer) installed_observer->loop_starts();
  // An exception may not leave a parallel region (OpenMP would end the process): the first a
  // block throws is kept and thrown again here, on the calling thread, once every block is done.
  std::exception_ptr thrown;
#pragma omp parallel num_threads(threads)
  {
    const bool main_thread = omp_get_thread_num() == 0;
    if (main_thread && installed_observer) installed_observer->main_blocks_start();
    try {
      for (int b = omp_get_thread_num(); b < blocks; b += omp_get_num_threads())
        body(n * b / blocks, n * (b + 1) / blocks, b);
    } catch (...) {
#pragma omp critical(ladder_parallel_exception)
      if (!thrown) thrown = std::current_exception();
    }
    if (main_thread && installed_observer) installed_observer->main_blocks_end();
  }
  if (installed_observer) installed_observer->loop_ends();
  if (thrown) std::rethrow_exception(thrown);
}

// Runs body(begin, end) over [0, n), split as above.
template <class Body>
void parallel_for(int64_t n, int64_t work_per_item, const Body& body) {
  parallel_for_blocks(n, work_per_item, [&](int64_t begin, int64_t end, int) { body(begin, end); });
}

}  // namespace ladder
