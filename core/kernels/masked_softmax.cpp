#include "core/kernels/masked_softmax.h"

#include <algorithm>
#include <cmath>

#include "core/kernels/fast_math.h"
#include "core/kernels/parallel.h"

namespace ladder {

void masked_softmax_rows(const float* x, const float* visible, const int64_t* mask_row, float* y, int64_t rows,
                         int64_t cols) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * cols;
      const float* vr = visible + mask_row[r] * cols;
      float* yr = y + r * cols;
      float m = -INFINITY;
#pragma omp simd reduction(max : m)
      for (int64_t j = 0; j < cols; ++j) m = vr[j] != 0 && xr[j] > m ? xr[j] : m;
      if (m == -INFINITY) {  // nothing to attend to: zeros, not the 0/0 = NaN of a plain softmax
        std::fill_n(yr, cols, 0.0f);
        continue;
      }
      float sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < cols; ++j) {
        yr[j] = vr[j] != 0 ? fast_exp(xr[j] - m) : 0.0f;
        sum += yr[j];
      }
      const float inv = 1.0f / sum;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
    }
  });
}

void masked_softmax_backward_rows(const float* y, const float* gy, const float* visible, const int64_t* mask_row,
                                  float* gx, int64_t rows, int64_t cols) {
  parallel_for(rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* yr = y + r * cols;
      const float* gr = gy + r * cols;
      const float* vr = visible + mask_row[r] * cols;
      float* out = gx + r * cols;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < cols; ++j) s += vr[j] != 0 ? gr[j] * yr[j] : 0.0f;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) out[j] = vr[j] != 0 ? yr[j] * (gr[j] - s) : 0.0f;
    }
  });
}

}  // namespace ladder
