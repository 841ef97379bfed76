// Linear: y = x W^T + b, the layer most of deep learning is made of.
#pragma once

#include "nn/init.h"
#include "nn/module.h"

namespace ladder::nn {

struct LinearOptions {
  bool bias = true;
  Init init = Init::pytorch;
  float std = 0.02f;  // for Init::normal
};

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, LinearOptions options = {}, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;  // x (..., in) -> (..., out)

  Tensor weight;  // (out, in), as in PyTorch
  Tensor bias;    // (out), or undefined

 protected:
  std::string describe() const override;
};

}  // namespace ladder::nn
