// Transformer-VQ generation: one position at a time against a cache of fixed size (see
// vq_attention.h, VQAttentionCache and vq_attention_step_forward).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/parallel.h"
#include "core/kernels/softmax.h"
#include "core/kernels/vq_attention.h"
#include "core/kernels/vq_attention_blocks.h"

namespace ladder {

namespace {

// One head's part of a VQAttentionCache.
struct HeadCache {
  float* values;                 // (2L, D), position t in slot t mod 2L
  int64_t *slot_codes, *counts;  // (2L) and (S)
  float *bias, *means;           // (S) and (S, D)
};

HeadCache head_cache(const VQAttentionProblem& p, VQAttentionCache& cache, int64_t bh) {
  const int64_t slots = 2 * p.block, S = p.codes, D = p.dim;
  return {cache.values.data() + bh * slots * D, cache.codes.data() + bh * slots, cache.code_counts.data() + bh * S,
          cache.code_bias.data() + bh * S, cache.code_means.data() + bh * S * D};
}

void size_cache(const VQAttentionProblem& p, VQAttentionCache& cache) {
  const int64_t heads = p.batch * p.heads, slots = 2 * p.block, S = p.codes, D = p.dim;
  cache.values.assign(heads * slots * D, 0.0f);
  cache.codes.assign(heads * slots, 0);
  cache.code_counts.assign(heads * S, 0);
  cache.code_bias.assign(heads * S, -INFINITY);
  cache.code_means.assign(heads * S * D, 0.0f);
}

// Folds the n positions in slots [slot, slot + n) into the per-code counts and running means
// (mean += (v - mean) / count, key by key), then refreshes log count_s.
void fold_slots(const VQAttentionProblem& p, const HeadCache& c, int64_t slot, int64_t n) {
  const int64_t D = p.dim;
  for (int64_t j = slot; j < slot + n; ++j) {
    const int64_t s = c.slot_codes[j];
    const float share = 1.0f / static_cast<float>(++c.counts[s]);
    float* mean = c.means + s * D;
    const float* value = c.values + j * D;
#pragma omp simd
    for (int64_t d = 0; d < D; ++d) mean[d] += (value[d] - mean[d]) * share;
  }
  for (int64_t s = 0; s < p.codes; ++s)
    c.bias[s] = c.counts[s] > 0 ? static_cast<float>(std::log(static_cast<double>(c.counts[s]))) : -INFINITY;
}

// The window of the query at `position` as at most two runs of contiguous slots: positions
// [w0, position] sit in slots w0 mod 2L onwards, wrapping once at 2L.
struct SlotRun {
  int64_t slot, count, column;  // the first slot, how many, and the first's column in the window scores
};
std::vector<SlotRun> window_runs(int64_t w0, int64_t position, int64_t slots) {
  const int64_t first = w0 % slots, cols = position + 1 - w0, before_wrap = std::min(cols, slots - first);
  std::vector<SlotRun> runs = {{first, before_wrap, 0}};
  if (before_wrap < cols) runs.push_back({0, cols - before_wrap, before_wrap});
  return runs;
}

// Scratch of one thread: the window scores (2L), the code scores (S), the cache scores (S), the band
// (offset rows).
struct StepScratch {
  std::vector<float> window, codes, cached, band;
};

// scores (n) = scale * rows (n, D) @ x (D): one dot product per row. One vector against a few
// hundred rows: plain vectorised loops beat a GEMM, which would pack the rows first.
void score_rows(const float* rows, int64_t n, int64_t D, const float* x, float scale, float* scores) {
  for (int64_t j = 0; j < n; ++j) {
    const float* row = rows + j * D;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t d = 0; d < D; ++d) sum += row[d] * x[d];
    scores[j] = scale * sum;
  }
}

// out (D) += weights (n) @ rows (n, D).
void add_weighted_rows(const float* weights, const float* rows, int64_t n, int64_t D, float* out) {
  for (int64_t j = 0; j < n; ++j) {
    const float w = weights[j], *row = rows + j * D;
#pragma omp simd
    for (int64_t d = 0; d < D; ++d) out[d] += w * row[d];
  }
}

// The query at `position` (its value and code already in their slot) against its window (its block
// up to itself and the block before, plus the band's position term) and the codes of the older
// keys -> out (D). Every key is a code, so the query meets each code once (S dot products) and the
// window's scores are looked up by code. q and qp (D); r (offset rows, D) or null.
void attend_position(const VQAttentionProblem& p, const HeadCache& c, const float* codebook, const float* offsets,
                     int64_t position, const float* q, const float* qp, StepScratch& s, float* out) {
  const int64_t D = p.dim, S = p.codes, L = p.block, slots = 2 * L;
  const int64_t w0 = std::max<int64_t>(0, (position / L - 1) * L), cols = position + 1 - w0;
  const std::vector<SlotRun> runs = window_runs(w0, position, slots);
  float *window = s.window.data(), *code_scores = s.codes.data(), *cached = s.cached.data();
  score_rows(codebook, S, D, q, p.scale, code_scores);  // scale * q . c_s
  for (const SlotRun& run : runs)
    for (int64_t j = 0; j < run.count; ++j) window[run.column + j] = code_scores[c.slot_codes[run.slot + j]];
  if (p.position_bias) {
    // The band's keys from max(0, position - L) to position, rows L - (position - first) .. L.
    const int64_t first = std::max<int64_t>(0, position - L), n = position + 1 - first;
    score_rows(offsets + (L + 1 - n) * D, n, D, qp, p.scale, s.band.data());
    for (int64_t e = 0; e < n; ++e) window[first - w0 + e] += s.band[e];
  }
  const bool older = position >= 2 * L;  // some keys have left the window for the codes
  float m = row_max(window, cols);
  if (older) {
#pragma omp simd
    for (int64_t code = 0; code < S; ++code) cached[code] = code_scores[code] + c.bias[code];
    m = std::max(m, row_max(cached, S));
  }
  const float sum = exp_shifted(window, m, window, cols) + (older ? exp_shifted(cached, m, cached, S) : 0.0f);
  std::fill_n(out, D, 0.0f);
  for (const SlotRun& run : runs) add_weighted_rows(window + run.column, c.values + run.slot * D, run.count, D, out);
  if (older) add_weighted_rows(cached, c.means, S, D, out);
  const float inverse = 1.0f / sum;
#pragma omp simd
  for (int64_t d = 0; d < D; ++d) out[d] *= inverse;
}

}  // namespace

void vq_attention_step_forward(const VQAttentionProblem& p, VQAttentionCache& cache, const VQAttentionInputs& in,
                               float* out) {
  const int64_t heads = p.batch * p.heads, T = p.length, D = p.dim, S = p.codes, L = p.block, slots = 2 * L;
  if (cache.values.empty()) size_cache(p, cache);
  parallel_for(heads, T * (slots + 2 * S) * D, [&](int64_t begin, int64_t end) {
    StepScratch scratch{std::vector<float>(slots), std::vector<float>(S), std::vector<float>(S),
                        std::vector<float>(p.position_bias ? vq_offset_rows(p) : 0)};
    for (int64_t bh = begin; bh < end; ++bh) {
      const vq::HeadData h = vq::head_data(p, in, bh);
      const HeadCache c = head_cache(p, cache, bh);
      for (int64_t e = 0; e < T; ++e) {
        const int64_t position = cache.position + e, slot = position % slots;
        // A new block starts: the block two before, in the slots it is about to take, leaves the window.
        if (position % L == 0 && position >= 2 * L) fold_slots(p, c, slot, L);
        std::copy_n(h.v + e * D, D, c.values + slot * D);
        c.slot_codes[slot] = h.codes[e];
        attend_position(p, c, h.codebook, h.offsets, position, h.q + e * D,
                        p.position_bias ? h.position_queries + e * D : nullptr, scratch, out + (bh * T + e) * D);
      }
    }
  });
  cache.position += T;
}

}  // namespace ladder
