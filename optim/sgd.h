// Stochastic gradient descent with momentum, dampening, Nesterov and (L2) weight decay, as in PyTorch.
#pragma once

#include "optim/optimizer.h"

namespace ladder::optim {

struct SGDOptions {
  float lr = 0.01f;
  float momentum = 0;
  float dampening = 0;
  bool nesterov = false;
  float weight_decay = 0;  // used when the constructor is given plain parameters, not groups
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamGroup> groups, SGDOptions options);
  SGD(const std::vector<nn::NamedParameter>& params, SGDOptions options);
  // g = grad + wd * p;  b = momentum * b + (1 - dampening) * g  (b = g at the first step);
  // g = nesterov ? g + momentum * b : b;  p -= lr * g
  void step() override;
  std::vector<std::string> slots() const override;

 private:
  SGDOptions options_;
};

}  // namespace ladder::optim
