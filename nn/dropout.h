// Dropout: zeroes each value with probability p in training (scaling the rest by 1/(1-p));
// the identity in eval.
#pragma once

#include "core/error.h"
#include "core/ops.h"
#include "nn/module.h"

namespace ladder::nn {

class Dropout : public Module {
 public:
  // The masks come from a generator of the layer's own, a child of `gen`: the layer stays valid
  // after `gen` is gone, a seed still pins every mask, and the layers built after it get the same
  // weights with or without it.
  explicit Dropout(float p, Generator& gen = default_generator()) : Module("Dropout"), p_(p), gen_(gen.child()) {
    if (!(p >= 0 && p <= 1)) fail("Dropout", "p must be in [0, 1], got ", p);
    register_generator(gen_);
  }
  Tensor forward(const Tensor& x) override { return dropout(x, p_, is_training(), gen_); }

 protected:
  std::string describe() const override { return cat("p=", p_); }

 private:
  float p_;
  Generator gen_;
};

}  // namespace ladder::nn
