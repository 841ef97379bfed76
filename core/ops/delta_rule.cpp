// The delta rule as one op (core/kernels/delta_rule.cpp does the work), and its naive twin.
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/delta_rule.h"
#include "core/ops.h"

namespace ladder {

namespace {

DeltaRuleProblem check_delta(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                             const Tensor& log_alpha, int64_t chunk) {
  if (q.dim() != 4 || k.shape() != q.shape() || v.dim() != 4 || v.size(0) != q.size(0) || v.size(1) != q.size(1) ||
      v.size(2) != q.size(2))
    fail(op, "expects q and k (B,H,T,M) of one shape and v (B,H,T,E), got ", shape_str(q.shape()), ", ",
         shape_str(k.shape()), " and ", shape_str(v.shape()));
  const Shape per_position{q.size(0), q.size(1), q.size(2)};
  if (beta.shape() != per_position)
    fail(op, "beta must be (B,H,T) = ", shape_str(per_position), ", one write strength per position, got ",
         shape_str(beta.shape()));
  if (log_alpha.defined() && log_alpha.shape() != per_position)
    fail(op, "log_alpha must be (B,H,T) = ", shape_str(per_position), ", one decay per position, got ",
         shape_str(log_alpha.shape()));
  if (chunk < 1) fail(op, "chunk must be >= 1, got ", chunk);
  return {.heads = q.size(0) * q.size(1), .length = q.size(2), .key_dim = q.size(3), .value_dim = v.size(3),
          .chunk = chunk};
}

// The inputs as the op records them: log_alpha only when gated.
std::vector<Tensor> delta_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                 const Tensor& log_alpha) {
  std::vector<Tensor> inputs{q, k, v, beta};
  if (log_alpha.defined()) inputs.push_back(log_alpha);
  return inputs;
}

using DeltaKernel = void (*)(const DeltaRuleProblem&, const float*, const float*, const float*, const float*,
                             const float*, float*);
using DeltaBackward = void (*)(const DeltaRuleProblem&, const float*, const float*, const float*, const float*,
                               const float*, const float*, float*, float*, float*, float*, float*);

Tensor delta_op(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                const Tensor& log_alpha, int64_t chunk, DeltaKernel forward, DeltaBackward backward) {
  const DeltaRuleProblem p = check_delta(op, q, k, v, beta, log_alpha, chunk);
  const float* decay = log_alpha.defined() ? log_alpha.data() : nullptr;
  Tensor out = empty(v.shape());
  forward(p, q.data(), k.data(), v.data(), beta.data(), decay, out.data());
  const std::vector<Tensor> inputs = delta_inputs(q, k, v, beta, log_alpha);
  return record(op, out, inputs, inputs,
                [p, backward, q = q.detach(), k = k.detach(), v = v.detach(), beta = beta.detach(),
                 log_alpha = log_alpha.defined() ? log_alpha.detach() : Tensor()](const Tensor& gout, NeedsGrad) -> Grads {
                  Tensor dq = empty(q.shape()), dk = empty(k.shape()), dv = empty(v.shape()), dbeta = empty(beta.shape());
                  Tensor dlog_alpha = log_alpha.defined() ? empty(log_alpha.shape()) : Tensor();
                  backward(p, q.data(), k.data(), v.data(), beta.data(), log_alpha.defined() ? log_alpha.data() : nullptr,
                           gout.data(), dq.data(), dk.data(), dv.data(), dbeta.data(),
                           log_alpha.defined() ? dlog_alpha.data() : nullptr);
                  Grads grads{dq, dk, dv, dbeta};
                  if (log_alpha.defined()) grads.push_back(dlog_alpha);
                  return grads;
                });
}

}  // namespace

Tensor delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& log_alpha,
                  int64_t chunk) {
  return delta_op("delta_rule", q, k, v, beta, log_alpha, chunk, delta_rule_forward, delta_rule_backward);
}

Tensor delta_rule_naive(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& log_alpha) {
  return delta_op("delta_rule_naive", q, k, v, beta, log_alpha, 1, delta_rule_forward_naive, delta_rule_backward_naive);
}

}  // namespace ladder
