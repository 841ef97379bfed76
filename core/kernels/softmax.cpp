#include "core/kernels/softmax.h"

#include <algorithm>
#include <cmath>

#include "core/kernels/fast_math.h"
#include "core/kernels/parallel.h"

namespace ladder {

float row_max(const float* x, int64_t n) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

float exp_shifted(const float* x, float shift, float* y, int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) {
    y[j] = fast_exp(x[j] - shift);
    s += y[j];
  }
  return s;
}

namespace {

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

// ---- over the middle dim of (outer, n, inner) ----
// Each (o, block of columns) pair starts at `at` = o * n * inner + j0; its k-th row of `width`
// values is at at + k * inner. The sums over n run in double: one accumulator per column adds up
// n values one after the other, and in float its error grows with n (1e-5 at n = 4096).

namespace {

// The first two passes of a softmax over one block of columns: m[j] = the largest value of
// column j, total[j] = the sum of exp(x - m[j]) over the column; each exp is also stored in y
// unless y is null.
void column_max_and_exp_sum(const float* x, float* y, int64_t at, int64_t width, const ReduceShape& s, float* m,
                            double* total) {
  std::fill_n(m, width, -INFINITY);
  std::fill_n(total, width, 0.0);
  for (int64_t k = 0; k < s.n; ++k) {
    const float* xk = x + at + k * s.inner;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) m[j] = xk[j] > m[j] ? xk[j] : m[j];
  }
  float scratch[kColumnBlock];
  for (int64_t k = 0; k < s.n; ++k) {
    const float* xk = x + at + k * s.inner;
    float* e = y ? y + at + k * s.inner : scratch;
    // Two loops: GCC does not vectorise fast_exp's branches in a loop that also converts to double.
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) e[j] = fast_exp(xk[j] - m[j]);
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) total[j] += e[j];
  }
}

}  // namespace

void softmax_dim(const float* x, float* y, const ReduceShape& s) {
  if (s.inner == 1) return softmax_rows(x, y, s.outer, s.n);
  for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t at = o * s.n * s.inner + j0, width = j1 - j0;
    float m[kColumnBlock], inv[kColumnBlock];
    double total[kColumnBlock];
    column_max_and_exp_sum(x, y, at, width, s, m, total);
    for (int64_t j = 0; j < width; ++j) inv[j] = static_cast<float>(1.0 / total[j]);
    for (int64_t k = 0; k < s.n; ++k) {
      float* yk = y + at + k * s.inner;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) yk[j] *= inv[j];
    }
  });
}

void log_softmax_dim(const float* x, float* y, const ReduceShape& s) {
  if (s.inner == 1) return log_softmax_rows(x, y, s.outer, s.n);
  for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t at = o * s.n * s.inner + j0, width = j1 - j0;
    float m[kColumnBlock];
    double total[kColumnBlock];
    column_max_and_exp_sum(x, nullptr, at, width, s, m, total);
    for (int64_t j = 0; j < width; ++j) m[j] += static_cast<float>(std::log(total[j]));  // the shift: max + log(sum)
    for (int64_t k = 0; k < s.n; ++k) {
      const float* xk = x + at + k * s.inner;
      float* yk = y + at + k * s.inner;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) yk[j] = xk[j] - m[j];
    }
  });
}

void softmax_backward_dim(const float* y, const float* gy, float* gx, const ReduceShape& s) {
  if (s.inner == 1) return softmax_backward_rows(y, gy, gx, s.outer, s.n);
  for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t at = o * s.n * s.inner + j0, width = j1 - j0;
    double dot[kColumnBlock] = {};
    for (int64_t k = 0; k < s.n; ++k) {
      const float *yk = y + at + k * s.inner, *gk = gy + at + k * s.inner;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) dot[j] += gk[j] * yk[j];
    }
    float d[kColumnBlock];
    for (int64_t j = 0; j < width; ++j) d[j] = static_cast<float>(dot[j]);
    for (int64_t k = 0; k < s.n; ++k) {
      const float *yk = y + at + k * s.inner, *gk = gy + at + k * s.inner;
      float* out = gx + at + k * s.inner;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) out[j] = yk[j] * (gk[j] - d[j]);
    }
  });
}

void log_softmax_backward_dim(const float* y, const float* gy, float* gx, const ReduceShape& s) {
  if (s.inner == 1) return log_softmax_backward_rows(y, gy, gx, s.outer, s.n);
  for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t at = o * s.n * s.inner + j0, width = j1 - j0;
    double total[kColumnBlock] = {};
    for (int64_t k = 0; k < s.n; ++k) {
      const float* gk = gy + at + k * s.inner;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) total[j] += gk[j];
    }
    float t[kColumnBlock];
    for (int64_t j = 0; j < width; ++j) t[j] = static_cast<float>(total[j]);
    for (int64_t k = 0; k < s.n; ++k) {
      const float *yk = y + at + k * s.inner, *gk = gy + at + k * s.inner;
      float* out = gx + at + k * s.inner;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) out[j] = gk[j] - fast_exp(yk[j]) * t[j];
    }
  });
}

// ---- naive twins ----
// Column (o, j) holds the n values at (o * n + k) * inner + j, k = 0..n-1.

namespace {

template <class Body>
void for_each_column(const ReduceShape& s, const Body& body) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.inner; ++j) body([&](int64_t k) { return (o * s.n + k) * s.inner + j; });
}

}  // namespace

void softmax_dim_naive(const float* x, float* y, const ReduceShape& s) {
  for_each_column(s, [&](auto at) {
    double m = -INFINITY, sum = 0;
    for (int64_t k = 0; k < s.n; ++k) m = std::fmax(m, x[at(k)]);
    for (int64_t k = 0; k < s.n; ++k) sum += std::exp(x[at(k)] - m);
    for (int64_t k = 0; k < s.n; ++k) y[at(k)] = static_cast<float>(std::exp(x[at(k)] - m) / sum);
  });
}

void log_softmax_dim_naive(const float* x, float* y, const ReduceShape& s) {
  for_each_column(s, [&](auto at) {
    double m = -INFINITY, sum = 0;
    for (int64_t k = 0; k < s.n; ++k) m = std::fmax(m, x[at(k)]);
    for (int64_t k = 0; k < s.n; ++k) sum += std::exp(x[at(k)] - m);
    for (int64_t k = 0; k < s.n; ++k) y[at(k)] = static_cast<float>(x[at(k)] - m - std::log(sum));
  });
}

void softmax_backward_dim_naive(const float* y, const float* gy, float* gx, const ReduceShape& s) {
  for_each_column(s, [&](auto at) {
    double dot = 0;
    for (int64_t k = 0; k < s.n; ++k) dot += static_cast<double>(gy[at(k)]) * y[at(k)];
    for (int64_t k = 0; k < s.n; ++k) gx[at(k)] = static_cast<float>(y[at(k)] * (gy[at(k)] - dot));
  });
}

void log_softmax_backward_dim_naive(const float* y, const float* gy, float* gx, const ReduceShape& s) {
  for_each_column(s, [&](auto at) {
    double sum = 0;
    for (int64_t k = 0; k < s.n; ++k) sum += gy[at(k)];
    for (int64_t k = 0; k < s.n; ++k) gx[at(k)] = static_cast<float>(gy[at(k)] - std::exp(y[at(k)]) * sum);
  });
}

void softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols) {
  softmax_dim_naive(x, y, {rows, cols, 1});
}

void log_softmax_rows_naive(const float* x, float* y, int64_t rows, int64_t cols) {
  log_softmax_dim_naive(x, y, {rows, cols, 1});
}

void softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols) {
  softmax_backward_dim_naive(y, gy, gx, {rows, cols, 1});
}

void log_softmax_backward_rows_naive(const float* y, const float* gy, float* gx, int64_t rows, int64_t cols) {
  log_softmax_backward_dim_naive(y, gy, gx, {rows, cols, 1});
}

}  // namespace ladder
