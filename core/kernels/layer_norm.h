// Layer normalisation over the rows of a (rows, cols) buffer, forward and backward.
#pragma once

#include <cstdint>

namespace ladder {

// y = (x - mean) * rstd * gamma + beta per row, rstd = 1 / sqrt(var + eps) with the biased
// variance. gamma and beta (cols) may be null (no affine). mean and rstd (rows) are written
// for the backward pass.
void layer_norm_rows(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                     float* rstd, int64_t rows, int64_t cols, float eps);

// With xhat = (x - mean) * rstd and g = gy * gamma:
//   gx = rstd * (g - mean(g) - xhat * mean(g * xhat))        per row,
//   ggamma = sum over rows of gy * xhat, gbeta = sum over rows of gy.
// ggamma and gbeta (cols) are overwritten; pass null to skip them (gamma null: g = gy).
void layer_norm_backward_rows(const float* x, const float* gamma, const float* mean, const float* rstd,
                              const float* gy, float* gx, float* ggamma, float* gbeta, int64_t rows,
                              int64_t cols);

// Naive twins in double precision, one row at a time.
void layer_norm_rows_naive(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                           float* rstd, int64_t rows, int64_t cols, float eps);
void layer_norm_backward_rows_naive(const float* x, const float* gamma, const float* mean,
                                    const float* rstd, const float* gy, float* gx, float* ggamma,
                                    float* gbeta, int64_t rows, int64_t cols);

}  // namespace ladder
