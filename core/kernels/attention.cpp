#include "core/kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/fast_math.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"

namespace ladder {

namespace {

// ---- which keys a query sees ----

// The tile sizes: a block-sparse pattern's blocks, else 64 by 64.
int64_t row_tile(const AttentionProblem& p) { return p.key_blocks ? p.block : kAttentionRowTile; }
int64_t key_tile(const AttentionProblem& p) { return p.key_blocks ? p.block : kAttentionKeyTile; }

// Query i sees keys [0, visible_end) under the causal rule (every key without it). Written so that
// no sum can overflow, whatever the offset.
int64_t visible_end(const AttentionProblem& p, int64_t i) {
  if (!p.causal || p.causal_offset >= p.keys - 1 - i) return p.keys;
  if (p.causal_offset <= -i - 1) return 0;
  return i + p.causal_offset + 1;
}

// Runs body(j0, cols) for each tile of keys j0 .. j0+cols-1 that the query rows i0 .. i0+rows-1
// may see: every tile up to the causal end, or only the key blocks their block lists.
template <class Body>
void for_each_key_tile(const AttentionProblem& p, int64_t i0, int64_t rows, const Body& body) {
  const int64_t key_end = visible_end(p, i0 + rows - 1), tile = key_tile(p);  // the last row sees the most
  if (!p.key_blocks) {
    for (int64_t j0 = 0; j0 < key_end; j0 += tile) body(j0, std::min(tile, key_end - j0));
    return;
  }
  for (const int64_t key_block : (*p.key_blocks)[i0 / p.block]) {
    const int64_t j0 = key_block * tile;
    if (j0 >= key_end) break;
    body(j0, std::min(tile, key_end - j0));
  }
}

// Whether the block-sparse pattern lets query i see key j (always without one).
bool block_visible(const AttentionProblem& p, int64_t i, int64_t j) {
  if (!p.key_blocks) return true;
  const std::vector<int64_t>& listed = (*p.key_blocks)[i / p.block];
  return std::binary_search(listed.begin(), listed.end(), j / p.block);
}

// The key padding row of the batch that head bh belongs to, or null.
const float* padding_of(const AttentionProblem& p, int64_t bh) {
  return p.key_padding ? p.key_padding + (bh / p.heads) * p.keys : nullptr;
}

// Sets the scores s[0, cols) of query i against keys j0, j0+1, ... to -inf where it may not look,
// and returns the largest score left (-inf when none is).
float hide_invisible(const AttentionProblem& p, const float* padding, int64_t i, int64_t j0, int64_t cols, float* s) {
  for (int64_t j = std::max<int64_t>(visible_end(p, i) - j0, 0); j < cols; ++j) s[j] = -INFINITY;
  float m = -INFINITY;
  if (padding) {
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < cols; ++j) {
      s[j] = padding[j0 + j] != 0 ? s[j] : -INFINITY;
      m = s[j] > m ? s[j] : m;
    }
  } else {
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < cols; ++j) m = s[j] > m ? s[j] : m;
  }
  return m;
}

// ---- dropout: a mask recomputed from a seed, never stored ----

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A 32-bit integer hash (the "lowbias32" constants of Chris Wellons' hash-prospector): 32-bit
// multiplies, so a loop over columns vectorises.
inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}

// The mask of one query row: keep[j] = 0 (dropped, with probability p.dropout) or 1/(1-p.dropout)
// for keys j0 .. j0+cols-1. The draw for (row, key) depends only on the seed, the row's index
// among all B*H*T rows and the key's index, so the backward (and any tiling) sees the same mask.
void dropout_keep_row(const AttentionProblem& p, int64_t row, int64_t j0, int64_t cols, float* keep) {
  const uint64_t row_key = splitmix64(p.dropout_seed ^ splitmix64(static_cast<uint64_t>(row)));
  const auto low = static_cast<uint32_t>(row_key), high = static_cast<uint32_t>(row_key >> 32);
  const float kept = p.dropout >= 1 ? 0.0f : 1.0f / (1.0f - p.dropout);
#pragma omp simd
  for (int64_t j = 0; j < cols; ++j) {
    const uint32_t bits = hash32(hash32(low ^ static_cast<uint32_t>(j0 + j)) + high);
    const float uniform = static_cast<float>(static_cast<int32_t>(bits >> 8)) * (1.0f / 16777216);  // [0, 1)
    keep[j] = uniform < p.dropout ? 0.0f : kept;
  }
}

// ---- small loops ----

void scale_row(float* x, float factor, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) x[j] *= factor;
}

// Row tiles in the order 0, n-1, 1, n-2, ...: under a causal mask a tile's work grows with its
// index, and contiguous blocks of this order get about the same work.
int64_t zigzag(int64_t t, int64_t n) { return t % 2 == 0 ? t / 2 : n - 1 - t / 2; }

// The threaded loop of both passes: body(bh, i0, rows, block, shared) for every tile of query rows
// of every head, blocks of tiles split across the threads; shared: some of the head's row tiles
// run in another block.
template <class Body>
void for_each_row_tile(const AttentionProblem& p, const Body& body) {
  const int64_t tile = row_tile(p), tiles = (p.queries + tile - 1) / tile;
  const int64_t rows = std::min(tile, p.queries);
  int64_t keys_per_tile = p.keys;  // block-sparse: the keys of an average tile's listed blocks
  if (p.key_blocks) {
    int64_t listed = 0;
    for (const std::vector<int64_t>& blocks : *p.key_blocks) listed += static_cast<int64_t>(blocks.size());
    keys_per_tile = std::min(p.keys, listed * p.block / std::max<int64_t>(tiles, 1));
  }
  const int64_t work_per_tile = rows * std::max<int64_t>(keys_per_tile, 1) * std::max<int64_t>(p.dim, 1);
  parallel_for_blocks(p.batch * p.heads * tiles, work_per_tile, [&](int64_t begin, int64_t end, int block) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t bh = item / tiles, i0 = zigzag(item % tiles, tiles) * tile;
      const bool shared = bh * tiles < begin || (bh + 1) * tiles > end;
      body(bh, i0, std::min(tile, p.queries - i0), block, shared);
    }
  });
}

// ---- forward ----

// The online softmax for one tile of rows of one head: for each key tile, the scores, the new
// running maximum m, the sum l rescaled to it, and out (which accumulates the unnormalised
// weighted values) rescaled alike; at the end out /= l and lse = m + log l.
void forward_row_tile(const AttentionProblem& p, int64_t bh, int64_t i0, int64_t rows, const float* q,
                      const float* k, const float* v, float* out, float* lse, float* scores, float* keep) {
  const int64_t T = p.queries, S = p.keys, D = p.dim;
  const float* q_tile = q + (bh * T + i0) * D;
  const float *k_head = k + bh * S * D, *v_head = v + bh * S * D;
  float* out_tile = out + (bh * T + i0) * D;  // (rows, D)
  float* lse_tile = lse + bh * T + i0;        // holds the running maximum m until the end
  const float* padding = padding_of(p, bh);
  std::vector<float> sums(rows, 0.0f);        // l
  std::fill_n(out_tile, rows * D, 0.0f);
  std::fill_n(lse_tile, rows, -INFINITY);

  const int64_t ld = key_tile(p);  // the row stride of scores
  for_each_key_tile(p, i0, rows, [&](int64_t j0, int64_t cols) {
    // scores (rows, cols) = scale * q_tile @ k_tile^T
    gemm(false, true, rows, cols, D, p.scale, q_tile, D, k_head + j0 * D, D, 0.0f, scores, ld);
    for (int64_t r = 0; r < rows; ++r) {
      float* s = scores + r * ld;
      const float m_old = lse_tile[r], m_new = std::max(m_old, hide_invisible(p, padding, i0 + r, j0, cols, s));
      if (m_new == -INFINITY) {  // nothing visible yet: this tile adds nothing to the row
        std::fill_n(s, cols, 0.0f);
        continue;
      }
      float tile_sum = 0;
#pragma omp simd reduction(+ : tile_sum)
      for (int64_t j = 0; j < cols; ++j) {
        s[j] = fast_exp(s[j] - m_new);
        tile_sum += s[j];
      }
      const float correction = fast_exp(m_old - m_new);  // 0 when m_old is -inf
      sums[r] = sums[r] * correction + tile_sum;
      lse_tile[r] = m_new;
      if (correction != 1.0f) scale_row(out_tile + r * D, correction, D);
      if (p.dropout > 0) {  // the sum above keeps every weight; only the values see the mask
        dropout_keep_row(p, bh * T + i0 + r, j0, cols, keep);
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) s[j] *= keep[j];
      }
    }
    // out_tile (rows, D) += weights (rows, cols) @ v_tile (cols, D)
    gemm(false, false, rows, D, cols, 1.0f, scores, ld, v_head + j0 * D, D, 1.0f, out_tile, D);
  });
  for (int64_t r = 0; r < rows; ++r) {
    if (sums[r] == 0) {  // no visible key: out stays 0 and lse is -inf
      lse_tile[r] = -INFINITY;
      continue;
    }
    scale_row(out_tile + r * D, 1.0f / sums[r], D);
    lse_tile[r] += std::log(sums[r]);
  }
}

// ---- backward ----

// For one tile of rows against every key tile it sees, with P = exp(scores - lse) recomputed and
// keep the dropout mask (1 without dropout):
//   dv_j += (P*keep)^T @ dout,  dP = (dout @ v_j^T) * keep,  dS = P * (dP - D_i),
//   dq += scale * dS @ k_j,  dk_j += scale * dS^T @ q,   D_i = dout_i . out_i.
// dq_tile is written; dk_head and dv_head (S, D) are accumulated into.
void backward_row_tile(const AttentionProblem& p, int64_t bh, int64_t i0, int64_t rows, const float* q,
                       const float* k, const float* v, const float* out, const float* lse, const float* dout,
                       float* dq, float* dk_head, float* dv_head, float* probs, float* dprobs, float* kept_probs,
                       float* keep) {
  const int64_t T = p.queries, S = p.keys, D = p.dim;
  const int64_t at = bh * T + i0;
  const float *q_tile = q + at * D, *dout_tile = dout + at * D, *lse_tile = lse + at;
  const float *k_head = k + bh * S * D, *v_head = v + bh * S * D;
  float* dq_tile = dq + at * D;
  const float* padding = padding_of(p, bh);
  std::vector<float> delta(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float *g = dout_tile + r * D, *o = out + (at + r) * D;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t d = 0; d < D; ++d) sum += g[d] * o[d];
    delta[r] = sum;
  }
  const int64_t ld = key_tile(p);  // the row stride of the tile buffers
  std::fill_n(dq_tile, rows * D, 0.0f);
  if (p.dropout == 0) std::fill_n(keep, ld, 1.0f);  // else drawn for each row below

  for_each_key_tile(p, i0, rows, [&](int64_t j0, int64_t cols) {
    gemm(false, true, rows, cols, D, p.scale, q_tile, D, k_head + j0 * D, D, 0.0f, probs, ld);
    gemm(false, true, rows, cols, D, 1.0f, dout_tile, D, v_head + j0 * D, D, 0.0f, dprobs, ld);
    for (int64_t r = 0; r < rows; ++r) {
      float *pr = probs + r * ld, *dpr = dprobs + r * ld, *kpr = kept_probs + r * ld;
      if (lse_tile[r] == -INFINITY) {  // a row that sees no key passes no gradient
        std::fill_n(pr, cols, 0.0f);
        std::fill_n(dpr, cols, 0.0f);
        std::fill_n(kpr, cols, 0.0f);
        continue;
      }
      hide_invisible(p, padding, i0 + r, j0, cols, pr);
      const float row_lse = lse_tile[r], row_delta = delta[r];
      if (p.dropout > 0) dropout_keep_row(p, at + r, j0, cols, keep);
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) {
        const float prob = fast_exp(pr[j] - row_lse);  // hidden keys: exp(-inf) = 0
        kpr[j] = prob * keep[j];
        dpr[j] = prob * (dpr[j] * keep[j] - row_delta);  // dS
      }
    }
    // dv_tile (cols, D) += kept_probs^T (cols, rows) @ dout_tile (rows, D)
    gemm(true, false, cols, D, rows, 1.0f, kept_probs, ld, dout_tile, D, 1.0f, dv_head + j0 * D, D);
    // dq_tile (rows, D) += scale * dS (rows, cols) @ k_tile (cols, D)
    gemm(false, false, rows, D, cols, p.scale, dprobs, ld, k_head + j0 * D, D, 1.0f, dq_tile, D);
    // dk_tile (cols, D) += scale * dS^T (cols, rows) @ q_tile (rows, D)
    gemm(true, false, cols, D, rows, p.scale, dprobs, ld, q_tile, D, 1.0f, dk_head + j0 * D, D);
  });
}

}  // namespace

void attention_forward(const AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                       float* lse) {
  if (p.dim == 0) {  // empty vectors: every score is 0, and there is nothing to write
    attention_forward_naive(p, q, k, v, out, lse);
    return;
  }
  for_each_row_tile(p, [&](int64_t bh, int64_t i0, int64_t rows, int, bool) {
    std::vector<float> scores(row_tile(p) * key_tile(p)), keep(key_tile(p));
    forward_row_tile(p, bh, i0, rows, q, k, v, out, lse, scores.data(), keep.data());
  });
}

void attention_backward(const AttentionProblem& p, const float* q, const float* k, const float* v,
                        const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv) {
  const int64_t heads = p.batch * p.heads, head_size = p.keys * p.dim;
  std::fill_n(dk, heads * head_size, 0.0f);
  std::fill_n(dv, heads * head_size, 0.0f);
  if (p.dim == 0) return;
  // A head whose row tiles all run in one block adds into dk and dv directly. A head the split
  // shares between blocks (at most the first and the last of a block) gets a copy of its dk and dv
  // per block, added in block order afterwards, so that the result depends on the blocks, not on
  // which thread finished first.
  struct SharedHead {
    int64_t bh;
    std::vector<float> dk, dv;  // (S, D) each
  };
  std::vector<std::vector<SharedHead>> copies(num_threads());  // per block
  const int64_t tile_size = row_tile(p) * key_tile(p);
  for_each_row_tile(p, [&](int64_t bh, int64_t i0, int64_t rows, int block, bool shared) {
    float *dk_head = dk + bh * head_size, *dv_head = dv + bh * head_size;
    if (shared) {
      std::vector<SharedHead>& mine = copies[block];
      if (mine.empty() || mine.back().bh != bh)
        mine.push_back({bh, std::vector<float>(head_size, 0.0f), std::vector<float>(head_size, 0.0f)});
      dk_head = mine.back().dk.data(), dv_head = mine.back().dv.data();
    }
    std::vector<float> scratch(3 * tile_size + key_tile(p));
    float* tile = scratch.data();
    backward_row_tile(p, bh, i0, rows, q, k, v, out, lse, dout, dq, dk_head, dv_head, tile, tile + tile_size,
                      tile + 2 * tile_size, tile + 3 * tile_size);
  });
  for (const std::vector<SharedHead>& mine : copies)
    for (const SharedHead& head : mine)
      for (int64_t e = 0; e < head_size; ++e) {
        dk[head.bh * head_size + e] += head.dk[static_cast<size_t>(e)];
        dv[head.bh * head_size + e] += head.dv[static_cast<size_t>(e)];
      }
}

void attention_dropout_mask(const AttentionProblem& p, float* mask) {
  const int64_t rows = p.batch * p.heads * p.queries;
  for (int64_t row = 0; row < rows; ++row) {
    float* m = mask + row * p.keys;
    if (p.dropout > 0)
      dropout_keep_row(p, row, 0, p.keys, m);
    else
      std::fill_n(m, p.keys, 1.0f);
  }
}

namespace {

// For the naive twins: query i's softmax weights over every key (0 where hidden; all 0 when
// nothing is visible), its dropout mask and its log-sum-exp.
struct NaiveRow {
  std::vector<double> probs;
  std::vector<float> keep;
  double lse = -INFINITY;
};

NaiveRow naive_row(const AttentionProblem& p, int64_t bh, int64_t i, const float* q, const float* k) {
  const int64_t S = p.keys, D = p.dim;
  const float* padding = padding_of(p, bh);
  const float* qi = q + (bh * p.queries + i) * D;
  std::vector<double> scores(S, -INFINITY);
  double m = -INFINITY;
  for (int64_t j = 0; j < S; ++j) {
    const bool visible =
        (!p.causal || j < visible_end(p, i)) && (!padding || padding[j] != 0) && block_visible(p, i, j);
    if (!visible) continue;
    double s = 0;
    for (int64_t d = 0; d < D; ++d) s += static_cast<double>(qi[d]) * k[(bh * S + j) * D + d];
    scores[j] = p.scale * s;
    m = std::max(m, scores[j]);
  }
  NaiveRow row{std::vector<double>(S, 0.0), std::vector<float>(S, 1.0f)};
  if (p.dropout > 0) dropout_keep_row(p, bh * p.queries + i, 0, S, row.keep.data());
  if (m == -INFINITY) return row;
  double sum = 0;
  for (int64_t j = 0; j < S; ++j) sum += std::exp(scores[j] - m);
  row.lse = m + std::log(sum);
  for (int64_t j = 0; j < S; ++j) row.probs[j] = std::exp(scores[j] - m) / sum;
  return row;
}

}  // namespace

void attention_forward_naive(const AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                             float* lse) {
  const int64_t T = p.queries, S = p.keys, D = p.dim;
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh)
    for (int64_t i = 0; i < T; ++i) {
      const NaiveRow row = naive_row(p, bh, i, q, k);
      lse[bh * T + i] = static_cast<float>(row.lse);
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += row.probs[j] * row.keep[j] * v[(bh * S + j) * D + d];
        out[(bh * T + i) * D + d] = static_cast<float>(acc);
      }
    }
}

void attention_backward_naive(const AttentionProblem& p, const float* q, const float* k, const float* v,
                              const float* dout, float* dq, float* dk, float* dv) {
  const int64_t T = p.queries, S = p.keys, D = p.dim, heads = p.batch * p.heads;
  std::vector<double> dk_sum(heads * S * D, 0.0), dv_sum(heads * S * D, 0.0);
  for (int64_t bh = 0; bh < heads; ++bh)
    for (int64_t i = 0; i < T; ++i) {
      const NaiveRow row = naive_row(p, bh, i, q, k);
      const float *qi = q + (bh * T + i) * D, *gi = dout + (bh * T + i) * D;
      // dprobs_j = keep_j * dout_i . v_j;  dscores_j = probs_j * (dprobs_j - sum_l probs_l dprobs_l)
      std::vector<double> dprobs(S, 0.0);
      double row_sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double g = 0;
        for (int64_t d = 0; d < D; ++d) g += static_cast<double>(gi[d]) * v[(bh * S + j) * D + d];
        dprobs[j] = g * row.keep[j];
        row_sum += row.probs[j] * dprobs[j];
      }
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) {
          const double ds = row.probs[j] * (dprobs[j] - row_sum);
          acc += ds * k[(bh * S + j) * D + d];
          dk_sum[(bh * S + j) * D + d] += p.scale * ds * qi[d];
          dv_sum[(bh * S + j) * D + d] += row.probs[j] * row.keep[j] * gi[d];
        }
        dq[(bh * T + i) * D + d] = static_cast<float>(p.scale * acc);
      }
    }
  for (int64_t e = 0; e < heads * S * D; ++e) {
    dk[e] = static_cast<float>(dk_sum[e]);
    dv[e] = static_cast<float>(dv_sum[e]);
  }
}

}  // namespace ladder
