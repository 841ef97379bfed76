// RMS normalisation over the rows of a (rows, cols) buffer, forward and backward: layer norm
// without the centring and the bias (Zhang & Sennrich 2019; used by LLaMA, Transformer-VQ, ...).
#pragma once

#include <cstdint>

namespace ladder {

// y = x * rstd * gamma per row, rstd = 1 / sqrt(mean(x^2) + eps). gamma (cols) may be null (no
// weight). rstd (rows) is written for the backward pass.
void rms_norm_rows(const float* x, const float* gamma, float* y, float* rstd, int64_t rows, int64_t cols,
                   float eps);

// With xhat = x * rstd and g = gy * gamma (gy when gamma is null):
//   gx = rstd * (g - xhat * mean(g * xhat))   per row,
//   ggamma = sum over rows of gy * xhat        (overwritten; pass null to skip).
void rms_norm_backward_rows(const float* x, const float* gamma, const float* rstd, const float* gy, float* gx,
                            float* ggamma, int64_t rows, int64_t cols);

// Naive twins in double precision, one row at a time.
void rms_norm_rows_naive(const float* x, const float* gamma, float* y, float* rstd, int64_t rows, int64_t cols,
                         float eps);
void rms_norm_backward_rows_naive(const float* x, const float* gamma, const float* rstd, const float* gy,
                                  float* gx, float* ggamma, int64_t rows, int64_t cols);

}  // namespace ladder
