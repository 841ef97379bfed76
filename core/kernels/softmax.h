// Softmax and log-softmax, forward and backward: over the rows of a (rows, cols) buffer (the
// last dim), or over the middle dim of a buffer seen as (outer, n, inner) (any other dim).
#pragma once

#include <cstdint>

#include "core/kernels/reduce.h"

namespace ladder {

// The two steps of a stable softmax row, for kernels that take softmaxes of their own rows
// (Transformer-VQ's): the largest of x[0, n) (-inf when n = 0), and y = exp(x - shift) (y may be
// x), returning the sum of y.
float row_max(const float* x, int64_t n);
float exp_shifted(const float* x, float shift, float* y, int64_t n);

// y (rows,cols) = softmax of each row of x: exp(x - max) / sum(exp(x - max)).
void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols);
// y = x - max - log(sum(exp(x - max))), per row.
void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t cols);
// From the softmax output y: gx = y * (gy - sum(gy * y)), per row.
void softmax_backward_rows(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols);
// From the log-softmax output y: gx = gy - exp(y) * sum(gy), per row.
void log_softmax_backward_rows(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols);

// The same four over the middle dim of (outer, n, inner): x, y, gy, gx (outer, n, inner). With
// inner == 1 they are the row kernels; else, for each outer index, the n rows of inner values are
// combined elementwise (a block of inner columns at a time, contiguous and vectorised) instead of
// walking each column with stride inner.
void softmax_dim(const float* x, float* y, const ReduceShape& s);
void log_softmax_dim(const float* x, float* y, const ReduceShape& s);
void softmax_backward_dim(const float* y, const float* gy, float* gx, const ReduceShape& s);
void log_softmax_backward_dim(const float* y, const float* gy, float* gx, const ReduceShape& s);

// Naive twins: std::exp and double sums, one column of n values at a time. Tested to agree with
// the fast ones. The *_rows_naive are the same with (outer, n, inner) = (rows, cols, 1).
void softmax_dim_naive(const float* x, float* y, const ReduceShape& s);
void log_softmax_dim_naive(const float* x, float* y, const ReduceShape& s);
void softmax_backward_dim_naive(const float* y, const float* gy, float* gx, const ReduceShape& s);
void log_softmax_backward_dim_naive(const float* y, const float* gy, float* gx, const ReduceShape& s);
void softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols);
void log_softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols);
void softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols);
void log_softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows,
                                     int64_t cols);

}  // namespace ladder
