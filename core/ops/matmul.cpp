// Matrix multiply, batched, through cblas_sgemm. Transposes are flags passed to BLAS, never copies.
#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"
#include "core/ops/elementwise.h"

namespace ladder {

namespace {

Shape batch_of(const Shape& s) { return {s.begin(), s.end() - 2}; }

// a (...,M,K) (or (...,K,M) with ta) times b (...,K,N) (or (...,N,K) with tb) -> (...,M,N).
// Both at least 2-d; the batch dims broadcast.
Tensor batched_gemm(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int64_t a_rows = a.size(-2), a_cols = a.size(-1), b_rows = b.size(-2), b_cols = b.size(-1);
  const int64_t M = ta ? a_cols : a_rows, K = ta ? a_rows : a_cols;
  const int64_t N = tb ? b_rows : b_cols, Kb = tb ? b_cols : b_rows;
  if (K != Kb) {
    std::string hint;
    if (K == (tb ? b_rows : b_cols)) hint = "; transpose the right operand? (MatmulFlags{.transpose_b = true})";
    else if ((ta ? a_cols : a_rows) == Kb) hint = "; transpose the left operand? (MatmulFlags{.transpose_a = true})";
    fail("matmul", "inner dims differ: ", shape_str(a.shape()), ta ? "^T" : "", " @ ", shape_str(b.shape()),
         tb ? "^T" : "", " multiplies (", M, "x", K, ") by (", Kb, "x", N, ")", hint);
  }
  if (b.dim() == 2 && !ta) {
    // Fold a's batch into its rows: one large GEMM instead of many small ones.
    Shape out_shape = a.shape();
    out_shape.back() = N;
    Tensor out = empty(out_shape);
    const int64_t rows = numel(out_shape) / std::max<int64_t>(N, 1);
    if (K == 0) std::fill_n(out.data(), out.numel(), 0.0f);
    else gemm(false, tb, rows, N, K, 1.0f, a.data(), K, b.data(), b_cols, 0.0f, out.data(), N);
    return out;
  }
  const Broadcast batches(batch_of(a.shape()), batch_of(b.shape()), "matmul");
  Shape out_shape = batches.out_shape();
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = empty(out_shape);
  const int64_t count = numel(batches.out_shape());
  const float *pa = a.data(), *pb = b.data();
  float* po = out.data();
  if (K == 0) std::fill_n(po, out.numel(), 0.0f);
  // Small GEMMs share the threads one batch each; a single large one is threaded by BLAS itself.
  else parallel_for(count, M * N * K, [&](int64_t begin, int64_t end) {
    batches.for_range(begin, end, [&](int64_t i, int64_t ia, int64_t ib) {
      gemm(ta, tb, M, N, K, 1.0f, pa + ia * a_rows * a_cols, a_cols, pb + ib * b_rows * b_cols, b_cols, 0.0f,
           po + i * M * N, N);
    });
  });
  return out;
}

Tensor matmul_2d_or_more(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  Tensor out = batched_gemm(a, b, ta, tb);
  return record("matmul", out, {a, b}, Saved{a, b}, [a = a.detach(), b = b.detach(), ta, tb](const Tensor& gy, NeedsGrad needs) -> Grads {
    // C = A'B' with A' = op(A), B' = op(B):  dA' = dC B'^T,  dB' = A'^T dC.
    Tensor ga, gb;
    if (b.dim() == 2 && !ta) {
      // The forward folded a's batch into rows; fold the same way here (one GEMM each).
      const int64_t K = a.size(-1), N = gy.size(-1), rows = numel(batch_of(a.shape())) * a.size(-2);
      const Tensor a2 = reshape(a, {rows, K}), g2 = reshape(gy, {rows, N});
      if (needs[0]) ga = reshape(batched_gemm(g2, b, false, !tb), a.shape());
      if (needs[1]) gb = tb ? batched_gemm(g2, a2, true, false) : batched_gemm(a2, g2, true, false);
      return {ga, gb};
    }
    if (needs[0]) ga = sum_to(ta ? batched_gemm(b, gy, tb, true) : batched_gemm(gy, b, false, !tb), a.shape());
    if (needs[1]) gb = sum_to(tb ? batched_gemm(gy, a, true, ta) : batched_gemm(a, gy, !ta, false), b.shape());
    return {ga, gb};
  });
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, MatmulFlags flags) {
  if (a.dim() == 0 || b.dim() == 0)
    fail("matmul", "both operands need at least 1 dim, got shapes ", shape_str(a.shape()), " and ",
         shape_str(b.shape()), "; use mul for a scalar");
  if ((a.dim() == 1 && flags.transpose_a) || (b.dim() == 1 && flags.transpose_b))
    fail("matmul", "a transpose flag was given for a 1-d operand (shapes ", shape_str(a.shape()), " and ",
         shape_str(b.shape()), "); a vector has nothing to transpose");
  // A vector on the left acts as a (1,K) row, on the right as a (K,1) column; that dim is dropped after.
  const Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
  const Tensor b2 = b.dim() == 1 ? unsqueeze(b, -1) : b;
  Tensor out = matmul_2d_or_more(a2, b2, flags.transpose_a, flags.transpose_b);
  if (b.dim() == 1) out = squeeze(out, -1);
  if (a.dim() == 1) out = squeeze(out, b.dim() == 1 ? -1 : -2);
  return out;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (weight.dim() != 2 || x.dim() == 0 || x.size(-1) != weight.size(1))
    fail("linear", "x (...,in) and weight (out,in) must agree on in, got x ", shape_str(x.shape()), " and weight ",
         shape_str(weight.shape()));
  const int64_t in = weight.size(1), out = weight.size(0);
  const int64_t rows = numel(Shape(x.shape().begin(), x.shape().end() - 1));  // every dim of x but the last
  if (bias.defined() && bias.shape() != Shape{out})
    fail("linear", "bias must be (out) = (", out, ") for weight ", shape_str(weight.shape()), ", got ",
         shape_str(bias.shape()));
  if (!bias.defined()) return matmul(x, weight, {.transpose_b = true});
  Shape out_shape = x.shape();
  out_shape.back() = out;
  Tensor y = empty(out_shape);
  const float* pb = bias.data();
  float* py = y.data();
  parallel_for(rows, out, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) std::copy_n(pb, out, py + r * out);
  });
  if (in > 0) gemm(false, true, rows, out, in, 1.0f, x.data(), in, weight.data(), in, 1.0f, py, out);
  return record("linear", y, {x, weight, bias}, Saved{x, weight},
                [x = x.detach(), weight = weight.detach(), rows, in, out](const Tensor& gy, NeedsGrad needs) -> Grads {
                  const Tensor g2 = reshape(gy, {rows, out});  // (rows,out)
                  Tensor gx, gw, gb;
                  if (needs[0]) gx = reshape(batched_gemm(g2, weight, false, false), x.shape());  // gy @ W
                  if (needs[1]) gw = batched_gemm(g2, reshape(x, {rows, in}), true, false);      // gy^T @ x
                  if (needs[2]) gb = sum(g2, {0});
                  return {gx, gw, gb};
                });
}

}  // namespace ladder
