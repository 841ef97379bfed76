// Linear attention on feature-mapped queries and keys: the chunked causal product as one fused op
// (core/kernels/linear_attention.cpp does the work), and the attention composed around it.
#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/linear_attention.h"
#include "core/kernels/parallel.h"
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
  causal_product_forward(p, q.data(), k.data(), v.data(), out.data());
  return record(op, out, {q, k, v}, Saved{q, k, v},
                [p, q = q.detach(), k = k.detach(), v = v.detach()](const Tensor& gout, NeedsGrad) -> Grads {
                  Tensor dq = empty(q.shape()), dk = empty(k.shape()), dv = empty(v.shape());
                  causal_product_backward(p, q.data(), k.data(), v.data(), gout.data(), dq.data(), dk.data(),
                                          dv.data());
                  return {dq, dk, dv};
                });
}

Tensor causal_linear_product_naive(const Tensor& q, const Tensor& k, const Tensor& v) {
  check_product("causal_linear_product_naive", q, k, v, 1);
  const int64_t T = q.size(2);
  return matmul(matmul(q, k, {.transpose_b = true}) * tril_mask(T, T), v);
}

namespace {

// Causal linear attention as one op: the chunked product of [v, 1] (q k (B,H,T,M), v (B,H,T,D)),
// whose last column is the normaliser, divided through: out = numerator / (normaliser + eps). One
// op instead of concat, product, two narrows and a division keeps no (B,H,T,D+1) tensor in the
// graph and makes fewer passes over memory, which is what limits long sequences.
Tensor causal_normalised_product(const Tensor& q, const Tensor& k, const Tensor& v, int64_t chunk, float eps) {
  const int64_t D = v.size(3), rows = v.numel() / std::max<int64_t>(D, 1);
  Shape wide_shape = v.shape();
  wide_shape.back() = D + 1;
  Tensor wide = empty(wide_shape), both = empty(wide_shape);  // [v, 1] and the product of q, k with it
  const float* pv = v.data();
  float* pw = wide.data();
  parallel_for(rows, D, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      std::copy_n(pv + r * D, D, pw + r * (D + 1));
      pw[r * (D + 1) + D] = 1;
    }
  });
  const CausalProductProblem p = product_problem(q, wide, chunk);
  causal_product_forward(p, q.data(), k.data(), wide.data(), both.data());
  Tensor out = empty(v.shape()), denominators = empty({rows});  // (B,H,T,D) and normaliser + eps per row
  const float* pb = both.data();
  float *po = out.data(), *pd = denominators.data();
  parallel_for(rows, D, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      pd[r] = pb[r * (D + 1) + D] + eps;
      for (int64_t j = 0; j < D; ++j) po[r * D + j] = pb[r * (D + 1) + j] / pd[r];
    }
  });
  return record("causal_linear_attention", out, {q, k, v}, Saved{q, k, wide, out, denominators},
                [p, q = q.detach(), k = k.detach(), wide, out = out.detach(), denominators, rows,
                 D](const Tensor& gout, NeedsGrad) -> Grads {
                  // The product's gradient: g / (n + eps) for the numerator, -sum(g * out) / (n + eps)
                  // for the normaliser column.
                  Tensor gwide = empty(wide.shape()), dq = empty(q.shape()), dk = empty(k.shape());
                  Tensor dwide = empty(wide.shape()), dv = empty(out.shape());
                  const float *pg = gout.data(), *py = out.data(), *pden = denominators.data();
                  float* pgw = gwide.data();
                  parallel_for(rows, D, [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r) {
                      float along = 0;
                      for (int64_t j = 0; j < D; ++j) {
                        pgw[r * (D + 1) + j] = pg[r * D + j] / pden[r];
                        along += pg[r * D + j] * py[r * D + j];
                      }
                      pgw[r * (D + 1) + D] = -along / pden[r];
                    }
                  });
                  causal_product_backward(p, q.data(), k.data(), wide.data(), gwide.data(), dq.data(), dk.data(),
                                          dwide.data());
                  const float* pdw = dwide.data();
                  float* pdv = dv.data();
                  parallel_for(rows, D, [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r) std::copy_n(pdw + r * (D + 1), D, pdv + r * D);
                  });
                  return {dq, dk, dv};
                });
}

}  // namespace

// Non-causal: S = sum_j k_j v_j^T (B,H,M,D) and z = sum_j k_j (B,H,M) once, then every query reads
// them: O(T M D), never (T,S). Causal: the fused product of [v, 1], whose last column is the
// normaliser (causal_normalised_product).
Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const LinearAttentionOptions& options) {
  const LinearDims d = check_linear("linear_attention", q, k, v, options);
  const Tensor keys = hide_padding(k, d, options.key_padding_mask);
  if (options.causal) return causal_normalised_product(q, keys, v, options.chunk, options.eps);
  const Tensor state = matmul(keys, v, {.transpose_a = true});          // (B,H,M,D)
  const Tensor z = sum(keys, {2}, /*keepdim=*/true);                      // (B,H,1,M)
  const Tensor numerator = matmul(q, state);                             // (B,H,T,D)
  const Tensor normaliser = matmul(q, z, {.transpose_b = true});         // (B,H,T,1)
  return numerator / (normaliser + options.eps);
}

// A_ij = q_i . k_j over the keys query i sees, each row divided by its sum + eps -> (B,H,T,S).
Tensor linear_attention_weights(const Tensor& q, const Tensor& k, const LinearAttentionOptions& options) {
  const LinearDims d = check_linear("linear_attention_weights", q, k, Tensor(), options);
  Tensor scores = matmul(q, hide_padding(k, d, options.key_padding_mask), {.transpose_b = true});
  if (options.causal) scores = scores * tril_mask(d.T, d.S);
  return scores / (sum(scores, {3}, /*keepdim=*/true) + options.eps);
}

Tensor linear_attention_naive(const Tensor& q, const Tensor& k, const Tensor& v,
                              const LinearAttentionOptions& options) {
  check_linear("linear_attention_naive", q, k, v, options);
  return matmul(linear_attention_weights(q, k, options), v);
}

}  // namespace ladder
