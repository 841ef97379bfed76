// Sequential: modules applied one after another; and mlp(), which builds the usual stack.
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "nn/module.h"

namespace ladder::nn {

class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);  // registered as "0", "1", ...
  Tensor forward(const Tensor& x) override;
  size_t size() const { return modules_.size(); }
  // One line per layer: what it is, its parameter count, and the shapes it maps an input of
  // shape `input` through (runs a forward pass on zeros, without recording a graph).
  std::string shape_table(const Shape& input);
  Module& operator[](size_t i) const { return *modules_.at(i); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

enum class ActivationKind { relu, tanh, gelu, sigmoid };

struct MLPOptions {
  ActivationKind activation = ActivationKind::relu;
  float dropout = 0;  // after each hidden activation
};

// Linear layers of the given sizes with an activation (and optional dropout) between them:
// mlp({2, 64, 64, 3}) is Linear(2,64) act Linear(64,64) act Linear(64,3).
std::shared_ptr<Sequential> mlp(const std::vector<int64_t>& sizes, MLPOptions options = {},
                                Generator& gen = default_generator());

}  // namespace ladder::nn
