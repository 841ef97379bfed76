#include "core/kernels/reduce.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/fast_math.h"

namespace ladder {

namespace {

// The value a slice of logsumexp is shifted by: its largest value, or 0 when that is infinite
// (all -inf: nothing to shift by; +inf: the result is +inf either way).
float finite_shift(float largest) { return std::isinf(largest) ? 0.0f : largest; }

// Reducing n contiguous values into one accumulator would make every step wait for the one before
// (a vector add takes 4 cycles). row_sum and row_max keep kPartials partial results instead (two
// independent vector registers), and combine them pairwise at the end: 4 steps, not 16. (32
// partials were slower on rows of 128: combining them costs more than the wider loop gains.)
constexpr int64_t kPartials = 16;

template <class T, class Op>
T combine_partials(T* partial, Op op) {
  for (int64_t width = kPartials / 2; width >= 1; width /= 2)
#pragma omp simd
    for (int64_t u = 0; u < width; ++u) partial[u] = op(partial[u], partial[u + width]);
  return partial[0];
}

// Sums are kept in float over chunks of kChunk values and added up in double chunk by chunk:
// float adds run twice as many lanes per instruction as double ones, and a float partial sum of
// at most kChunk values keeps its rounding error small (the naive twin sums all in double).
constexpr int64_t kChunk = 1024;

// The sum of n contiguous values.
double row_sum(const float* row, int64_t n) {
  double total = 0;
  for (int64_t c = 0; c < n; c += kChunk) {
    const float* chunk = row + c;
    const int64_t length = std::min(kChunk, n - c);
    float partial[kPartials] = {};
    int64_t k = 0;
    for (; k + kPartials <= length; k += kPartials)
#pragma omp simd
      for (int64_t u = 0; u < kPartials; ++u) partial[u] += chunk[k + u];
    for (int64_t u = 0; k + u < length; ++u) partial[u] += chunk[k + u];
    total += combine_partials(partial, [](float x, float y) { return x + y; });
  }
  return total;
}

// The larger of m and v, or NaN if either is: once m is NaN neither test holds, so a NaN sticks.
inline float max_or_nan(float m, float v) { return v > m || v != v ? v : m; }

// The largest of sign * row[k] over n contiguous values; NaN if any is NaN. The partial maxima
// use a plain comparison (which skips NaN); a count of NaNs, kept beside them, decides at the end.
// (Testing for NaN inside the maximum itself lengthens each step's dependency: 1.5x slower.)
float row_max(const float* row, int64_t n, float sign) {
  float partial[kPartials], nans[kPartials] = {};
  std::fill_n(partial, kPartials, -INFINITY);
  int64_t k = 0;
  for (; k + kPartials <= n; k += kPartials)
#pragma omp simd
    for (int64_t u = 0; u < kPartials; ++u) {
      const float v = sign * row[k + u];
      partial[u] = v > partial[u] ? v : partial[u];
      nans[u] += v != v ? 1.0f : 0.0f;
    }
  for (int64_t u = 0; k + u < n; ++u) {
    const float v = sign * row[k + u];
    partial[u] = v > partial[u] ? v : partial[u];
    nans[u] += v != v ? 1.0f : 0.0f;
  }
  if (combine_partials(nans, [](float x, float y) { return x + y; }) > 0) return NAN;
  return combine_partials(partial, [](float x, float y) { return x > y ? x : y; });
}

// One long sum (outer = inner = 1): per-thread partial sums, added in block order so that the
// result does not depend on timing.
float long_sum(const float* x, int64_t n) {
  std::vector<double> partial(parallel_blocks(n, 1), 0.0);
  parallel_for_blocks(n, 1, [&](int64_t begin, int64_t end, int block) { partial[block] = row_sum(x + begin, end - begin); });
  double s = 0;
  for (double p : partial) s += p;
  return static_cast<float>(s);
}

}  // namespace

void sum_reduce(const float* x, float* out, const ReduceShape& s) {
  if (s.inner == 1 && s.outer == 1) {
    out[0] = long_sum(x, s.n);
  } else if (s.inner == 1) {  // x (outer, n): one contiguous row per output
    parallel_for(s.outer, s.n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = static_cast<float>(row_sum(x + o * s.n, s.n));
    });
  } else {
    for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
      double total[kColumnBlock] = {};
      for (int64_t c = 0; c < s.n; c += kChunk) {  // chunks of rows, summed in float (see row_sum)
        float acc[kColumnBlock] = {};
        for (int64_t k = c; k < std::min(s.n, c + kChunk); ++k) {
          const float* row = x + (o * s.n + k) * s.inner + j0;
#pragma omp simd
          for (int64_t j = 0; j < j1 - j0; ++j) acc[j] += row[j];
        }
        for (int64_t j = 0; j < j1 - j0; ++j) total[j] += acc[j];
      }
      for (int64_t j = 0; j < j1 - j0; ++j) out[o * s.inner + j0 + j] = static_cast<float>(total[j]);
    });
  }
}

// The smallest value is minus the largest of -x (negation is exact), so one loop serves both.
void extreme_reduce(const float* x, float* out, const ReduceShape& s, bool largest) {
  const float sign = largest ? 1.0f : -1.0f;
  if (s.inner == 1) {
    parallel_for(s.outer, s.n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = sign * row_max(x + o * s.n, s.n, sign);
    });
    return;
  }
  for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
    float m[kColumnBlock];
    std::fill_n(m, j1 - j0, -INFINITY);
    for (int64_t k = 0; k < s.n; ++k) {
      const float* row = x + (o * s.n + k) * s.inner + j0;
#pragma omp simd
      for (int64_t j = 0; j < j1 - j0; ++j) m[j] = max_or_nan(m[j], sign * row[j]);
    }
    for (int64_t j = 0; j < j1 - j0; ++j) out[o * s.inner + j0 + j] = sign * m[j];
  });
}

void extreme_backward(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s) {
  if (s.inner == 1) {
    parallel_for(s.outer, 2 * s.n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const float* row = x + o * s.n;
        float* g = gx + o * s.n;
        const float best = y[o];
        if (best != best) {
          std::fill_n(g, s.n, NAN);
          continue;
        }
        int64_t ties = 0;
#pragma omp simd reduction(+ : ties)
        for (int64_t k = 0; k < s.n; ++k) ties += row[k] == best;
        const float share = gy[o] / static_cast<float>(ties);
#pragma omp simd
        for (int64_t k = 0; k < s.n; ++k) g[k] = row[k] == best ? share : 0.0f;
      }
    });
    return;
  }
  for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
    const float* best = y + o * s.inner + j0;
    float share[kColumnBlock] = {};  // first the count of ties, then gy divided by it
    for (int64_t k = 0; k < s.n; ++k) {
      const float* row = x + (o * s.n + k) * s.inner + j0;
#pragma omp simd
      for (int64_t j = 0; j < j1 - j0; ++j) share[j] += row[j] == best[j] ? 1.0f : 0.0f;
    }
    for (int64_t j = 0; j < j1 - j0; ++j)
      share[j] = best[j] != best[j] ? NAN : gy[o * s.inner + j0 + j] / share[j];
    for (int64_t k = 0; k < s.n; ++k) {
      const float* row = x + (o * s.n + k) * s.inner + j0;
      float* g = gx + (o * s.n + k) * s.inner + j0;
#pragma omp simd
      for (int64_t j = 0; j < j1 - j0; ++j) g[j] = row[j] == best[j] || best[j] != best[j] ? share[j] : 0.0f;
    }
  });
}

void logsumexp_reduce(const float* x, float* out, const ReduceShape& s) {
  if (s.inner == 1) {
    parallel_for(s.outer, s.n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const float* row = x + o * s.n;
        const float shift = finite_shift(row_max(row, s.n, 1.0f));
        // The exps of a chunk go to a buffer and are summed by row_sum, so that a long row keeps
        // row_sum's accuracy. A NaN in the row (and so in shift) makes the total NaN.
        float e[kChunk];
        double total = 0;
        for (int64_t c = 0; c < s.n; c += kChunk) {
          const int64_t length = std::min(kChunk, s.n - c);
#pragma omp simd
          for (int64_t k = 0; k < length; ++k) e[k] = fast_exp(row[c + k] - shift);
          total += row_sum(e, length);
        }
        out[o] = shift + static_cast<float>(std::log(total));
      }
    });
    return;
  }
  for_column_blocks(s, [&](int64_t o, int64_t j0, int64_t j1) {
    float shift[kColumnBlock];
    double total[kColumnBlock] = {};  // n values added one after the other: double keeps the error small
    std::fill_n(shift, j1 - j0, -INFINITY);
    for (int64_t k = 0; k < s.n; ++k) {
      const float* row = x + (o * s.n + k) * s.inner + j0;
#pragma omp simd
      for (int64_t j = 0; j < j1 - j0; ++j) shift[j] = row[j] > shift[j] ? row[j] : shift[j];
    }
    for (int64_t j = 0; j < j1 - j0; ++j) shift[j] = finite_shift(shift[j]);
    float e[kColumnBlock];
    for (int64_t k = 0; k < s.n; ++k) {
      const float* row = x + (o * s.n + k) * s.inner + j0;
      // Two loops: GCC does not vectorise fast_exp's branches in a loop that also converts to double.
#pragma omp simd
      for (int64_t j = 0; j < j1 - j0; ++j) e[j] = fast_exp(row[j] - shift[j]);
#pragma omp simd
      for (int64_t j = 0; j < j1 - j0; ++j) total[j] += e[j];
    }
    for (int64_t j = 0; j < j1 - j0; ++j)
      out[o * s.inner + j0 + j] = shift[j] + static_cast<float>(std::log(total[j]));
  });
}

void logsumexp_backward(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s) {
  if (s.inner == 1) {
    parallel_for(s.outer, s.n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const float* row = x + o * s.n;
        float* g = gx + o * s.n;
        const float lse = y[o], scale = gy[o];
        if (lse == -INFINITY) {
          std::fill_n(g, s.n, 0.0f);
          continue;
        }
#pragma omp simd
        for (int64_t k = 0; k < s.n; ++k) g[k] = scale * fast_exp(row[k] - lse);
      }
    });
    return;
  }
  // One line (o, k) of inner values at a time, against the outputs of row o.
  parallel_for(s.outer * s.n, s.inner, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const float* row = x + line * s.inner;
      const float* lse = y + (line / s.n) * s.inner;
      const float* scale = gy + (line / s.n) * s.inner;
      float* g = gx + line * s.inner;
#pragma omp simd
      for (int64_t j = 0; j < s.inner; ++j)
        g[j] = lse[j] == -INFINITY ? 0.0f : scale[j] * fast_exp(row[j] - lse[j]);
    }
  });
}

// ---- naive twins ----

namespace {

// Calls body(o, j, at) for every output, with at(k) the position of its k-th input.
template <class Body>
void for_each_output(const ReduceShape& s, const Body& body) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.inner; ++j)
      body(o * s.inner + j, [&](int64_t k) { return (o * s.n + k) * s.inner + j; });
}

}  // namespace

void sum_reduce_naive(const float* x, float* out, const ReduceShape& s) {
  for_each_output(s, [&](int64_t i, auto at) {
    double acc = 0;
    for (int64_t k = 0; k < s.n; ++k) acc += x[at(k)];
    out[i] = static_cast<float>(acc);
  });
}

void extreme_reduce_naive(const float* x, float* out, const ReduceShape& s, bool largest) {
  for_each_output(s, [&](int64_t i, auto at) {
    float best = largest ? -INFINITY : INFINITY;
    for (int64_t k = 0; k < s.n; ++k) {
      const float v = x[at(k)];
      if (std::isnan(v)) {
        best = v;
        break;
      }
      if (largest ? v > best : v < best) best = v;
    }
    out[i] = best;
  });
}

void extreme_backward_naive(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s) {
  for_each_output(s, [&](int64_t i, auto at) {
    int64_t ties = 0;
    for (int64_t k = 0; k < s.n; ++k) ties += x[at(k)] == y[i];
    for (int64_t k = 0; k < s.n; ++k)
      gx[at(k)] = std::isnan(y[i]) ? NAN : x[at(k)] == y[i] ? gy[i] / static_cast<float>(ties) : 0.0f;
  });
}

void logsumexp_reduce_naive(const float* x, float* out, const ReduceShape& s) {
  for_each_output(s, [&](int64_t i, auto at) {
    float m = -INFINITY;
    for (int64_t k = 0; k < s.n; ++k) m = std::fmax(m, x[at(k)]);
    const double shift = finite_shift(m);
    double total = 0;
    for (int64_t k = 0; k < s.n; ++k) total += std::exp(x[at(k)] - shift);
    out[i] = static_cast<float>(shift + std::log(total));
  });
}

void logsumexp_backward_naive(const float* x, const float* y, const float* gy, float* gx, const ReduceShape& s) {
  for_each_output(s, [&](int64_t i, auto at) {
    for (int64_t k = 0; k < s.n; ++k)
      gx[at(k)] = y[i] == -INFINITY ? 0.0f : static_cast<float>(gy[i] * std::exp(static_cast<double>(x[at(k)]) - y[i]));
  });
}

}  // namespace ladder
