// Adam and AdamW. They differ only in weight decay: Adam adds wd * p to the gradient (L2), so
// it is rescaled by the adaptive denominator; AdamW shrinks p directly (decoupled decay).
#pragma once

#include "optim/optimizer.h"

namespace ladder::optim {

struct AdamOptions {
  float lr = 1e-3f;
  float beta1 = 0.9f, beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0;  // used when the constructor is given plain parameters, not groups
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, AdamOptions options);
  Adam(const std::vector<nn::NamedParameter>& params, AdamOptions options);
  // For each parameter with a gradient, t counting its own updates (as in PyTorch):
  // t += 1;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
  // p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
  void step() override;
  std::vector<std::string> slots() const override { return {"exp_avg", "exp_avg_sq", "step"}; }

 protected:
  Adam(const char* name, std::vector<ParamGroup> groups, AdamOptions options, bool decoupled);

 private:
  AdamOptions options_;
  bool decoupled_;  // AdamW: p *= 1 - lr * wd before the update, instead of g += wd * p
};

class AdamW : public Adam {
 public:
  // AdamOptions' weight_decay defaults to 0 here too; PyTorch's AdamW defaults to 0.01.
  AdamW(std::vector<ParamGroup> groups, AdamOptions options);
  AdamW(const std::vector<nn::NamedParameter>& params, AdamOptions options);
};

}  // namespace ladder::optim
