// Softmax and log-softmax over the rows of a (rows, cols) buffer, forward and backward.
#pragma once

#include <cstdint>

namespace ladder {

// y (rows,cols) = softmax of each row of x: exp(x - max) / sum(exp(x - max)).
void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols);
// y = x - max - log(sum(exp(x - max))), per row.
void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t cols);
// From the softmax output y: gx = y * (gy - sum(gy * y)), per row.
void softmax_backward_rows(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols);
// From the log-softmax output y: gx = gy - exp(y) * sum(gy), per row.
void log_softmax_backward_rows(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols);

// Naive twins: std::exp and double sums, one row at a time. Tested to agree with the fast ones.
void softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols);
void log_softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols);
void softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols);
void log_softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows,
                                     int64_t cols);

}  // namespace ladder
