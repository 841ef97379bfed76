// Threads: one OpenMP pool, shared by ladder's loops and by OpenBLAS (its OpenMP build), so the
// two never fight over the cores.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace ladder {

int num_threads();
void set_num_threads(int threads);  // for ladder's loops and BLAS alike
std::string blas_config();         // library, version, kernel, threading model and thread count

// Below this much work (roughly: elements touched) waking a second thread costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 15;

// How many blocks the loops below split n items into: one per thread when the work is big
// enough, else one. The split depends only on n and the thread count, so results are
// reproducible for a given thread count.
inline int parallel_blocks(int64_t n, int64_t work_per_item) {
  if (n < 2 || n * work_per_item < kMinParallelWork || omp_in_parallel()) return 1;
  return static_cast<int>(std::min<int64_t>(omp_get_max_threads(), n));
}

// Runs body(begin, end, block) over [0, n) cut into parallel_blocks(n, work_per_item) contiguous
// blocks, numbered from 0 (use the number to index per-block partial results).
template <class Body>
void parallel_for_blocks(int64_t n, int64_t work_per_item, const Body& body) {
  const int blocks = parallel_blocks(n, work_per_item);
  if (blocks == 1) {
    if (n > 0) body(int64_t{0}, n, 0);
    return;
  }
#pragma omp parallel num_threads(blocks)
  for (int b = omp_get_thread_num(); b < blocks; b += omp_get_num_threads())
    body(n * b / blocks, n * (b + 1) / blocks, b);
}

// Runs body(begin, end) over [0, n), split as above.
template <class Body>
void parallel_for(int64_t n, int64_t work_per_item, const Body& body) {
  parallel_for_blocks(n, work_per_item, [&](int64_t begin, int64_t end, int) { body(begin, end); });
}

}  // namespace ladder
