// What the Transformer-VQ kernels share (core/kernels/vq_attention.cpp, the whole sequence;
// vq_attention_step.cpp, generation; vq_attention_naive.cpp, the twins): the per-code cache, the
// blocks and windows, one head's buffers, and the band of the position bias. Internal to the kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/kernels/vq_attention.h"

namespace ladder::vq {

// Adds (sign = 1) or takes out (sign = -1) n keys with codes[0, n) and values v (n, D) to the
// per-code counts (S) and value sums (S, D). A key with code -1 (hidden) is left out.
void fold_keys(int64_t n, int64_t D, const int64_t* codes, const float* v, int sign, int64_t* counts,
               double* sums);

// The keys outside the window of one head: what is carried (counts, sums) and what a block's row
// tiles read from it, prepared once per block.
struct CodeCache {
  int64_t S, D;
  std::vector<int64_t> counts;  // (S)
  std::vector<double> sums;     // (S, D)
  std::vector<float> bias;      // (S): log count_s, -inf for a code no key took
  std::vector<float> mean;      // (S, D): sum_s / count_s, 0 for an empty code
  std::vector<float> per_key;   // (S): 1 / count_s, 0 for an empty code
  bool empty = true;            // no code holds a key: the block reads nothing from the cache

  CodeCache(int64_t codes, int64_t dim)
      : S(codes), D(dim), counts(S, 0), sums(S * D, 0.0), bias(S), mean(S * D), per_key(S) {}

  void clear() {
    std::fill(counts.begin(), counts.end(), 0);
    std::fill(sums.begin(), sums.end(), 0.0);
  }
  void fold(int64_t n, const int64_t* codes, const float* v, int sign) {
    fold_keys(n, D, codes, v, sign, counts.data(), sums.data());
  }
  // What a query reads: bias = log count_s, mean = sum_s / count_s, per_key = 1 / count_s (-inf, 0
  // and 0 for an empty code), and whether every code is empty.
  void prepare();
};

// ---- blocks, windows and row tiles ----

inline int64_t block_count(const VQAttentionProblem& p) { return (p.length + p.block - 1) / p.block; }
// The positions [begin, end) of block n (n may be out of range: an empty or cut block).
inline int64_t block_begin(const VQAttentionProblem& p, int64_t n) {
  return std::clamp<int64_t>(n * p.block, 0, p.length);
}
inline int64_t block_end(const VQAttentionProblem& p, int64_t n) {
  return std::clamp<int64_t>((n + 1) * p.block, 0, p.length);
}

// The keys block n's queries read exactly: [begin, end). Causal: the block before and its own; the
// encoder form: the block before, its own and the one after.
struct Window {
  int64_t begin, end;
};
inline Window window_of(const VQAttentionProblem& p, int64_t n) {
  return {block_begin(p, n - 1), block_end(p, p.causal ? n : n + 1)};
}
// The widest window a row tile meets: the row stride of the window scores.
inline int64_t window_stride(const VQAttentionProblem& p) {
  return std::min(p.length, (p.causal ? 2 : 3) * std::min(p.block, p.length));
}

// Query rows i0 .. i0+rows-1 of one block, and the keys w0 .. w0+cols-1 they read exactly (causal:
// up to the tile's last row).
struct RowTile {
  int64_t i0, rows, w0, cols;
};

// Runs body(tile) for the row tiles of block n, kVQRowTile rows at a time.
template <class Body>
void for_each_row_tile(const VQAttentionProblem& p, int64_t n, const Body& body) {
  const int64_t begin = block_begin(p, n), end = block_end(p, n);
  const Window w = window_of(p, n);
  for (int64_t i0 = begin; i0 < end; i0 += kVQRowTile) {
    const int64_t rows = std::min(kVQRowTile, end - i0);
    body(RowTile{i0, rows, w.begin, (p.causal ? i0 + rows : w.end) - w.begin});
  }
}

// ---- one head ----

struct HeadData {
  const float *q, *khat, *v, *codebook;
  const int64_t* codes;
  const float *position_queries, *offsets;  // null without the position bias
};

inline HeadData head_data(const VQAttentionProblem& p, const VQAttentionInputs& in, int64_t bh) {
  const int64_t at = bh * p.length * p.dim, h = bh % p.heads;
  return {in.q + at,
          in.khat + at,
          in.v + at,
          in.codebook + h * p.codes * p.dim,
          in.codes + bh * p.length,
          p.position_bias ? in.position_queries + at : nullptr,
          p.position_bias ? in.offsets + h * vq_offset_rows(p) * p.dim : nullptr};
}

// ---- the band of the position bias ----

// The row of r for query i and key j (j - i + L), or -1 outside the band |i - j| <= L (and j > i when causal).
inline int64_t offset_row(const VQAttentionProblem& p, int64_t i, int64_t j) {
  const int64_t row = j - i + p.block;
  return row < 0 || row >= vq_offset_rows(p) ? -1 : row;
}

}  // namespace ladder::vq
