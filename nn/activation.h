// Activation functions as modules, for Sequential; each calls the core op of the same name.
#pragma once

#include "core/ops.h"
#include "nn/module.h"

namespace ladder::nn {

class Activation : public Module {
 public:
  using Function = Tensor (*)(const Tensor&);
  Activation(const char* type_name, Function f) : Module(type_name), f_(f) {}
  Tensor forward(const Tensor& x) override { return f_(x); }

 private:
  Function f_;
};

struct ReLU : Activation {
  ReLU() : Activation("ReLU", relu) {}
};
struct Tanh : Activation {
  Tanh() : Activation("Tanh", tanh) {}
};
struct Sigmoid : Activation {
  Sigmoid() : Activation("Sigmoid", sigmoid) {}
};
struct GELU : Activation {
  GELU() : Activation("GELU", [](const Tensor& x) { return gelu(x); }) {}
};
struct SiLU : Activation {
  SiLU() : Activation("SiLU", silu) {}
};
struct ELU : Activation {
  ELU() : Activation("ELU", [](const Tensor& x) { return elu(x); }) {}
};

}  // namespace ladder::nn
