// Transformer-VQ attention: the block-wise op (core/kernels/vq_attention.cpp does the work), its
// step for generation, and the quadratic twin written with plain ops.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/vq_attention.h"
#include "core/ops.h"

namespace ladder {

namespace {

// Checks q, khat and v, the options and the position bias; returns the problem without the codebook's size.
VQAttentionProblem check_sequence(const char* op, const Tensor& q, const Tensor& khat, const Tensor& v,
                                  const VQAttentionOptions& options, const VQPositionBias& bias) {
  if (q.dim() != 4)
    fail(op, "q must be (B,H,T,D) (batch, heads, positions, head dim), got ", shape_str(q.shape()));
  if (khat.shape() != q.shape())
    fail(op, "khat must have q's shape ", shape_str(q.shape()), " (one quantised key per position), got ",
         shape_str(khat.shape()));
  if (v.defined() && v.shape() != q.shape())
    fail(op, "v must have q's shape ", shape_str(q.shape()), " (one value per position), got ", shape_str(v.shape()));
  if (q.size(3) < 1) fail(op, "the head dim D must be >= 1, got q ", shape_str(q.shape()));
  if (options.block < 1) fail(op, "block must be >= 1 (positions per block; the paper uses 512), got ", options.block);
  if (options.scale && !std::isfinite(*options.scale)) fail(op, "scale must be a finite number, got ", *options.scale);
  VQAttentionProblem p;
  p.batch = q.size(0);
  p.heads = q.size(1);
  p.length = q.size(2);
  p.dim = q.size(3);
  p.block = options.block;
  p.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(p.dim));
  p.causal = options.causal;
  p.stop_cache_gradient = options.stop_cache_gradient;
  p.position_bias = bias.queries.defined() || bias.offsets.defined();
  if (!p.position_bias) return p;
  if (!bias.queries.defined() || !bias.offsets.defined())
    fail(op, "the position bias needs both its queries (B,H,T,D) and its offsets (H,P,D); got only the ",
         bias.queries.defined() ? "queries" : "offsets");
  if (bias.queries.shape() != q.shape())
    fail(op, "the position bias's queries must have q's shape ", shape_str(q.shape()), ", got ",
         shape_str(bias.queries.shape()));
  const Shape offsets{p.heads, vq_offset_rows(p), p.dim};
  if (bias.offsets.shape() != offsets)
    fail(op, "the position bias's offsets must be (H,P,D) = ", shape_str(offsets), ", one row per offset i - j ",
         p.causal ? "from L down to 0" : "from L down to -L", " (block L = ", p.block, "), got ",
         shape_str(bias.offsets.shape()));
  return p;
}

// Checks the codebook (H,S,D) and the code indices (B,H,T) and fills in S. A hidden key (code -1)
// is allowed only where `hidden_allowed`.
void check_codes(const char* op, VQAttentionProblem& p, const std::vector<int64_t>& code_index,
                 const Tensor& codebook, bool hidden_allowed) {
  const int64_t H = p.heads, D = p.dim;
  if (codebook.dim() != 3 || codebook.size(0) != H || codebook.size(2) != D)
    fail(op, "codebook must be (H,S,D) = (", H, ",S,", D, "), one per head, got ", shape_str(codebook.shape()),
         "; for one codebook shared by every head, attend with H = 1");
  p.codes = codebook.size(1);
  const int64_t keys = p.batch * H * p.length;
  if (static_cast<int64_t>(code_index.size()) != keys)
    fail(op, "code_index holds ", code_index.size(), " codes but (B,H,T) = (", p.batch, ",", H, ",", p.length,
         ") needs ", keys, ", one per key");
  const int64_t lowest = hidden_allowed ? -1 : 0;
  for (size_t e = 0; e < code_index.size(); ++e)
    if (code_index[e] < lowest || code_index[e] >= p.codes)
      fail(op, "code_index holds ", code_index[e], " at flat position ", e, "; codes are in [0, ", p.codes,
           ") (the codebook has S = ", p.codes, " rows)", hidden_allowed ? ", or -1 for a key no query reads" : "");
}

// Checks that every key khat (B,H,T,D) not hidden is the code its index names, to 1e-5 of the
// code's largest entry (or of 1, if that is larger): the kernels read each key as its code (khat
// carries only the gradient).
void check_keys_are_codes(const char* op, const VQAttentionProblem& p, const Tensor& khat,
                          const std::vector<int64_t>& code_index, const Tensor& codebook) {
  const int64_t D = p.dim;
  for (int64_t key = 0; key < p.batch * p.heads * p.length; ++key) {
    const int64_t z = code_index[static_cast<size_t>(key)];
    if (z < 0) continue;
    const int64_t h = key / p.length % p.heads;
    const float* code = codebook.data() + (h * p.codes + z) * D;
    const float* row = khat.data() + key * D;
    float largest = 1, apart = 0;
#pragma omp simd reduction(max : largest, apart)
    for (int64_t d = 0; d < D; ++d) {
      const float size = std::abs(code[d]), off = std::abs(row[d] - code[d]);
      largest = largest > size ? largest : size;
      apart = apart > off ? apart : off;
    }
    if (!(apart <= 1e-5f * largest))
      fail(op, "khat at (b,h,t) = (", key / p.length / p.heads, ",", h, ",", key % p.length, ") is not code ", z,
           " of head ", h, "'s codebook, which code_index names (they differ by ", apart,
           "); every key is read as its code, so khat must be the codes (the quantiser's straight_through keys)");
  }
}

VQAttentionInputs inputs_of(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                            const Tensor& codebook, const Tensor& v, const VQPositionBias& bias) {
  return {q.data(),
          khat.data(),
          v.defined() ? v.data() : nullptr,
          code_index.data(),
          codebook.data(),
          bias.queries.defined() ? bias.queries.data() : nullptr,
          bias.offsets.defined() ? bias.offsets.data() : nullptr};
}

// (T,T) constants of the dense reference: 1 where query i reads key j exactly (in i's window), and 1
// where they sit in one block.
Tensor window_mask(const VQAttentionProblem& p) {
  const int64_t T = p.length, L = p.block;
  Tensor mask = zeros({T, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      const int64_t apart = i / L - j / L;
      mask.data()[i * T + j] = (p.causal ? apart <= 1 : std::abs(apart) <= 1) ? 1.0f : 0.0f;
    }
  return mask;
}
Tensor same_block_mask(const VQAttentionProblem& p) {
  const int64_t T = p.length;
  Tensor mask = zeros({T, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) mask.data()[i * T + j] = i / p.block == j / p.block ? 1.0f : 0.0f;
  return mask;
}

// (B,H,T,T): 1 where query i sees key j (causal: j <= i; a key with code -1 hidden).
Tensor visible_mask(const VQAttentionProblem& p, const std::vector<int64_t>& code_index) {
  const int64_t T = p.length;
  Tensor readable = empty({p.batch, p.heads, 1, T});  // (B,H,1,T)
  for (size_t e = 0; e < code_index.size(); ++e) readable.data()[e] = code_index[e] < 0 ? 0.0f : 1.0f;
  return (p.causal ? tril_mask(T, T) : ones({T, T})) * readable;
}

// The band's position term, dense (B,H,T,T): qp_i . r_{i-j} where |i - j| <= L (j <= i when causal),
// 0 elsewhere. E (T, P, T) places row m of query i at key i - L + m.
Tensor band_scores(const VQAttentionProblem& p, const VQPositionBias& bias) {
  const int64_t B = p.batch, H = p.heads, T = p.length, P = vq_offset_rows(p);
  Tensor place = zeros({T, P, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t m = 0; m < P; ++m) {
      const int64_t j = i - p.block + m;
      if (j >= 0 && j < T) place.data()[(i * P + m) * T + j] = 1;
    }
  const Tensor by_offset = matmul(bias.queries, bias.offsets, {.transpose_b = true});  // (B,H,T,P)
  return reshape(matmul(reshape(by_offset, {B, H, T, 1, P}), place), {B, H, T, T});
}

}  // namespace

// q khat v (B,H,T,D) [qp (B,H,T,D), r (H,P,D)] -> (B,H,T,D). The forward keeps out and lse (B,H,T);
// the backward reads the inputs, the codebook and the indices again and rebuilds the cache as it walks
// the blocks.
Tensor vq_attention(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                    const Tensor& codebook, const Tensor& v, const VQAttentionOptions& options,
                    const VQPositionBias& bias) {
  const char* op = "vq_attention";
  if (!v.defined()) fail(op, "v is undefined: give the values (B,H,T,D) the weights multiply");
  VQAttentionProblem p = check_sequence(op, q, khat, v, options, bias);
  check_codes(op, p, code_index, codebook, /*hidden_allowed=*/true);
  check_keys_are_codes(op, p, khat, code_index, codebook);
  Tensor out = empty(q.shape()), lse = empty({p.batch, p.heads, p.length});
  vq_attention_forward(p, inputs_of(q, khat, code_index, codebook, v, bias), out.data(), lse.data());
  // The codebook and the indices are read, not differentiated: they are saved, not inputs.
  const Tensor qp = bias.queries, r = bias.offsets;
  return record(op, out, {q, khat, v, qp, r}, Saved{q, khat, v, qp, r, out, codebook},
                [p, codes = code_index, q = q.detach(), khat = khat.detach(), v = v.detach(),
                 qp = qp.defined() ? qp.detach() : qp, r = r.defined() ? r.detach() : r, out = out.detach(), lse,
                 codebook = codebook.detach()](const Tensor& gout, NeedsGrad) -> Grads {
                  Tensor dq = empty(q.shape()), dkhat = empty(q.shape()), dv = empty(q.shape()), dqp, dr;
                  if (p.position_bias) dqp = empty(qp.shape()), dr = empty(r.shape());
                  vq_attention_backward(p, inputs_of(q, khat, codes, codebook, v, {qp, r}), out.data(), lse.data(),
                                        gout.data(),
                                        {dq.data(), dkhat.data(), dv.data(), p.position_bias ? dqp.data() : nullptr,
                                         p.position_bias ? dr.data() : nullptr});
                  return {dq, dkhat, dv, dqp, dr};
                });
}

Tensor vq_attention_weights(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                            const Tensor& codebook, const VQAttentionOptions& options, const VQPositionBias& bias) {
  const char* op = "vq_attention_weights";
  VQAttentionProblem p = check_sequence(op, q, khat, Tensor(), options, bias);
  check_codes(op, p, code_index, codebook, /*hidden_allowed=*/true);
  // The keys outside the window as the cache sees them: the codes their indices name, constants
  // (B,H,T,D); a hidden key's row is code 0, never seen.
  std::vector<int64_t> readable = code_index;
  for (int64_t& z : readable) z = std::max<int64_t>(z, 0);
  const Tensor coded_keys = gather_codes(codebook, readable, {p.batch, p.heads, p.length});
  Tensor exact = matmul(q, khat, {.transpose_b = true});  // (B,H,T,T)
  // Stopped: a query's scores hold the keys of other blocks (the one before) as constants.
  if (p.stop_cache_gradient) exact = where(same_block_mask(p), exact, matmul(q, khat.detach(), {.transpose_b = true}));
  const Tensor through_codes = matmul(q, coded_keys, {.transpose_b = true});  // the same when khat = codes
  Tensor scores = where(window_mask(p), exact, through_codes);
  if (p.position_bias) scores = scores + band_scores(p, bias);
  return masked_softmax(scores * p.scale, visible_mask(p, code_index));
}

Tensor vq_attention_naive(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                          const Tensor& codebook, const Tensor& v, const VQAttentionOptions& options,
                          const VQPositionBias& bias) {
  const VQAttentionProblem p = check_sequence("vq_attention_naive", q, khat, v, options, bias);
  const Tensor weights = vq_attention_weights(q, khat, code_index, codebook, options, bias);
  if (!p.stop_cache_gradient) return matmul(weights, v);
  // Stopped: the values of other blocks are constants to the queries that read them.
  const Tensor same = same_block_mask(p);
  return matmul(weights * same, v) + matmul(weights * (1.0f - same), v.detach());
}

Tensor vq_attention_step(VQAttentionCache& cache, const Tensor& q, const std::vector<int64_t>& code_index,
                         const Tensor& codebook, const Tensor& v, const VQAttentionOptions& options,
                         const VQPositionBias& bias) {
  const char* op = "vq_attention_step";
  if (!v.defined()) fail(op, "v is undefined: give the values (B,H,T,D) of the new positions");
  if (!options.causal)
    fail(op, "generation is causal: each new position reads the ones before it; attend with causal = true "
         "(the encoder form reads the whole sequence at once: use vq_attention)");
  VQAttentionProblem p = check_sequence(op, q, q, v, options, bias);  // each key is its code: no khat
  check_codes(op, p, code_index, codebook, /*hidden_allowed=*/false);
  const int64_t heads = p.batch * p.heads;
  if (!cache.values.empty() && (cache.values.size() != static_cast<size_t>(heads * 2 * p.block * p.dim) ||
                                cache.code_counts.size() != static_cast<size_t>(heads * p.codes)))
    fail(op, "the cache was filled with another shape: it holds ", cache.code_counts.size(),
         " per-code counts and ", cache.values.size(), " window values, this call needs B*H*S = ", heads * p.codes,
         " and B*H*2L*D = ", heads * 2 * p.block * p.dim, "; start a new VQAttentionCache for a new setting");
  Tensor out = empty(q.shape());
  vq_attention_step_forward(p, cache, inputs_of(q, q, code_index, codebook, v, bias), out.data());
  return out;
}

}  // namespace ladder
