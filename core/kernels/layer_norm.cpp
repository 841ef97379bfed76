#include "core/kernels/layer_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/parallel.h"

namespace ladder {

void layer_norm_rows(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                     float* rstd, int64_t rows, int64_t cols, float eps) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < cols; ++j) s += xr[j];
      const float mu = s / static_cast<float>(cols);
      float ss = 0;  // the second pass on centred values avoids the cancellation of E[x^2] - E[x]^2
#pragma omp simd reduction(+ : ss)
      for (int64_t j = 0; j < cols; ++j) ss += (xr[j] - mu) * (xr[j] - mu);
      const float rs = 1.0f / std::sqrt(ss / static_cast<float>(cols) + eps);
      mean[r] = mu;
      rstd[r] = rs;
      if (gamma && beta) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - mu) * rs * gamma[j] + beta[j];
      } else if (gamma) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - mu) * rs * gamma[j];
      } else {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - mu) * rs + (beta ? beta[j] : 0.0f);
      }
    }
  });
}

void layer_norm_backward_rows(const float* x, const float* gamma, const float* mean, const float* rstd,
                              const float* gy, float* gx, float* ggamma, float* gbeta, int64_t rows,
                              int64_t cols) {
  // Each block sums ggamma and gbeta over its own rows; the partial sums are added in block
  // order afterwards, so the result does not depend on timing.
  const int blocks = parallel_blocks(rows, cols);
  std::vector<float> partial(static_cast<size_t>(blocks) * 2 * cols, 0.0f);
  parallel_for_blocks(rows, cols, [&](int64_t begin, int64_t end, int block) {
    float* pg = partial.data() + static_cast<size_t>(block) * 2 * cols;
    float* pb = pg + cols;
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * cols;
      const float* gr = gy + r * cols;
      float* out = gx + r * cols;
      const float mu = mean[r], rs = rstd[r];
      float sum_g = 0, sum_gx = 0;
#pragma omp simd reduction(+ : sum_g, sum_gx)
      for (int64_t j = 0; j < cols; ++j) {
        const float xhat = (xr[j] - mu) * rs;
        const float g = gamma ? gr[j] * gamma[j] : gr[j];
        sum_g += g;
        sum_gx += g * xhat;
        pg[j] += gr[j] * xhat;
        pb[j] += gr[j];
      }
      const float inv_n = 1.0f / static_cast<float>(cols);
      const float mean_g = sum_g * inv_n, mean_gx = sum_gx * inv_n;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) {
        const float xhat = (xr[j] - mu) * rs;
        const float g = gamma ? gr[j] * gamma[j] : gr[j];
        out[j] = rs * (g - mean_g - xhat * mean_gx);
      }
    }
  });
  if (ggamma) std::fill_n(ggamma, cols, 0.0f);
  if (gbeta) std::fill_n(gbeta, cols, 0.0f);
  for (int b = 0; b < blocks; ++b) {
    const float* pg = partial.data() + static_cast<size_t>(b) * 2 * cols;
    for (int64_t j = 0; j < cols; ++j) {
      if (ggamma) ggamma[j] += pg[j];
      if (gbeta) gbeta[j] += pg[cols + j];
    }
  }
}

void layer_norm_rows_naive(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                           float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double mu = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j) mu += xr[j];
    mu /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    var /= static_cast<double>(cols);
    const double rs = 1.0 / std::sqrt(var + eps);
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(rs);
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = static_cast<float>((xr[j] - mu) * rs * (gamma ? gamma[j] : 1.0) + (beta ? beta[j] : 0.0));
  }
}

void layer_norm_backward_rows_naive(const float* x, const float* gamma, const float* mean,
                                    const float* rstd, const float* gy, float* gx, float* ggamma,
                                    float* gbeta, int64_t rows, int64_t cols) {
  std::vector<double> sum_gamma(cols, 0.0), sum_beta(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double mean_g = 0, mean_gx = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const double xhat = (x[r * cols + j] - mean[r]) * static_cast<double>(rstd[r]);
      const double g = gy[r * cols + j] * (gamma ? gamma[j] : 1.0);
      mean_g += g / static_cast<double>(cols);
      mean_gx += g * xhat / static_cast<double>(cols);
      sum_gamma[j] += gy[r * cols + j] * xhat;
      sum_beta[j] += gy[r * cols + j];
    }
    for (int64_t j = 0; j < cols; ++j) {
      const double xhat = (x[r * cols + j] - mean[r]) * static_cast<double>(rstd[r]);
      const double g = gy[r * cols + j] * (gamma ? gamma[j] : 1.0);
      gx[r * cols + j] = static_cast<float>(rstd[r] * (g - mean_g - xhat * mean_gx));
    }
  }
  for (int64_t j = 0; j < cols; ++j) {
    if (ggamma) ggamma[j] = static_cast<float>(sum_gamma[j]);
    if (gbeta) gbeta[j] = static_cast<float>(sum_beta[j]);
  }
}

}  // namespace ladder
