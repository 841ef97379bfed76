// Transformer-VQ generation: one position at a time against a cache of fixed size (see
// vq_attention.h, VQAttentionCache and vq_attention_step_forward).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"
#include "core/kernels/softmax.h"
#include "core/kernels/vq_attention.h"
#include "core/kernels/vq_attention_blocks.h"

namespace ladder {

namespace {

// One head's part of a VQAttentionCache.
struct HeadCache {
  float *keys, *values;          // (2L, D), position t in slot t mod 2L
  int64_t *slot_codes, *counts;  // (2L) and (S)
  double* sums;                  // (S, D)
  float *bias, *means;           // (S) and (S, D): what a query reads of the counts and sums
};

HeadCache head_cache(const VQAttentionProblem& p, VQAttentionCache& cache, int64_t bh) {
  const int64_t slots = 2 * p.block, S = p.codes, D = p.dim;
  return {cache.keys.data() + bh * slots * D,   cache.values.data() + bh * slots * D,
          cache.codes.data() + bh * slots,      cache.code_counts.data() + bh * S,
          cache.code_sums.data() + bh * S * D,  cache.code_bias.data() + bh * S,
          cache.code_means.data() + bh * S * D};
}

void size_cache(const VQAttentionProblem& p, VQAttentionCache& cache) {
  const int64_t heads = p.batch * p.heads, slots = 2 * p.block, S = p.codes, D = p.dim;
  cache.keys.assign(heads * slots * D, 0.0f);
  cache.values.assign(heads * slots * D, 0.0f);
  cache.codes.assign(heads * slots, 0);
  cache.code_counts.assign(heads * S, 0);
  cache.code_sums.assign(heads * S * D, 0.0);
  cache.code_bias.assign(heads * S, -INFINITY);
  cache.code_means.assign(heads * S * D, 0.0f);
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

// Scratch of one thread: the window scores (2L), the code scores (S), the band (offset rows).
struct StepScratch {
  std::vector<float> window, cached, band;
};

// The query at `position` (its key and value already in their slot) against its window (its block up
// to itself and the block before, plus the band's position term) and the codes of the older keys ->
// out (D). q and qp (D); r (offset rows, D) or null.
void attend_position(const VQAttentionProblem& p, const HeadCache& c, const float* codebook, const float* offsets,
                     int64_t position, const float* q, const float* qp, StepScratch& s, float* out) {
  const int64_t D = p.dim, S = p.codes, L = p.block, slots = 2 * L;
  const int64_t w0 = std::max<int64_t>(0, (position / L - 1) * L), cols = position + 1 - w0;
  const std::vector<SlotRun> runs = window_runs(w0, position, slots);
  float *window = s.window.data(), *cached = s.cached.data();
  // window (cols) = scale * q (1, D) @ keys^T, one GEMM per run of slots
  for (const SlotRun& run : runs)
    gemm(false, true, 1, run.count, D, p.scale, q, D, c.keys + run.slot * D, D, 0.0f, window + run.column, run.count);
  if (p.position_bias) {
    const int64_t nearest = std::min(L, position);  // offsets 0 .. nearest are in the band
    // band (nearest + 1) = scale * qp (1, D) @ r^T: offset m is the key at position - m
    gemm(false, true, 1, nearest + 1, D, p.scale, qp, D, offsets, D, 0.0f, s.band.data(), nearest + 1);
    for (int64_t m = 0; m <= nearest; ++m) window[position - m - w0] += s.band[m];
  }
  const bool older = position >= 2 * L;  // some keys have left the window for the codes
  float m = row_max(window, cols);
  if (older) {
    gemm(false, true, 1, S, D, p.scale, q, D, codebook, D, 0.0f, cached, S);
    for (int64_t code = 0; code < S; ++code) cached[code] += c.bias[code];
    m = std::max(m, row_max(cached, S));
  }
  const float sum = exp_shifted(window, m, window, cols) + (older ? exp_shifted(cached, m, cached, S) : 0.0f);
  const float inverse = 1.0f / sum;
  for (const SlotRun& run : runs)
    gemm(false, false, 1, D, run.count, inverse, window + run.column, run.count, c.values + run.slot * D, D,
         run.column == 0 ? 0.0f : 1.0f, out, D);
  if (older) gemm(false, false, 1, D, S, inverse, cached, S, c.means, D, 1.0f, out, D);
}

}  // namespace

void vq_attention_step_forward(const VQAttentionProblem& p, VQAttentionCache& cache, const VQAttentionInputs& in,
                               float* out) {
  const int64_t heads = p.batch * p.heads, T = p.length, D = p.dim, S = p.codes, L = p.block, slots = 2 * L;
  if (cache.keys.empty()) size_cache(p, cache);
  parallel_for(heads, T * (slots + S) * D, [&](int64_t begin, int64_t end) {
    StepScratch scratch{std::vector<float>(slots), std::vector<float>(S),
                        std::vector<float>(p.position_bias ? vq_offset_rows(p) : 0)};
    for (int64_t bh = begin; bh < end; ++bh) {
      const vq::HeadData h = vq::head_data(p, in, bh);
      const HeadCache c = head_cache(p, cache, bh);
      for (int64_t e = 0; e < T; ++e) {
        const int64_t position = cache.position + e, slot = position % slots;
        // A new block starts: the block two before, in the slots it is about to take, leaves the window.
        if (position % L == 0 && position >= 2 * L) {
          vq::fold_keys(L, D, c.slot_codes + slot, c.values + slot * D, 1, c.counts, c.sums);
          vq::read_codes(S, D, c.counts, c.sums, c.bias, c.means);
        }
        std::copy_n(h.khat + e * D, D, c.keys + slot * D);
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
