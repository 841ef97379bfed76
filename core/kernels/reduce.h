// Reductions over the middle dim of a buffer seen as (outer, n, inner): x (outer, n, inner) ->
// out (outer, inner). Reducing the last dim of a (rows, cols) tensor is (rows, cols, 1); reducing
// dim 0 is (1, rows, cols).
//
// The fast kernels take one of two loops. inner == 1: each output is one contiguous row of n
// values, reduced with a vectorised loop along the row; threads split the rows. inner > 1: the n
// rows of inner values are combined elementwise into a block of accumulators, vectorised across
// the inner dim; threads split the (outer, block of inner columns) pairs.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/kernels/parallel.h"
#include "core/shape.h"

namespace ladder {

struct ReduceShape {
  int64_t outer = 1, n = 1, inner = 1;
};

// A tensor of `shape` seen as (outer, n, inner), reducing the n dims [first, last] (consecutive).
inline ReduceShape reduce_shape(const Shape& shape, int64_t first, int64_t last) {
  ReduceShape s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < first ? s.outer : d <= last ? s.n : s.inner) *= shape[d];
  return s;
}

// How many inner columns one block of accumulators covers (inner > 1 loops).
constexpr int64_t kColumnBlock = 64;

// Runs body(o, j0, j1) for every outer index o and block of inner columns [j0, j1), at most
// kColumnBlock wide, the pairs split over threads. Each pair reads n * (j1 - j0) values.
template <class Body>
void for_column_blocks(const ReduceShape& s, const Body& body) {
  const int64_t blocks = (s.inner + kColumnBlock - 1) / kColumnBlock;
  parallel_for(s.outer * blocks, s.n * std::min(s.inner, kColumnBlock), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t o = b / blocks, j0 = (b % blocks) * kColumnBlock;
      body(o, j0, std::min(s.inner, j0 + kColumnBlock));
    }
  });
}

// out = sum over n: float partial sums over chunks of 1024 values, added up in double.
void sum_reduce(const float* x, float* out, const ReduceShape& s);

// out = the largest (largest = true) or smallest value over n; NaN if any value is NaN (as in PyTorch).
void extreme_reduce(const float* x, float* out, const ReduceShape& s, bool largest);

// Backward of amax/amin, y = extreme_reduce(x): the gradient gy (outer, inner) is shared equally
// by the elements equal to y; the others get exactly 0. Where y is NaN every element of the slice
// gets NaN (as in PyTorch).  gx: (outer, n, inner).
void extreme_backward(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s);

// out = log(sum over n of exp(x)), computed as m + log(sum exp(x - m)) with m the largest value so
// that nothing overflows. A slice that is all -inf gives -inf; one holding +inf gives +inf.
void logsumexp_reduce(const float* x, float* out, const ReduceShape& s);

// Backward of logsumexp, y = logsumexp_reduce(x): gx = gy * exp(x - y) (the softmax of x times gy).
// A slice whose y is -inf (all -inf: fully masked) gets exactly 0, not the NaN of -inf - -inf.
void logsumexp_backward(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s);

// Naive twins: one output at a time, walking n with stride inner; std::exp and double sums.
void sum_reduce_naive(const float* x, float* out, const ReduceShape& s);
void extreme_reduce_naive(const float* x, float* out, const ReduceShape& s, bool largest);
void extreme_backward_naive(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s);
void logsumexp_reduce_naive(const float* x, float* out, const ReduceShape& s);
void logsumexp_backward_naive(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s);

}  // namespace ladder
