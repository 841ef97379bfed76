// Transformer-VQ attention over a whole sequence, block by block (see vq_attention.h for the
// formulas and the gradients; vq_attention_blocks.h for the cache, the windows and the band).
#include "core/kernels/vq_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/fast_math.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"
#include "core/kernels/softmax.h"
#include "core/kernels/vq_attention_blocks.h"

namespace ladder {

int64_t vq_offset_rows(const VQAttentionProblem& p) { return p.causal ? p.block + 1 : 2 * p.block + 1; }

namespace vq {

void fold_keys(int64_t n, int64_t D, const int64_t* codes, const float* v, int sign, int64_t* counts,
               double* sums) {
  for (int64_t j = 0; j < n; ++j) {
    if (codes[j] < 0) continue;
    counts[codes[j]] += sign;
    double* sum = sums + codes[j] * D;
    for (int64_t d = 0; d < D; ++d) sum[d] += sign * static_cast<double>(v[j * D + d]);
  }
}

void CodeCache::prepare() {
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

}  // namespace vq

namespace {

using vq::CodeCache;
using vq::HeadData;
using vq::RowTile;

// Folds block m of one head into the cache (sign 1) or takes it out (sign -1).
void fold_block(const VQAttentionProblem& p, const HeadData& h, int64_t m, int sign, CodeCache& cache) {
  const int64_t b = vq::block_begin(p, m);
  cache.fold(vq::block_end(p, m) - b, h.codes + b, h.v + b * p.dim, sign);
}

// The keys of the tile's window in the band of query i0 + r: [first, last] (empty when last < first).
struct BandKeys {
  int64_t first, last;
};
BandKeys band_keys(const VQAttentionProblem& p, const RowTile& t, int64_t r) {
  const int64_t i = t.i0 + r;
  return {std::max(t.w0, i - p.block), std::min(t.w0 + t.cols - 1, p.causal ? i : i + p.block)};
}

// The scores of one row tile. Every key is its code (khat_j = c_{z_j}), so a window score
// q_i . khat_j is entry z_j of q_i's scores against the codebook, which the cache needs anyway:
// one product serves both.
//   cached (rows, S): scale * q . c_s, then + log count_s for the cache (unless it is empty);
//   window (rows, cols), row stride ldw: cached[z_j] before the log counts, plus scale * qp . r_{i-j}
//     inside the band, -inf for the keys the query does not see (after it when causal; code -1).
// band (rows, offset rows) is scratch for the position term.
void tile_scores(const VQAttentionProblem& p, const HeadData& h, const CodeCache& cache, const RowTile& t,
                 float* window, int64_t ldw, float* cached, float* band) {
  const int64_t D = p.dim, S = p.codes;
  // cached (rows, S) = scale * q_tile (rows, D) @ codebook^T (D, S)
  gemm(false, true, t.rows, S, D, p.scale, h.q + t.i0 * D, D, h.codebook, D, 0.0f, cached, S);
  const int64_t* codes = h.codes + t.w0;  // the window's keys' codes, -1 for a hidden key
  for (int64_t r = 0; r < t.rows; ++r) {
    float* row = window + r * ldw;
    const float* scores = cached + r * S;
    const int64_t seen = p.causal ? t.i0 + r - t.w0 + 1 : t.cols;  // causal: the keys up to query i0 + r
    for (int64_t c = 0; c < seen; ++c) row[c] = codes[c] < 0 ? -INFINITY : scores[codes[c]];
    std::fill(row + seen, row + t.cols, -INFINITY);
  }
  if (p.position_bias) {
    const int64_t P = vq_offset_rows(p);
    // band (rows, P) = scale * qp_tile (rows, D) @ r^T (D, P)
    gemm(false, true, t.rows, P, D, p.scale, h.position_queries + t.i0 * D, D, h.offsets, D, 0.0f, band, P);
    for (int64_t r = 0; r < t.rows; ++r) {
      const BandKeys keys = band_keys(p, t, r);
      if (keys.last < keys.first) continue;
      float* row = window + r * ldw + keys.first - t.w0;  // key j, row j - i + L of the band: both consecutive
      const float* terms = band + r * P + vq::offset_row(p, t.i0 + r, keys.first);
#pragma omp simd
      for (int64_t e = 0; e <= keys.last - keys.first; ++e) row[e] += terms[e];
    }
  }
  if (cache.empty) return;
  for (int64_t r = 0; r < t.rows; ++r) {
    float* c = cached + r * S;
#pragma omp simd
    for (int64_t s = 0; s < S; ++s) c[s] += cache.bias[s];
  }
}

// Per-thread buffers of one row tile.
struct TileScratch {
  std::vector<float> window, dwindow, cached, dcached, band;  // (64, ldw) (64, ldw) (64, S) (64, S) (64, P)
  std::vector<float> owed;  // G (S, D), the backward's

  explicit TileScratch(const VQAttentionProblem& p)
      : window(kVQRowTile * vq::window_stride(p)),
        dwindow(kVQRowTile * vq::window_stride(p)),
        cached(kVQRowTile * p.codes),
        dcached(kVQRowTile * p.codes),
        band(p.position_bias ? kVQRowTile * vq_offset_rows(p) : 0),
        owed(p.codes * p.dim) {}
};

// ---- forward ----

// One row tile: one softmax over its window scores and its cache scores together (the largest of
// both subtracted first, so nothing overflows), then
//   out = P_window @ v_window + P_cache @ mean,  divided by the row sums;  lse = max + log(sum).
void forward_tile(const VQAttentionProblem& p, const HeadData& h, const CodeCache& cache, const RowTile& t,
                  TileScratch& s, float* out, float* lse) {
  const int64_t D = p.dim, S = p.codes, ldw = vq::window_stride(p);
  float *window = s.window.data(), *cached = s.cached.data();
  tile_scores(p, h, cache, t, window, ldw, cached, s.band.data());
  std::vector<float> sums(t.rows);
  for (int64_t r = 0; r < t.rows; ++r) {
    float *w = window + r * ldw, *c = cached + r * S;
    const float m = cache.empty ? row_max(w, t.cols) : std::max(row_max(w, t.cols), row_max(c, S));
    if (m == -INFINITY) {  // a query that sees no key at all (padding everywhere): out 0, and lse = inf gives no gradient
      std::fill_n(w, t.cols, 0.0f);
      if (!cache.empty) std::fill_n(c, S, 0.0f);
      sums[r] = 1, lse[t.i0 + r] = INFINITY;
      continue;
    }
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

// Runs body(bh, cache, scratch) for every head, the heads shared out among the threads.
template <class Body>
void for_each_head(const VQAttentionProblem& p, const Body& body) {
  const int64_t heads = p.batch * p.heads;
  const int64_t work_per_head = p.length * (vq::window_stride(p) + p.codes) * std::max<int64_t>(p.dim, 1);
  parallel_for(heads, work_per_head, [&](int64_t begin, int64_t end) {
    CodeCache cache(p.codes, p.dim);
    TileScratch scratch(p);
    for (int64_t bh = begin; bh < end; ++bh) body(bh, cache, scratch);
  });
}

// The cache of block 0's queries: causal, nothing; the encoder form, every key outside blocks 0 and 1.
void start_cache(const VQAttentionProblem& p, const HeadData& h, CodeCache& cache) {
  cache.clear();
  if (p.causal) return;
  cache.fold(p.length, h.codes, h.v, 1);
  for (const int64_t m : {0, 1}) fold_block(p, h, m, -1, cache);
}

// From the cache of block n-1's queries to block n's: causal, block n-2 joins (it left the window);
// the encoder form, block n-2 joins and block n+1 leaves (it entered the window).
void advance_cache(const VQAttentionProblem& p, const HeadData& h, int64_t n, CodeCache& cache) {
  fold_block(p, h, n - 2, 1, cache);
  if (!p.causal) fold_block(p, h, n + 1, -1, cache);
}

}  // namespace

void vq_attention_forward(const VQAttentionProblem& p, const VQAttentionInputs& in, float* out, float* lse) {
  const int64_t T = p.length, D = p.dim;
  for_each_head(p, [&](int64_t bh, CodeCache& cache, TileScratch& scratch) {
    const HeadData h = vq::head_data(p, in, bh);
    start_cache(p, h, cache);
    for (int64_t n = 0; n < vq::block_count(p); ++n) {
      if (n > 0) advance_cache(p, h, n, cache);
      cache.prepare();
      vq::for_each_row_tile(p, n, [&](const RowTile& t) {
        forward_tile(p, h, cache, t, scratch, out + bh * T * D, lse + bh * T);
      });
    }
  });
}

namespace {

// ---- backward ----

// Where one head's gradients go: dq, dkhat, dv and dqp (T, D), dr (offset rows, D), and G (S, D),
// what the cache owes the values of the keys it summarises.
struct HeadGrads {
  float *dq, *dkhat, *dv, *dposition_queries, *doffsets, *owed;
};

// One row tile, with P recomputed from lse and D_i = dout_i . out_i:
//   window: dS = P * (dout @ v^T - D_i);  dv += P^T @ dout;  dkhat += scale dS^T @ q
//           (with stop_cache_gradient, dv and dkhat for the keys of the tile's own block only);
//   band:   dB = dS at each offset;  dqp = scale dB @ r;  dr += scale dB^T @ qp;
//   cache:  dS = P * (dout @ mean^T - D_i);  G += (P / count)^T @ dout (none with stop_cache_gradient);
//   dq = scale (dS of the cache + the window's dS added up per code) @ codebook: every key is its code.
void backward_tile(const VQAttentionProblem& p, const HeadData& h, const CodeCache& cache, const RowTile& t,
                   const float* out, const float* lse, const float* dout, const HeadGrads& g, TileScratch& s) {
  const int64_t D = p.dim, S = p.codes, ldw = vq::window_stride(p);
  float *window = s.window.data(), *dwindow = s.dwindow.data(), *cached = s.cached.data();
  float *dcached = s.dcached.data(), *band = s.band.data();
  tile_scores(p, h, cache, t, window, ldw, cached, band);
  const float *dout_tile = dout + t.i0 * D, *q_tile = h.q + t.i0 * D;
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
  // The keys that learn from these queries: the whole window, or with stop_cache_gradient its own block.
  const int64_t n = t.i0 / p.block;
  const int64_t c0 = p.stop_cache_gradient ? vq::block_begin(p, n) - t.w0 : 0;
  const int64_t c1 = p.stop_cache_gradient ? std::min(vq::block_end(p, n) - t.w0, t.cols) : t.cols;
  // dv (c1-c0, D) += P^T (c1-c0, rows) @ dout_tile (rows, D)
  gemm(true, false, c1 - c0, D, t.rows, 1.0f, window + c0, ldw, dout_tile, D, 1.0f, g.dv + (t.w0 + c0) * D, D);
  // dkhat (c1-c0, D) += scale * dS^T (c1-c0, rows) @ q_tile (rows, D)
  gemm(true, false, c1 - c0, D, t.rows, p.scale, dwindow + c0, ldw, q_tile, D, 1.0f, g.dkhat + (t.w0 + c0) * D, D);
  if (p.position_bias) {
    const int64_t P = vq_offset_rows(p);
    std::fill_n(band, t.rows * P, 0.0f);  // dB (rows, P): dS at each offset of the band
    for (int64_t r = 0; r < t.rows; ++r) {
      const BandKeys keys = band_keys(p, t, r);
      if (keys.last < keys.first) continue;
      std::copy(dwindow + r * ldw + keys.first - t.w0, dwindow + r * ldw + keys.last - t.w0 + 1,
                band + r * P + vq::offset_row(p, t.i0 + r, keys.first));
    }
    // dqp_tile (rows, D) = scale * dB (rows, P) @ r (P, D)
    gemm(false, false, t.rows, D, P, p.scale, band, P, h.offsets, D, 0.0f, g.dposition_queries + t.i0 * D, D);
    // dr (P, D) += scale * dB^T (P, rows) @ qp_tile (rows, D)
    gemm(true, false, P, D, t.rows, p.scale, band, P, h.position_queries + t.i0 * D, D, 1.0f, g.doffsets, D);
  }

  if (cache.empty) {
    std::fill_n(dcached, t.rows * S, 0.0f);
  } else {
    gemm(false, true, t.rows, S, D, 1.0f, dout_tile, D, cache.mean.data(), D, 0.0f, dcached, S);
    for (int64_t r = 0; r < t.rows; ++r) softmax_grad(cached + r * S, dcached + r * S, S, r);
  }
  const int64_t* codes = h.codes + t.w0;
  for (int64_t r = 0; r < t.rows; ++r) {  // the window's dS joins its keys' codes (hidden keys have none)
    const float* dscores = dwindow + r * ldw;
    float* per_code = dcached + r * S;
    for (int64_t c = 0; c < t.cols; ++c)
      if (codes[c] >= 0) per_code[codes[c]] += dscores[c];
  }
  // dq_tile (rows, D) = scale * dS per code (rows, S) @ codebook (S, D)
  gemm(false, false, t.rows, D, S, p.scale, dcached, S, h.codebook, D, 0.0f, g.dq + t.i0 * D, D);
  if (cache.empty || p.stop_cache_gradient) return;
  // A code's weight is shared by its count_s keys: each key's own weight is P / count_s.
  for (int64_t r = 0; r < t.rows; ++r) {
    float* c = cached + r * S;
#pragma omp simd
    for (int64_t j = 0; j < S; ++j) c[j] *= cache.per_key[j];
  }
  // G (S, D) += (P / count)^T (S, rows) @ dout_tile (rows, D)
  gemm(true, false, S, D, t.rows, 1.0f, cached, S, dout_tile, D, 1.0f, g.owed, D);
}

// Pays the keys [b, e) of one head what the cache owes their codes: dv_j += sign * owed[z_j] (S, D).
template <class Owed>
void pay_owed(const VQAttentionProblem& p, const HeadData& h, int64_t b, int64_t e, const Owed* owed, int sign,
              float* dv) {
  const int64_t D = p.dim;
  for (int64_t j = b; j < e; ++j) {
    if (h.codes[j] < 0) continue;
    const Owed* row = owed + h.codes[j] * D;
    for (int64_t d = 0; d < D; ++d) dv[j * D + d] += static_cast<float>(sign * row[d]);
  }
}

// Causal: from the last block to the first. The cache starts as the last block's (blocks 0..N-3);
// once block n's queries are done, every query that reads block n-2 through the cache has been
// passed: its values get G of their codes, and it leaves the cache of the blocks before n.
void backward_causal(const VQAttentionProblem& p, const HeadData& h, CodeCache& cache, TileScratch& s,
                     const float* out, const float* lse, const float* dout, const HeadGrads& g) {
  const int64_t N = vq::block_count(p);
  cache.clear();
  cache.fold(vq::block_begin(p, N - 2), h.codes, h.v, 1);
  std::fill(s.owed.begin(), s.owed.end(), 0.0f);
  for (int64_t n = N - 1; n >= 0; --n) {
    cache.prepare();
    vq::for_each_row_tile(p, n, [&](const RowTile& t) { backward_tile(p, h, cache, t, out, lse, dout, g, s); });
    if (n < 2) continue;
    if (!p.stop_cache_gradient) pay_owed(p, h, vq::block_begin(p, n - 2), vq::block_end(p, n - 2), s.owed.data(), 1, g.dv);
    fold_block(p, h, n - 2, -1, cache);
  }
}

// The encoder form: from the first block to the last. Block n's queries owe C_n (their G) to the
// values of every block outside their window, so block b's values get the sum of all C_n minus
// C_{b-1}, C_b and C_{b+1}: each block's neighbours are taken off as soon as they are known (the
// last three shares kept, in double), the sum of all added at the end.
void backward_encoder(const VQAttentionProblem& p, const HeadData& h, CodeCache& cache, TileScratch& s,
                      const float* out, const float* lse, const float* dout, const HeadGrads& g) {
  const int64_t N = vq::block_count(p), SD = p.codes * p.dim;
  std::vector<double> total(SD, 0.0), shares(3 * SD, 0.0);  // shares: C_n in slot n mod 3
  const auto take_neighbours = [&](int64_t b) {  // block b's values: minus C_{b-1}, C_b, C_{b+1}
    for (int64_t m = std::max<int64_t>(0, b - 1); m <= std::min(N - 1, b + 1); ++m)
      pay_owed(p, h, vq::block_begin(p, b), vq::block_end(p, b), shares.data() + (m % 3) * SD, -1, g.dv);
  };
  start_cache(p, h, cache);
  for (int64_t n = 0; n < N; ++n) {
    if (n > 0) advance_cache(p, h, n, cache);
    cache.prepare();
    std::fill(s.owed.begin(), s.owed.end(), 0.0f);
    vq::for_each_row_tile(p, n, [&](const RowTile& t) { backward_tile(p, h, cache, t, out, lse, dout, g, s); });
    if (p.stop_cache_gradient) continue;
    double* share = shares.data() + (n % 3) * SD;
    for (int64_t e = 0; e < SD; ++e) total[e] += share[e] = s.owed[e];
    if (n >= 1) take_neighbours(n - 1);
  }
  if (p.stop_cache_gradient || N == 0) return;
  take_neighbours(N - 1);
  pay_owed(p, h, 0, p.length, total.data(), 1, g.dv);
}

}  // namespace

void vq_attention_backward(const VQAttentionProblem& p, const VQAttentionInputs& in, const float* out,
                           const float* lse, const float* dout, const VQAttentionGrads& grads) {
  const int64_t T = p.length, D = p.dim, BH = p.batch * p.heads;
  const int64_t offset_size = p.position_bias ? vq_offset_rows(p) * D : 0;
  // Each head's dr apart (heads of one codebook may run on different threads), summed over the batch after.
  std::vector<float> doffsets_per_head(BH * offset_size, 0.0f);
  for_each_head(p, [&](int64_t bh, CodeCache& cache, TileScratch& scratch) {
    const HeadData h = vq::head_data(p, in, bh);
    const int64_t at = bh * T * D;
    const HeadGrads g{grads.dq + at,
                      grads.dkhat + at,
                      grads.dv + at,
                      p.position_bias ? grads.dposition_queries + at : nullptr,
                      doffsets_per_head.data() + bh * offset_size,
                      scratch.owed.data()};
    std::fill_n(g.dkhat, T * D, 0.0f);
    std::fill_n(g.dv, T * D, 0.0f);
    if (p.causal)
      backward_causal(p, h, cache, scratch, out + at, lse + bh * T, dout + at, g);
    else
      backward_encoder(p, h, cache, scratch, out + at, lse + bh * T, dout + at, g);
  });
  if (!p.position_bias) return;
  std::fill_n(grads.doffsets, p.heads * offset_size, 0.0f);
  for (int64_t bh = 0; bh < BH; ++bh)
    for (int64_t e = 0; e < offset_size; ++e)
      grads.doffsets[(bh % p.heads) * offset_size + e] += doffsets_per_head[bh * offset_size + e];
}

}  // namespace ladder
