#include "optim/adam.h"

#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/parallel.h"

namespace ladder::optim {

Adam::Adam(const char* name, std::vector<ParamGroup> groups, AdamOptions options, bool decoupled)
    : Optimizer(name, std::move(groups), options.lr), options_(options), decoupled_(decoupled) {
  for (float beta : {options.beta1, options.beta2})
    if (!(beta >= 0 && beta < 1)) fail(name, "betas must be in [0, 1), got ", beta);
  if (!(options.eps > 0)) fail(name, "eps must be positive, got ", options.eps);
}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options) : Adam("Adam", std::move(groups), options, false) {}

Adam::Adam(const std::vector<nn::NamedParameter>& params, AdamOptions options)
    : Adam(std::vector<ParamGroup>{{params, options.weight_decay}}, options) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamOptions options) : Adam("AdamW", std::move(groups), options, true) {}

AdamW::AdamW(const std::vector<nn::NamedParameter>& params, AdamOptions options)
    : AdamW(std::vector<ParamGroup>{{params, options.weight_decay}}, options) {}

void Adam::step() {
  NoGradGuard no_grad;
  ++steps_;
  const float b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
  // The scalars are computed in double and rounded once, in the order PyTorch computes them.
  const float one_minus_b1 = static_cast<float>(1 - static_cast<double>(b1));
  const float one_minus_b2 = static_cast<float>(1 - static_cast<double>(b2));
  for (const ParamGroup& group : groups_) {
    // Adam adds l2 * p to the gradient, AdamW multiplies p by shrink first; the other is a no-op.
    const float l2 = decoupled_ ? 0.0f : group.weight_decay;
    const auto shrink = decoupled_ ? static_cast<float>(1 - static_cast<double>(lr_) * group.weight_decay) : 1.0f;
    for (const nn::NamedParameter& param : group.params) {
      const Tensor grad = param.tensor.grad();
      if (!grad.defined()) continue;
      float& count = state(param.name, "step", scalar(0)).data()[0];  // this parameter's own t
      const double t = ++count;
      const double correction1 = 1 - std::pow(static_cast<double>(b1), t);
      const double correction2 = 1 - std::pow(static_cast<double>(b2), t);
      const auto step_size = static_cast<float>(lr_ / correction1);
      const auto correction2_sqrt = static_cast<float>(std::sqrt(correction2));
      float* p = param.tensor.mutable_data();
      const float* g = grad.data();
      float* m = state(param.name, "exp_avg", grad).data();
      float* v = state(param.name, "exp_avg_sq", grad).data();
      // Threads split the large tensors; each element's update is independent of the others.
      // exercise: adam_update
      parallel_for(grad.numel(), 8, [=](int64_t begin, int64_t end) {  // by value: the pointers stay in registers
#pragma omp simd
        for (int64_t i = begin; i < end; ++i) {
          const float gi = l2 == 0 ? g[i] : g[i] + l2 * p[i];
          p[i] *= shrink;
          m[i] = m[i] * b1 + one_minus_b1 * gi;
          v[i] = v[i] * b2 + one_minus_b2 * gi * gi;
          const float denom = std::sqrt(v[i]) / correction2_sqrt + eps;
          p[i] += -step_size * (m[i] / denom);
        }
      });
      // end of exercise: adam_update
    }
  }
}

}  // namespace ladder::optim
