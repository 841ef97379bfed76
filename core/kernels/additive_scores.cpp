#include "core/kernels/additive_scores.h"

#include <algorithm>
#include <vector>

#include "core/kernels/fast_math.h"
#include "core/kernels/parallel.h"

namespace ladder {

void additive_scores_forward(const float* q, const float* k, const float* w, float* scores, float* features, int64_t N,
                             int64_t Q, int64_t S, int64_t H) {
  // Threads split the (n, i) query rows: each writes its own scores and features.
  parallel_for(N * Q, S * H, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / Q;
      const float* qr = q + row * H;
      for (int64_t j = 0; j < S; ++j) {
        const float* kr = k + (n * S + j) * H;
        float* t = features + (row * S + j) * H;
        float score = 0;
#pragma omp simd reduction(+ : score)
        for (int64_t h = 0; h < H; ++h) {
          t[h] = fast_tanh(qr[h] + kr[h]);
          score += w[h] * t[h];
        }
        scores[row * S + j] = score;
      }
    }
  });
}

void additive_scores_backward(const float* g, const float* features, const float* w, float* dq, float* dk, float* dw,
                              int64_t N, int64_t Q, int64_t S, int64_t H) {
  // Threads split the batch n: each owns its rows of dq and dk, and its partial dw (N,H), which
  // are added up in order of n afterwards, so the result does not depend on the threads.
  std::vector<float> dw_partial(N * H, 0.0f);
  parallel_for(N, Q * S * H, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      float *dkn = dk + n * S * H, *dwn = dw_partial.data() + n * H;
      std::fill_n(dkn, S * H, 0.0f);
      for (int64_t i = 0; i < Q; ++i) {
        const int64_t row = n * Q + i;
        float* dqr = dq + row * H;
        std::fill_n(dqr, H, 0.0f);
        for (int64_t j = 0; j < S; ++j) {
          const float gs = g[row * S + j];
          if (gs == 0) continue;
          const float* t = features + (row * S + j) * H;
          float* dkr = dkn + j * H;
#pragma omp simd
          for (int64_t h = 0; h < H; ++h) {
            const float d = gs * w[h] * (1 - t[h] * t[h]);
            dqr[h] += d;
            dkr[h] += d;
            dwn[h] += gs * t[h];
          }
        }
      }
    }
  });
  for (int64_t h = 0; h < H; ++h) {
    double total = 0;
    for (int64_t n = 0; n < N; ++n) total += dw_partial[n * H + h];
    dw[h] = static_cast<float>(total);
  }
}

}  // namespace ladder
