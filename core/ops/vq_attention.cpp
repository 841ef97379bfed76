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

// Checks q, khat and v and the options; returns the problem without the codebook's size.
VQAttentionProblem check_sequence(const char* op, const Tensor& q, const Tensor& khat, const Tensor& v,
                                  const VQAttentionOptions& options) {
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
  return p;
}

// Checks the codebook (H,S,D) and the code indices (B,H,T) and fills in S.
void check_codes(const char* op, VQAttentionProblem& p, const std::vector<int64_t>& code_index,
                 const Tensor& codebook) {
  const int64_t H = p.heads, D = p.dim;
  if (codebook.dim() != 3 || codebook.size(0) != H || codebook.size(2) != D)
    fail(op, "codebook must be (H,S,D) = (", H, ",S,", D, "), one per head, got ", shape_str(codebook.shape()),
         "; for one codebook shared by every head, attend with H = 1");
  p.codes = codebook.size(1);
  const int64_t keys = p.batch * H * p.length;
  if (static_cast<int64_t>(code_index.size()) != keys)
    fail(op, "code_index holds ", code_index.size(), " codes but (B,H,T) = (", p.batch, ",", H, ",", p.length,
         ") needs ", keys, ", one per key");
  for (size_t e = 0; e < code_index.size(); ++e)
    if (code_index[e] < 0 || code_index[e] >= p.codes)
      fail(op, "code_index holds ", code_index[e], " at flat position ", e, "; codes are in [0, ", p.codes,
           ") (the codebook has S = ", p.codes, " rows)");
}

// (T,T): 1 where query i reads key j exactly, i.e. j's block is i's or the one before.
Tensor window_mask(int64_t T, int64_t block) {
  Tensor mask = zeros({T, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = std::max<int64_t>(0, (i / block - 1) * block); j < T; ++j) mask.data()[i * T + j] = 1;
  return mask;
}

}  // namespace

// q khat v (B,H,T,D) -> (B,H,T,D). The forward keeps out and lse (B,H,T); the backward reads q, khat,
// v, the codebook and the indices again and rebuilds the cache as it walks the blocks backwards.
Tensor vq_attention(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                    const Tensor& codebook, const Tensor& v, const VQAttentionOptions& options) {
  const char* op = "vq_attention";
  if (!v.defined()) fail(op, "v is undefined: give the values (B,H,T,D) the weights multiply");
  VQAttentionProblem p = check_sequence(op, q, khat, v, options);
  check_codes(op, p, code_index, codebook);
  Tensor out = empty(q.shape()), lse = empty({p.batch, p.heads, p.length});
  vq_attention_forward(p, q.data(), khat.data(), code_index.data(), codebook.data(), v.data(), out.data(),
                       lse.data());
  // The codebook and the indices are read, not differentiated: they are saved, not inputs.
  return record(op, out, {q, khat, v}, Saved{q, khat, v, out, codebook},
                [p, codes = code_index, q = q.detach(), khat = khat.detach(), v = v.detach(), out = out.detach(), lse,
                 codebook = codebook.detach()](const Tensor& gout, NeedsGrad) -> Grads {
                  Tensor dq = empty(q.shape()), dkhat = empty(q.shape()), dv = empty(q.shape());
                  vq_attention_backward(p, q.data(), khat.data(), codes.data(), codebook.data(), v.data(),
                                        out.data(), lse.data(), gout.data(), dq.data(), dkhat.data(), dv.data());
                  return {dq, dkhat, dv};
                });
}

Tensor vq_attention_weights(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                            const Tensor& codebook, const VQAttentionOptions& options) {
  const char* op = "vq_attention_weights";
  VQAttentionProblem p = check_sequence(op, q, khat, Tensor(), options);
  check_codes(op, p, code_index, codebook);
  // The older keys as the cache sees them: the codes their indices name, constants (B,H,T,D).
  const Tensor coded_keys = gather_codes(codebook, code_index, {p.batch, p.heads, p.length});
  const Tensor exact = matmul(q, khat, {.transpose_b = true});             // (B,H,T,T)
  const Tensor through_codes = matmul(q, coded_keys, {.transpose_b = true});  // the same when khat = codes
  const Tensor scores = where(window_mask(p.length, p.block), exact, through_codes) * p.scale;
  return masked_softmax(scores, tril_mask(p.length, p.length));
}

Tensor vq_attention_naive(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                          const Tensor& codebook, const Tensor& v, const VQAttentionOptions& options) {
  check_sequence("vq_attention_naive", q, khat, v, options);
  return matmul(vq_attention_weights(q, khat, code_index, codebook, options), v);
}

Tensor vq_attention_step(VQAttentionCache& cache, const Tensor& q, const Tensor& khat,
                         const std::vector<int64_t>& code_index, const Tensor& codebook, const Tensor& v,
                         const VQAttentionOptions& options) {
  const char* op = "vq_attention_step";
  if (!v.defined()) fail(op, "v is undefined: give the values (B,H,T,D) of the new positions");
  VQAttentionProblem p = check_sequence(op, q, khat, v, options);
  check_codes(op, p, code_index, codebook);
  const int64_t heads = p.batch * p.heads;
  if (!cache.keys.empty() && (cache.keys.size() != static_cast<size_t>(heads * 2 * p.block * p.dim) ||
                              cache.code_counts.size() != static_cast<size_t>(heads * p.codes)))
    fail(op, "the cache was filled with another shape: it holds ", cache.code_counts.size(),
         " per-code counts and ", cache.keys.size(), " window values, this call needs B*H*S = ", heads * p.codes,
         " and B*H*2L*D = ", heads * 2 * p.block * p.dim, "; start a new VQAttentionCache for a new setting");
  Tensor out = empty(q.shape());
  vq_attention_step_forward(p, cache, q.data(), khat.data(), code_index.data(), codebook.data(), v.data(),
                            out.data());
  return out;
}

}  // namespace ladder
