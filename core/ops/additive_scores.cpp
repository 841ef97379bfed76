// Bahdanau's additive scores from projected queries and keys: the fused op
// (core/kernels/additive_scores.cpp does the work) and its naive twin written with plain ops.
// The naive one writes the (B,Q,S,H) sum, then its tanh, then multiplies by w_v, and its backward
// makes as many passes again; the fused one makes one pass forward and one backward.
#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/additive_scores.h"
#include "core/ops.h"

namespace ladder {

namespace {

// q (B,..,Q,H), k (B,..,S,H) with the same dims before Q and S, w_v (1,H). Returns H.
int64_t check_additive(const char* op, const Tensor& q, const Tensor& k, const Tensor& w_v) {
  if (q.dim() < 3 || k.dim() != q.dim() || !std::equal(q.shape().begin(), q.shape().end() - 2, k.shape().begin()))
    fail(op, "projected queries ", shape_str(q.shape()), " and keys ", shape_str(k.shape()),
         " must be (B,Q,H) and (B,S,H) with the same B (and the same dims between B and Q, if any)");
  if (w_v.dim() != 2 || w_v.size(0) != 1)
    fail(op, "w_v ", shape_str(w_v.shape()), " must be (1,H), the weight of a Linear(H, 1)");
  const int64_t H = w_v.size(1);
  if (q.size(-1) != H || k.size(-1) != H)
    fail(op, "projected queries ", shape_str(q.shape()), " and keys ", shape_str(k.shape()), " must both end in H = ",
         H, ", the size of w_v ", shape_str(w_v.shape()), "; project them with W_q (H,Dq) and W_k (H,Dk) first");
  return H;
}

}  // namespace

Tensor additive_scores_projected(const Tensor& q, const Tensor& k, const Tensor& w_v) {
  const int64_t H = check_additive("additive_scores_projected", q, k, w_v);
  const int64_t Q = q.size(-2), S = k.size(-2), N = numel(Shape(q.shape().begin(), q.shape().end() - 2));
  Shape shape = q.shape();
  shape.back() = S;  // (B,..,Q,S)
  Tensor scores = empty(shape), features = empty({N, Q, S, H});
  additive_scores_forward(q.data(), k.data(), w_v.data(), scores.data(), features.data(), N, Q, S, H);
  return record("additive_scores_projected", scores, {q, k, w_v}, Saved{w_v},
                [q_shape = q.shape(), k_shape = k.shape(), w_shape = w_v.shape(), w_v = w_v.detach(), features, N, Q, S,
                 H](const Tensor& gy, NeedsGrad) -> Grads {
                  Tensor dq = empty(q_shape), dk = empty(k_shape), dw = empty(w_shape);
                  additive_scores_backward(gy.data(), features.data(), w_v.data(), dq.data(), dk.data(), dw.data(), N,
                                           Q, S, H);
                  return {dq, dk, dw};
                });
}

Tensor additive_scores_projected_naive(const Tensor& q, const Tensor& k, const Tensor& w_v) {
  check_additive("additive_scores_projected_naive", q, k, w_v);
  // Pair up by broadcasting: (B,Q,1,H) + (B,1,S,H) -> (B,Q,S,H).
  const Tensor features = tanh(unsqueeze(q, -2) + unsqueeze(k, -3));
  return squeeze(matmul(features, w_v, {.transpose_b = true}), -1);  // (B,Q,S,H) @ (1,H)^T -> (B,Q,S)
}

}  // namespace ladder
