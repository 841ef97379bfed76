#include "core/kernels/rms_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/parallel.h"

namespace ladder {

void rms_norm_rows(const float* x, const float* gamma, float* y, float* rstd, int64_t rows, int64_t cols,
                   float eps) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      float ss = 0;
#pragma omp simd reduction(+ : ss)
      for (int64_t j = 0; j < cols; ++j) ss += xr[j] * xr[j];
      const float rs = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
      rstd[r] = rs;
      if (gamma) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] * rs * gamma[j];
      } else {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] * rs;
      }
    }
  });
}

void rms_norm_backward_rows(const float* x, const float* gamma, const float* rstd, const float* gy, float* gx,
                            float* ggamma, int64_t rows, int64_t cols) {
  // Each block sums ggamma over its own rows; the partial sums are added in block order
  // afterwards, so the result does not depend on timing.
  const int blocks = parallel_blocks(rows, cols);
  std::vector<float> partial(static_cast<size_t>(blocks) * cols, 0.0f);
  parallel_for_blocks(rows, cols, [&](int64_t begin, int64_t end, int block) {
    float* pg = partial.data() + static_cast<size_t>(block) * cols;
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * cols;
      const float* gr = gy + r * cols;
      float* out = gx + r * cols;
      const float rs = rstd[r];
      float sum_gx = 0;
#pragma omp simd reduction(+ : sum_gx)
      for (int64_t j = 0; j < cols; ++j) {
        const float xhat = xr[j] * rs;
        sum_gx += (gamma ? gr[j] * gamma[j] : gr[j]) * xhat;
        pg[j] += gr[j] * xhat;
      }
      const float mean_gx = sum_gx / static_cast<float>(cols);
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) {
        const float xhat = xr[j] * rs;
        out[j] = rs * ((gamma ? gr[j] * gamma[j] : gr[j]) - xhat * mean_gx);
      }
    }
  });
  if (!ggamma) return;
  std::fill_n(ggamma, cols, 0.0f);
  for (int b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < cols; ++j) ggamma[j] += partial[static_cast<size_t>(b) * cols + j];
}

void rms_norm_rows_naive(const float* x, const float* gamma, float* y, float* rstd, int64_t rows, int64_t cols,
                         float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double ss = 0;
    for (int64_t j = 0; j < cols; ++j) ss += static_cast<double>(xr[j]) * xr[j];
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
    rstd[r] = static_cast<float>(rs);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = static_cast<float>(xr[j] * rs * (gamma ? gamma[j] : 1.0));
  }
}

void rms_norm_backward_rows_naive(const float* x, const float* gamma, const float* rstd, const float* gy,
                                  float* gx, float* ggamma, int64_t rows, int64_t cols) {
  std::vector<double> sum_gamma(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double mean_gx = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const double xhat = x[r * cols + j] * static_cast<double>(rstd[r]);
      mean_gx += gy[r * cols + j] * (gamma ? gamma[j] : 1.0) * xhat / static_cast<double>(cols);
      sum_gamma[j] += gy[r * cols + j] * xhat;
    }
    for (int64_t j = 0; j < cols; ++j) {
      const double xhat = x[r * cols + j] * static_cast<double>(rstd[r]);
      const double g = gy[r * cols + j] * (gamma ? gamma[j] : 1.0);
      gx[r * cols + j] = static_cast<float>(rstd[r] * (g - xhat * mean_gx));
    }
  }
  if (ggamma)
    for (int64_t j = 0; j < cols; ++j) ggamma[j] = static_cast<float>(sum_gamma[j]);
}

}  // namespace ladder
