// Vector quantisation on raw buffers: each key's nearest code, and the per-code statistics the
// EMA codebook learns from.
//
// One codebook per head, as in Transformer-VQ: the keys of head h are only ever compared with
// head h's S codes, so the distances of a (T,S) block come from one GEMM per head:
//   |k - c|^2 = |k|^2 - 2 k.c + |c|^2.
#pragma once

#include <cstdint>

namespace ladder {

// keys (B,H,T,d), codes (H,S,d); indices and distances (B,H,T). All contiguous.
struct NearestCodeProblem {
  int64_t batch = 1, heads = 1, length = 0, codes = 0, width = 0;
  int64_t rows = 128;  // keys per GEMM: the scratch is one (rows,S) block per thread
};

// index = argmin_s |k - c_s|^2, ties to the lowest s; distance = that minimum (clamped at 0:
// the expanded form can round a little below it). The threads share out blocks of rows.
void nearest_code(const NearestCodeProblem& p, const float* keys, const float* codes, int64_t* index,
                  float* distance);
// Naive twin: sum_j (k_j - c_j)^2 for every code, in double precision, ties to the lowest s.
void nearest_code_naive(const NearestCodeProblem& p, const float* keys, const float* codes, int64_t* index,
                        float* distance);

// Per head and code: count (H,S) += how many keys took the code, sum (H,S,d) += those keys, summed
// over the batch and positions. index (B,H,T) holds codes in [0, S), or -1 for a key to leave out
// (padding). Accumulates; zero first.
void sum_keys_by_code(const NearestCodeProblem& p, const float* keys, const int64_t* index, double* count,
                      double* sum);

}  // namespace ladder
