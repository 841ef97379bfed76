// Nearest codes through a GEMM per block of keys, and the per-code sums (see vector_quantize.h).
#include "core/kernels/vector_quantize.h"

#include <algorithm>
#include <vector>

#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"

namespace ladder {

namespace {

// The index of the smallest of row[0, n), the first of equal minima: the minimum first, then where
// it is (two passes that vectorise, where one compare-and-keep pass does not). A row of NaN gives 0.
int64_t first_minimum(const float* row, int64_t n) {
  float least = row[0];
#pragma omp simd reduction(min : least)
  for (int64_t s = 0; s < n; ++s) least = least < row[s] ? least : row[s];
  int64_t at = 0;
  while (at < n && row[at] != least) ++at;
  return at < n ? at : 0;
}

}  // namespace

void nearest_code(const NearestCodeProblem& p, const float* keys, const float* codes, int64_t* index,
                  float* distance) {
  const int64_t H = p.heads, T = p.length, S = p.codes, d = p.width, R = p.rows;
  if (p.batch * T == 0) return;
  std::vector<float> code_norms(static_cast<size_t>(H * S));  // |c|^2, (H,S)
  for (int64_t i = 0; i < H * S; ++i) {
    const float* c = codes + i * d;
    float norm = 0;
#pragma omp simd reduction(+ : norm)
    for (int64_t j = 0; j < d; ++j) norm += c[j] * c[j];
    code_norms[static_cast<size_t>(i)] = norm;
  }
  // A work item is R rows of one (b,h) sequence: items per sequence, times B*H sequences.
  const int64_t blocks_per_sequence = (T + R - 1) / R;
  parallel_for(p.batch * H * blocks_per_sequence, std::min(R, T) * S * d, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(R * S));  // (rows,S): |c|^2 - 2 k.c
    for (int64_t item = begin; item < end; ++item) {
      const int64_t sequence = item / blocks_per_sequence, h = sequence % H;
      const int64_t t0 = item % blocks_per_sequence * R, n = std::min(R, T - t0);
      const float* k = keys + (sequence * T + t0) * d;
      const float* c_norm = code_norms.data() + h * S;
      for (int64_t i = 0; i < n; ++i) std::copy(c_norm, c_norm + S, scores.data() + i * S);
      gemm(false, true, n, S, d, -2.0f, k, d, codes + h * S * d, d, 1.0f, scores.data(), S);
      for (int64_t i = 0; i < n; ++i) {
        const float* row = scores.data() + i * S;
        const int64_t best = first_minimum(row, S);
        float key_norm = 0;
#pragma omp simd reduction(+ : key_norm)
        for (int64_t j = 0; j < d; ++j) key_norm += k[i * d + j] * k[i * d + j];
        index[sequence * T + t0 + i] = best;
        distance[sequence * T + t0 + i] = std::max(0.0f, key_norm + row[best]);
      }
    }
  });
}

void nearest_code_naive(const NearestCodeProblem& p, const float* keys, const float* codes, int64_t* index,
                        float* distance) {
  const int64_t H = p.heads, T = p.length, S = p.codes, d = p.width;
  for (int64_t key = 0; key < p.batch * H * T; ++key) {
    const float* k = keys + key * d;
    const float* head_codes = codes + key / T % H * S * d;
    double best_distance = 0;
    int64_t best = -1;
    for (int64_t s = 0; s < S; ++s) {
      double squared = 0;
      for (int64_t j = 0; j < d; ++j) {
        const double diff = double(k[j]) - head_codes[s * d + j];
        squared += diff * diff;
      }
      if (best < 0 || squared < best_distance) {
        best = s;
        best_distance = squared;
      }
    }
    index[key] = best;
    distance[key] = static_cast<float>(best_distance);
  }
}

void sum_keys_by_code(const NearestCodeProblem& p, const float* keys, const int64_t* index, double* count,
                      double* sum) {
  const int64_t H = p.heads, T = p.length, S = p.codes, d = p.width;
  for (int64_t key = 0; key < p.batch * H * T; ++key) {
    if (index[key] < 0) continue;  // padding
    const int64_t slot = key / T % H * S + index[key];  // (h, s)
    count[slot] += 1;
    for (int64_t j = 0; j < d; ++j) sum[slot * d + j] += keys[key * d + j];
  }
}

}  // namespace ladder
