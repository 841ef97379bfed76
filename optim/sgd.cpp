#include "optim/sgd.h"

#include "core/autograd.h"
#include "core/error.h"

namespace ladder::optim {

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : Optimizer("SGD", std::move(groups), options.lr), options_(options) {
  if (options.momentum < 0) fail("SGD", "momentum must not be negative, got ", options.momentum);
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    fail("SGD", "nesterov needs momentum > 0 and dampening 0");
}

SGD::SGD(const std::vector<nn::NamedParameter>& params, SGDOptions options)
    : SGD(std::vector<ParamGroup>{{params, options.weight_decay}}, options) {}

std::vector<std::string> SGD::slots() const {
  if (options_.momentum != 0) return {"momentum_buffer"};
  return {};
}

void SGD::step() {
  NoGradGuard no_grad;
  ++steps_;
  for (const ParamGroup& group : groups_)
    for (const nn::NamedParameter& param : group.params) {
      const Tensor grad = param.tensor.grad();
      if (!grad.defined()) continue;
      float* p = param.tensor.mutable_data();
      const float* g = grad.data();
      const int64_t n = grad.numel();
      bool first = false;
      float* b = options_.momentum != 0 ? state(param.name, "momentum_buffer", grad, &first).data() : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        float d = g[i] + group.weight_decay * p[i];
        if (b) {
          // exercise: sgd_momentum
          b[i] = first ? d : options_.momentum * b[i] + (1 - options_.dampening) * d;
          d = options_.nesterov ? d + options_.momentum * b[i] : b[i];
          // end of exercise: sgd_momentum
        }
        p[i] -= lr_ * d;
      }
    }
}

}  // namespace ladder::optim
