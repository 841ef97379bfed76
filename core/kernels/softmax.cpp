#include "core/kernels/softmax.h"

#include <cmath>

#include "core/kernels/fast_math.h"
#include "core/kernels/parallel.h"

namespace ladder {

namespace {

float row_max(const float* x, int64_t n) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

// Writes exp(x - shift) into y and returns its sum.
float exp_shifted(const float* x, float shift, float* y, int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) {
    y[j] = fast_exp(x[j] - shift);
    s += y[j];
  }
  return s;
}

float dot(const float* a, const float* b, int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) s += a[j] * b[j];
  return s;
}

}  // namespace

void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float m = row_max(xr, cols);
      // A row that is all -inf (fully masked) has no maximum to shift by; it becomes all NaN, as in PyTorch.
      const float inv = 1.0f / exp_shifted(xr, m, yr, cols);
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
    }
  });
}

void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float m = row_max(xr, cols);
      const float shift = m + std::log(exp_shifted(xr, m, yr, cols));  // yr is scratch here
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - shift;
    }
  });
}

void softmax_backward_rows(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* yr = y + r * cols;
      const float* gr = gy + r * cols;
      float* out = gx + r * cols;
      const float s = dot(gr, yr, cols);
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) out[j] = yr[j] * (gr[j] - s);
    }
  });
}

void log_softmax_backward_rows(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* yr = y + r * cols;
      const float* gr = gy + r * cols;
      float* out = gx + r * cols;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < cols; ++j) s += gr[j];
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) out[j] = gr[j] - fast_exp(yr[j]) * s;
    }
  });
}

void softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; ++j) m = std::fmax(m, xr[j]);
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(xr[j] - m);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = static_cast<float>(std::exp(xr[j] - m) / sum);
  }
}

void log_softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; ++j) m = std::fmax(m, xr[j]);
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(xr[j] - m);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = static_cast<float>(xr[j] - m - std::log(sum));
  }
}

void softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t j = 0; j < cols; ++j) s += static_cast<double>(gy[r * cols + j]) * y[r * cols + j];
    for (int64_t j = 0; j < cols; ++j)
      gx[r * cols + j] = static_cast<float>(y[r * cols + j] * (gy[r * cols + j] - s));
  }
}

void log_softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows,
                                     int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t j = 0; j < cols; ++j) s += gy[r * cols + j];
    for (int64_t j = 0; j < cols; ++j)
      gx[r * cols + j] = static_cast<float>(gy[r * cols + j] - std::exp(y[r * cols + j]) * s);
  }
}

}  // namespace ladder
