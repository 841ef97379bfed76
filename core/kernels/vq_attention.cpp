// Transformer-VQ attention, block by block (see vq_attention.h for the formulas and the gradients).
#include "core/kernels/vq_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/fast_math.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"
#include "core/kernels/softmax.h"

namespace ladder {

namespace {

// ---- the per-code cache of one head ----

// Adds (sign = 1) or takes out (sign = -1) n keys with codes[0, n) and values v (n, D) to the
// per-code counts (S) and value sums (S, D).
void fold_keys(int64_t n, int64_t D, const int64_t* codes, const float* v, int sign, int64_t* counts,
               double* sums) {
  for (int64_t j = 0; j < n; ++j) {
    counts[codes[j]] += sign;
    double* sum = sums + codes[j] * D;
    for (int64_t d = 0; d < D; ++d) sum[d] += sign * static_cast<double>(v[j * D + d]);
  }
}

// The cache of the blocks older than the window: what is carried (counts, sums) and what a block's
// row tiles read from it, prepared once per block.
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
  void prepare() {
    empty = true;
    for (int64_t s = 0; s < S; ++s) {
      const bool live = counts[s] > 0;
      empty = empty && !live;
      const double count = static_cast<double>(counts[s]);
      bias[s] = live ? static_cast<float>(std::log(count)) : -INFINITY;
      per_key[s] = live ? static_cast<float>(1.0 / count) : 0.0f;
      for (int64_t d = 0; d < D; ++d) mean[s * D + d] = live ? static_cast<float>(sums[s * D + d] / count) : 0.0f;
    }
  }
};

// ---- blocks and row tiles ----

int64_t block_count(const VQAttentionProblem& p) { return (p.length + p.block - 1) / p.block; }

// The positions [begin, end) of block n.
int64_t block_begin(const VQAttentionProblem& p, int64_t n) { return n * p.block; }
int64_t block_end(const VQAttentionProblem& p, int64_t n) { return std::min(p.length, (n + 1) * p.block); }

// The widest window a row tile meets (its own block up to the tile's last row and the block
// before): the row stride of the window scores.
int64_t window_stride(const VQAttentionProblem& p) { return std::min(p.length, 2 * std::min(p.block, p.length)); }

// Query rows i0 .. i0+rows-1 of one block, and the keys w0 .. w0+cols-1 they read exactly.
struct RowTile {
  int64_t i0, rows, w0, cols;
};

// Runs body(tile) for the row tiles of block n, kVQRowTile rows at a time.
template <class Body>
void for_each_row_tile(const VQAttentionProblem& p, int64_t n, const Body& body) {
  const int64_t begin = block_begin(p, n), end = block_end(p, n), w0 = n >= 1 ? begin - p.block : 0;
  for (int64_t i0 = begin; i0 < end; i0 += kVQRowTile) {
    const int64_t rows = std::min(kVQRowTile, end - i0);
    body(RowTile{i0, rows, w0, i0 + rows - w0});
  }
}

// One head's buffers.
struct HeadData {
  const float *q, *khat, *v, *codebook;
  const int64_t* codes;
};

HeadData head_data(const VQAttentionProblem& p, int64_t bh, const float* q, const float* khat, const int64_t* codes,
                   const float* codebook, const float* v) {
  const int64_t at = bh * p.length * p.dim;
  return {q + at, khat + at, v + at, codebook + (bh % p.heads) * p.codes * p.dim, codes + bh * p.length};
}

// The scores of one row tile, scale * q . key:
//   window (rows, cols), row stride ldw: against the exact keys, -inf for the keys after the query;
//   cached (rows, S), unless the cache is empty: against every code, plus log count_s.
void tile_scores(const VQAttentionProblem& p, const HeadData& h, const CodeCache& cache, const RowTile& t,
                 float* window, int64_t ldw, float* cached) {
  const int64_t D = p.dim, S = p.codes;
  const float* q_tile = h.q + t.i0 * D;
  gemm(false, true, t.rows, t.cols, D, p.scale, q_tile, D, h.khat + t.w0 * D, D, 0.0f, window, ldw);
  for (int64_t r = 0; r < t.rows; ++r)  // query i0 + r reads keys up to itself: column i0 + r - w0
    std::fill(window + r * ldw + (t.i0 + r - t.w0) + 1, window + r * ldw + t.cols, -INFINITY);
  if (cache.empty) return;
  gemm(false, true, t.rows, S, D, p.scale, q_tile, D, h.codebook, D, 0.0f, cached, S);
  for (int64_t r = 0; r < t.rows; ++r) {
    float* c = cached + r * S;
#pragma omp simd
    for (int64_t s = 0; s < S; ++s) c[s] += cache.bias[s];
  }
}

// ---- forward ----

// One row tile: one softmax over its window scores and its cache scores together (the largest of
// both subtracted first, so nothing overflows), then
//   out = P_window @ v_window + P_cache @ mean,  divided by the row sums;  lse = max + log(sum).
void forward_tile(const VQAttentionProblem& p, const HeadData& h, const CodeCache& cache, const RowTile& t,
                  float* window, int64_t ldw, float* cached, float* out, float* lse) {
  const int64_t D = p.dim, S = p.codes;
  tile_scores(p, h, cache, t, window, ldw, cached);
  std::vector<float> sums(t.rows);
  for (int64_t r = 0; r < t.rows; ++r) {
    float *w = window + r * ldw, *c = cached + r * S;
    const float m = cache.empty ? row_max(w, t.cols) : std::max(row_max(w, t.cols), row_max(c, S));
    sums[r] = exp_shifted(w, m, w, t.cols) + (cache.empty ? 0.0f : exp_shifted(c, m, c, S));
    lse[t.i0 + r] = m + std::log(sums[r]);
  }
  float* out_tile = out + t.i0 * D;  // (rows, D)
  gemm(false, false, t.rows, D, t.cols, 1.0f, window, ldw, h.v + t.w0 * D, D, 0.0f, out_tile, D);
  if (!cache.empty) gemm(false, false, t.rows, D, S, 1.0f, cached, S, cache.mean.data(), D, 1.0f, out_tile, D);
  for (int64_t r = 0; r < t.rows; ++r) {
    const float inverse = 1.0f / sums[r];
#pragma omp simd
    for (int64_t d = 0; d < D; ++d) out_tile[r * D + d] *= inverse;
  }
}

// Runs body(bh, scratch...) for every head, the heads shared out among the threads.
template <class Body>
void for_each_head(const VQAttentionProblem& p, const Body& body) {
  const int64_t heads = p.batch * p.heads;
  const int64_t work_per_head = p.length * (window_stride(p) + p.codes) * std::max<int64_t>(p.dim, 1);
  parallel_for(heads, work_per_head, [&](int64_t begin, int64_t end) {
    CodeCache cache(p.codes, p.dim);
    for (int64_t bh = begin; bh < end; ++bh) body(bh, cache);
  });
}

}  // namespace

void vq_attention_forward(const VQAttentionProblem& p, const float* q, const float* khat, const int64_t* codes,
                          const float* codebook, const float* v, float* out, float* lse) {
  const int64_t T = p.length, D = p.dim, S = p.codes, ldw = window_stride(p);
  for_each_head(p, [&](int64_t bh, CodeCache& cache) {
    const HeadData h = head_data(p, bh, q, khat, codes, codebook, v);
    std::vector<float> window(kVQRowTile * ldw), cached(kVQRowTile * S);
    cache.clear();
    for (int64_t n = 0; n < block_count(p); ++n) {
      if (n >= 2) {  // block n-2 leaves the window: fold it into the cache
        const int64_t b = block_begin(p, n - 2);
        cache.fold(p.block, h.codes + b, h.v + b * D, 1);
      }
      cache.prepare();
      for_each_row_tile(p, n, [&](const RowTile& t) {
        forward_tile(p, h, cache, t, window.data(), ldw, cached.data(), out + bh * T * D, lse + bh * T);
      });
    }
  });
}

namespace {

// ---- backward ----

// Per-thread buffers of the backward.
struct BackwardScratch {
  std::vector<float> window, dwindow, cached, dcached, owed;  // owed = G (S, D)
};

// One row tile, with P recomputed from lse and D_i = dout_i . out_i:
//   window: dS = P * (dout @ v^T - D_i);  dv += P^T @ dout;  dq = scale dS @ khat;  dkhat += scale dS^T @ q
//   cache:  dS = P * (dout @ mean^T - D_i);  dq += scale dS @ codebook;  G += (P / count)^T @ dout
// dq's tile is written; dkhat_head, dv_head (T, D) and G are added to.
void backward_tile(const VQAttentionProblem& p, const HeadData& h, const CodeCache& cache, const RowTile& t,
                   const float* out, const float* lse, const float* dout, float* dq, float* dkhat_head,
                   float* dv_head, BackwardScratch& s) {
  const int64_t D = p.dim, S = p.codes, ldw = window_stride(p);
  float *window = s.window.data(), *dwindow = s.dwindow.data(), *cached = s.cached.data();
  float* dcached = s.dcached.data();
  tile_scores(p, h, cache, t, window, ldw, cached);
  const float *dout_tile = dout + t.i0 * D, *q_tile = h.q + t.i0 * D;
  float* dq_tile = dq + t.i0 * D;
  std::vector<float> delta(t.rows);
  for (int64_t r = 0; r < t.rows; ++r) {
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t d = 0; d < D; ++d) sum += dout_tile[r * D + d] * out[(t.i0 + r) * D + d];
    delta[r] = sum;
  }
  // P (in place of the scores) and dS, row by row: probs (n), dprobs (n) -> dS.
  const auto softmax_grad = [&](float* probs, float* dprobs, int64_t n, int64_t r) {
    const float row_lse = lse[t.i0 + r], row_delta = delta[r];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      probs[j] = fast_exp(probs[j] - row_lse);  // hidden keys and empty codes: exp(-inf) = 0
      dprobs[j] = probs[j] * (dprobs[j] - row_delta);
    }
  };

  gemm(false, true, t.rows, t.cols, D, 1.0f, dout_tile, D, h.v + t.w0 * D, D, 0.0f, dwindow, ldw);
  for (int64_t r = 0; r < t.rows; ++r) softmax_grad(window + r * ldw, dwindow + r * ldw, t.cols, r);
  // dv_window (cols, D) += P^T (cols, rows) @ dout_tile (rows, D)
  gemm(true, false, t.cols, D, t.rows, 1.0f, window, ldw, dout_tile, D, 1.0f, dv_head + t.w0 * D, D);
  // dq_tile (rows, D) = scale * dS (rows, cols) @ khat_window (cols, D)
  gemm(false, false, t.rows, D, t.cols, p.scale, dwindow, ldw, h.khat + t.w0 * D, D, 0.0f, dq_tile, D);
  // dkhat_window (cols, D) += scale * dS^T (cols, rows) @ q_tile (rows, D)
  gemm(true, false, t.cols, D, t.rows, p.scale, dwindow, ldw, q_tile, D, 1.0f, dkhat_head + t.w0 * D, D);
  if (cache.empty) return;

  gemm(false, true, t.rows, S, D, 1.0f, dout_tile, D, cache.mean.data(), D, 0.0f, dcached, S);
  for (int64_t r = 0; r < t.rows; ++r) softmax_grad(cached + r * S, dcached + r * S, S, r);
  // dq_tile (rows, D) += scale * dS (rows, S) @ codebook (S, D)
  gemm(false, false, t.rows, D, S, p.scale, dcached, S, h.codebook, D, 1.0f, dq_tile, D);
  // A code's weight is shared by its count_s keys: each key's own weight is P / count_s.
  for (int64_t r = 0; r < t.rows; ++r) {
    float* c = cached + r * S;
#pragma omp simd
    for (int64_t j = 0; j < S; ++j) c[j] *= cache.per_key[j];
  }
  // G (S, D) += (P / count)^T (S, rows) @ dout_tile (rows, D)
  gemm(true, false, S, D, t.rows, 1.0f, cached, S, dout_tile, D, 1.0f, s.owed.data(), D);
}

}  // namespace

void vq_attention_backward(const VQAttentionProblem& p, const float* q, const float* khat, const int64_t* codes,
                           const float* codebook, const float* v, const float* out, const float* lse,
                           const float* dout, float* dq, float* dkhat, float* dv) {
  const int64_t T = p.length, D = p.dim, S = p.codes, ldw = window_stride(p), N = block_count(p);
  for_each_head(p, [&](int64_t bh, CodeCache& cache) {
    const HeadData h = head_data(p, bh, q, khat, codes, codebook, v);
    BackwardScratch scratch{std::vector<float>(kVQRowTile * ldw), std::vector<float>(kVQRowTile * ldw),
                            std::vector<float>(kVQRowTile * S), std::vector<float>(kVQRowTile * S),
                            std::vector<float>(S * D, 0.0f)};
    const int64_t at = bh * T * D;
    float *dkhat_head = dkhat + at, *dv_head = dv + at;
    std::fill_n(dkhat_head, T * D, 0.0f);
    std::fill_n(dv_head, T * D, 0.0f);
    cache.clear();
    if (N >= 3) cache.fold((N - 2) * p.block, h.codes, h.v, 1);  // the last block's cache: blocks 0 .. N-3
    for (int64_t n = N - 1; n >= 0; --n) {
      cache.prepare();
      for_each_row_tile(p, n, [&](const RowTile& t) {
        backward_tile(p, h, cache, t, out + at, lse + bh * T, dout + at, dq + at, dkhat_head, dv_head, scratch);
      });
      if (n < 2) continue;
      // Every query that reads block n-2 through the cache has been passed: its values get what they
      // are owed, and the block leaves the cache of the blocks before n.
      const int64_t b = block_begin(p, n - 2);
      for (int64_t j = b; j < b + p.block; ++j) {
        const float* owed = scratch.owed.data() + h.codes[j] * D;
#pragma omp simd
        for (int64_t d = 0; d < D; ++d) dv_head[j * D + d] += owed[d];
      }
      cache.fold(p.block, h.codes + b, h.v + b * D, -1);
    }
  });
}

// ---- generation ----

namespace {

// One head's part of a VQAttentionCache.
struct HeadCache {
  float *keys, *values;         // (2L, D), position t in slot t mod 2L
  int64_t *slot_codes, *counts;  // (2L) and (S)
  double* sums;                  // (S, D)
};

HeadCache head_cache(const VQAttentionProblem& p, VQAttentionCache& cache, int64_t bh) {
  const int64_t slots = 2 * p.block;
  return {cache.keys.data() + bh * slots * p.dim, cache.values.data() + bh * slots * p.dim,
          cache.codes.data() + bh * slots, cache.code_counts.data() + bh * p.codes,
          cache.code_sums.data() + bh * p.codes * p.dim};
}

// The query q (D) at `position`, whose key and value are already in their slot, against the window
// (its block up to itself and the block before) and the codes of the older keys -> out (D).
// window (2L) and cached (S) are scratch.
void attend_position(const VQAttentionProblem& p, const HeadCache& c, const float* codebook, int64_t position,
                     const float* q, float* window, float* cached, float* out) {
  const int64_t D = p.dim, S = p.codes, L = p.block, slots = 2 * L, n = position / L;
  const int64_t w0 = n >= 1 ? (n - 1) * L : 0, cols = position + 1 - w0;
  const auto dot = [D](const float* a, const float* b) {
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t d = 0; d < D; ++d) sum += a[d] * b[d];
    return sum;
  };
  float m = -INFINITY;
  for (int64_t j = 0; j < cols; ++j) {
    window[j] = p.scale * dot(q, c.keys + ((w0 + j) % slots) * D);
    m = std::max(m, window[j]);
  }
  for (int64_t s = 0; s < S; ++s) {
    cached[s] = -INFINITY;
    if (c.counts[s] == 0) continue;
    cached[s] = p.scale * dot(q, codebook + s * D) + static_cast<float>(std::log(static_cast<double>(c.counts[s])));
    m = std::max(m, cached[s]);
  }
  const float sum = exp_shifted(window, m, window, cols) + exp_shifted(cached, m, cached, S);
  std::fill_n(out, D, 0.0f);
  for (int64_t j = 0; j < cols; ++j) {
    const float* value = c.values + ((w0 + j) % slots) * D;
#pragma omp simd
    for (int64_t d = 0; d < D; ++d) out[d] += window[j] * value[d];
  }
  for (int64_t s = 0; s < S; ++s) {
    if (c.counts[s] == 0) continue;
    const float per_key = cached[s] / static_cast<float>(c.counts[s]);  // the weight of one key of code s
    for (int64_t d = 0; d < D; ++d) out[d] += per_key * static_cast<float>(c.sums[s * D + d]);
  }
  for (int64_t d = 0; d < D; ++d) out[d] /= sum;
}

}  // namespace

void vq_attention_step_forward(const VQAttentionProblem& p, VQAttentionCache& cache, const float* q,
                               const float* khat, const int64_t* codes, const float* codebook, const float* v,
                               float* out) {
  const int64_t heads = p.batch * p.heads, T = p.length, D = p.dim, S = p.codes, L = p.block, slots = 2 * L;
  if (cache.keys.empty()) {
    cache.keys.assign(heads * slots * D, 0.0f);
    cache.values.assign(heads * slots * D, 0.0f);
    cache.codes.assign(heads * slots, 0);
    cache.code_counts.assign(heads * S, 0);
    cache.code_sums.assign(heads * S * D, 0.0);
  }
  parallel_for(heads, T * (slots + S) * D, [&](int64_t begin, int64_t end) {
    std::vector<float> window(slots), cached(S);
    for (int64_t bh = begin; bh < end; ++bh) {
      const HeadData h = head_data(p, bh, q, khat, codes, codebook, v);
      const HeadCache c = head_cache(p, cache, bh);
      for (int64_t e = 0; e < T; ++e) {
        const int64_t position = cache.position + e, slot = position % slots;
        // A new block starts: the block two before, in the slots it is about to take, leaves the window.
        if (position % L == 0 && position >= 2 * L)
          fold_keys(L, D, c.slot_codes + slot, c.values + slot * D, 1, c.counts, c.sums);
        std::copy_n(h.khat + e * D, D, c.keys + slot * D);
        std::copy_n(h.v + e * D, D, c.values + slot * D);
        c.slot_codes[slot] = h.codes[e];
        attend_position(p, c, h.codebook, position, h.q + e * D, window.data(), cached.data(),
                        out + (bh * T + e) * D);
      }
    }
  });
  cache.position += T;
}

// ---- naive twins ----

namespace {

// Query i's softmax weights over the keys j <= i of its head, in double.
std::vector<double> naive_row(const VQAttentionProblem& p, int64_t i, const float* q_head, const float* khat_head) {
  const int64_t D = p.dim;
  std::vector<double> probs(i + 1);
  double m = -INFINITY;
  for (int64_t j = 0; j <= i; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(q_head[i * D + d]) * khat_head[j * D + d];
    probs[j] = p.scale * dot;
    m = std::max(m, probs[j]);
  }
  double sum = 0;
  for (double& x : probs) sum += (x = std::exp(x - m));
  for (double& x : probs) x /= sum;
  return probs;
}

}  // namespace

void vq_attention_forward_naive(const VQAttentionProblem& p, const float* q, const float* khat, const float* v,
                                float* out) {
  const int64_t T = p.length, D = p.dim;
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh)
    for (int64_t i = 0; i < T; ++i) {
      const std::vector<double> probs = naive_row(p, i, q + bh * T * D, khat + bh * T * D);
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j <= i; ++j) acc += probs[j] * v[(bh * T + j) * D + d];
        out[(bh * T + i) * D + d] = static_cast<float>(acc);
      }
    }
}

void vq_attention_backward_naive(const VQAttentionProblem& p, const float* q, const float* khat, const float* v,
                                 const float* dout, float* dq, float* dkhat, float* dv) {
  const int64_t T = p.length, D = p.dim, size = p.batch * p.heads * T * D;
  std::vector<double> gq(size, 0.0), gk(size, 0.0), gv(size, 0.0);
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh)
    for (int64_t i = 0; i < T; ++i) {
      const int64_t at = bh * T * D;
      const std::vector<double> probs = naive_row(p, i, q + at, khat + at);
      const float *qi = q + at + i * D, *gi = dout + at + i * D;
      // dprobs_j = dout_i . v_j;  dscores_j = probs_j * (dprobs_j - sum_l probs_l dprobs_l)
      std::vector<double> dprobs(i + 1);
      double row_sum = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double g = 0;
        for (int64_t d = 0; d < D; ++d) g += static_cast<double>(gi[d]) * v[at + j * D + d];
        dprobs[j] = g;
        row_sum += probs[j] * g;
      }
      for (int64_t j = 0; j <= i; ++j) {
        const double ds = p.scale * probs[j] * (dprobs[j] - row_sum);
        const bool in_window = i / p.block - j / p.block <= 1;  // key j read exactly, not through its code
        for (int64_t d = 0; d < D; ++d) {
          gq[at + i * D + d] += ds * khat[at + j * D + d];
          if (in_window) gk[at + j * D + d] += ds * qi[d];
          gv[at + j * D + d] += probs[j] * gi[d];
        }
      }
    }
  std::transform(gq.begin(), gq.end(), dq, [](double x) { return static_cast<float>(x); });
  std::transform(gk.begin(), gk.end(), dkhat, [](double x) { return static_cast<float>(x); });
  std::transform(gv.begin(), gv.end(), dv, [](double x) { return static_cast<float>(x); });
}

}  // namespace ladder
