// Linear attention on feature-mapped queries and keys: the chunked causal product as one fused op
// (core/kernels/linear_attention.cpp does the work), and the attention composed around it.
#include <utility>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/linear_attention.h"
#include "core/ops.h"

namespace ladder {

namespace {

struct LinearDims {
  int64_t B, H, T, S, M, D;
};

LinearDims check_linear(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                        const LinearAttentionOptions& options) {
  if (q.dim() != 4 || k.dim() != 4)
    fail(op, "q and k must be (B,H,T,M) and (B,H,S,M) (batch, heads, positions, features), got ",
         shape_str(q.shape()), " and ", shape_str(k.shape()));
  const LinearDims d{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.defined() ? v.size(-1) : 0};
  if (k.size(0) != d.B || k.size(1) != d.H || k.size(3) != d.M)
    fail(op, "q ", shape_str(q.shape()), " and k ", shape_str(k.shape()),
         " must agree in batch, heads and features: (B,H,T,M) and (B,H,S,M)");
  if (v.defined() && (v.dim() != 4 || v.size(0) != d.B || v.size(1) != d.H || v.size(2) != d.S))
    fail(op, "v must be (B,H,S,D) with k's first three sizes ", shape_str(k.shape()), ", got ", shape_str(v.shape()));
  if (options.causal && d.T != d.S)
    fail(op, "causal linear attention needs as many queries as keys (one sequence), got T = ", d.T, " and S = ",
         d.S, "; for generation carry the state S += phi(k) v^T step by step instead");
  if (options.causal && options.chunk < 1) fail(op, "chunk must be >= 1, got ", options.chunk);
  if (!(options.eps > 0)) fail(op, "eps must be > 0 (it keeps the normaliser away from 0), got ", options.eps);
  const Tensor& padding = options.key_padding_mask;
  if (padding.defined() && padding.shape() != Shape{d.B, d.S})
    fail(op, "key_padding_mask must be (B,S) = (", d.B, ",", d.S, "), 1 for a real key and 0 for padding, got ",
         shape_str(padding.shape()));
  return d;
}

// Padding keys get all-zero features: they then add nothing to the sums, numerator or normaliser.
Tensor hide_padding(const Tensor& k, const LinearDims& d, const Tensor& key_padding_mask) {
  if (!key_padding_mask.defined()) return k;
  return k * reshape(key_padding_mask.detach(), {d.B, 1, d.S, 1});
}

CausalProductProblem product_problem(const Tensor& q, const Tensor& v, int64_t chunk) {
  return {.heads = q.size(0) * q.size(1), .length = q.size(2), .features = q.size(3), .values = v.size(3),
          .chunk = chunk};
}

void check_product(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, int64_t chunk) {
  if (q.dim() != 4 || k.shape() != q.shape() || v.dim() != 4 || v.size(0) != q.size(0) || v.size(1) != q.size(1) ||
      v.size(2) != q.size(2))
    fail(op, "expects q and k (B,H,T,M) of one shape and v (B,H,T,E), got ", shape_str(q.shape()), ", ",
         shape_str(k.shape()), " and ", shape_str(v.shape()));
  if (chunk < 1) fail(op, "chunk must be >= 1, got ", chunk);
}

}  // namespace

// q k (B,H,T,M), v (B,H,T,E) -> (B,H,T,E). The backward reads q, k and v again and rebuilds the
// carried states chunk by chunk (linear_attention.h).
Tensor causal_linear_product(const Tensor& q, const Tensor& k, const Tensor& v, int64_t chunk) {
  const char* op = "causal_linear_product";
  check_product(op, q, k, v, chunk);
  const CausalProductProblem p = product_problem(q, v, chunk);
  Tensor out = empty(v.shape());
  causal_product_forward(p, q.data(), k.data(), v.data(), out.data(), nullptr);
  return record(op, out, {q, k, v}, Saved{q, k, v},
                [p, q = q.detach(), k = k.detach(), v = v.detach()](const Tensor& gout, NeedsGrad) -> Grads {
                  Tensor dq = empty(q.shape()), dk = empty(k.shape()), dv = empty(v.shape());
                  causal_product_backward(p, q.data(), k.data(), v.data(), nullptr, nullptr, gout.data(), dq.data(),
                                          dk.data(), dv.data());
                  return {dq, dk, dv};
                });
}

Tensor causal_linear_product_naive(const Tensor& q, const Tensor& k, const Tensor& v) {
  check_product("causal_linear_product_naive", q, k, v, 1);
  const int64_t T = q.size(2);
  return matmul(matmul(q, k, {.transpose_b = true}) * tril_mask(T, T), v);
}

namespace {

// phi(x) = elu(x) + 1, with ops: for the paths that do not fuse it into the chunked product.
Tensor elu_plus_one(const Tensor& x) { return elu(x) + 1.0f; }

// Causal linear attention as one op: out = num / (den + eps) from the chunked product, which
// normalises and, with elu_features, applies phi to the raw q and k itself (q k (B,H,T,M), v
// (B,H,T,D)). No feature tensor, [v, 1] or unnormalised product is ever stored: each would be
// another pass over memory, which is what limits long sequences.
Tensor causal_normalised_product(const Tensor& q, const Tensor& k, const Tensor& v, int64_t chunk, float eps,
                                 bool elu_features) {
  CausalProductProblem p = product_problem(q, v, chunk);
  p.normalise = true, p.elu_features = elu_features, p.eps = eps;
  Tensor out = empty(v.shape()), denominators = empty({q.size(0), q.size(1), q.size(2)});  // den + eps per row
  causal_product_forward(p, q.data(), k.data(), v.data(), out.data(), denominators.data());
  return record("causal_linear_attention", out, {q, k, v}, Saved{q, k, v, out, denominators},
                [p, q = q.detach(), k = k.detach(), v = v.detach(), out = out.detach(),
                 denominators](const Tensor& gout, NeedsGrad) -> Grads {
                  Tensor dq = empty(q.shape()), dk = empty(k.shape()), dv = empty(v.shape());
                  causal_product_backward(p, q.data(), k.data(), v.data(), out.data(), denominators.data(),
                                          gout.data(), dq.data(), dk.data(), dv.data());
                  return {dq, dk, dv};
                });
}

// The feature-mapped (q, k) the unfused paths work on: elu + 1 applied when asked, else as given.
std::pair<Tensor, Tensor> mapped(const Tensor& q, const Tensor& k, const LinearAttentionOptions& options) {
  if (!options.elu_features) return {q, k};
  return {elu_plus_one(q), elu_plus_one(k)};
}

}  // namespace

// Non-causal: S = sum_j k_j v_j^T (B,H,M,D) and z = sum_j k_j (B,H,M) once, then every query reads
// them: O(T M D), never (T,S). Causal: the fused chunked product, normalised inside (and applying
// elu + 1 inside when it can: padding must zero the keys' features, so it maps them first).
Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const LinearAttentionOptions& options) {
  const LinearDims d = check_linear("linear_attention", q, k, v, options);
  if (options.causal && !options.key_padding_mask.defined())
    return causal_normalised_product(q, k, v, options.chunk, options.eps, options.elu_features);
  const auto [queries, features] = mapped(q, k, options);
  const Tensor keys = hide_padding(features, d, options.key_padding_mask);
  if (options.causal) return causal_normalised_product(queries, keys, v, options.chunk, options.eps, false);
  const Tensor state = matmul(keys, v, {.transpose_a = true});          // (B,H,M,D)
  const Tensor z = sum(keys, {2}, /*keepdim=*/true);                      // (B,H,1,M)
  const Tensor numerator = matmul(queries, state);                       // (B,H,T,D)
  const Tensor normaliser = matmul(queries, z, {.transpose_b = true});   // (B,H,T,1)
  return numerator / (normaliser + options.eps);
}

// A_ij = q_i . k_j over the keys query i sees, each row divided by its sum + eps -> (B,H,T,S).
Tensor linear_attention_weights(const Tensor& q, const Tensor& k, const LinearAttentionOptions& options) {
  const LinearDims d = check_linear("linear_attention_weights", q, k, Tensor(), options);
  const auto [queries, keys] = mapped(q, k, options);
  Tensor scores = matmul(queries, hide_padding(keys, d, options.key_padding_mask), {.transpose_b = true});
  if (options.causal) scores = scores * tril_mask(d.T, d.S);
  return scores / (sum(scores, {3}, /*keepdim=*/true) + options.eps);
}

Tensor linear_attention_naive(const Tensor& q, const Tensor& k, const Tensor& v,
                              const LinearAttentionOptions& options) {
  check_linear("linear_attention_naive", q, k, v, options);
  return matmul(linear_attention_weights(q, k, options), v);
}

}  // namespace ladder
