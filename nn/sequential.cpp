#include "nn/sequential.h"

#include <iomanip>

#include "core/autograd.h"
#include "core/error.h"
#include "nn/activation.h"
#include "nn/dropout.h"
#include "nn/linear.h"

namespace ladder::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) : Sequential() {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  if (!module) fail("Sequential", "cannot hold a null module");
  modules_.push_back(register_module(std::to_string(modules_.size()), std::move(module)));
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  for (const auto& m : modules_) h = m->forward(h);
  return h;
}

std::string Sequential::shape_table(const Shape& input) {
  // In eval mode, so that the zeros leave batch-norm statistics and dropout's random numbers alone.
  NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  Tensor x = zeros(input);
  std::string table = cat("  ", std::left, std::setw(62), "layer", std::right, std::setw(10), "params", "  ",
                          std::left, std::setw(16), "input", "output\n");
  for (size_t i = 0; i < modules_.size(); ++i) {
    const Tensor y = modules_[i]->forward(x);
    table += cat("  ", std::left, std::setw(62), cat(std::setw(2), i, " ", modules_[i]->repr()), std::right, std::setw(10),
                 with_commas(modules_[i]->num_parameters()), "  ", std::left, std::setw(16), shape_str(x.shape()),
                 shape_str(y.shape()), "\n");
    x = y;
  }
  train(was_training);
  return table + cat("  total parameters: ", with_commas(num_parameters()), "\n");
}

namespace {

std::shared_ptr<Module> make_activation(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::relu: return std::make_shared<ReLU>();
    case ActivationKind::tanh: return std::make_shared<Tanh>();
    case ActivationKind::gelu: return std::make_shared<GELU>();
    case ActivationKind::sigmoid: return std::make_shared<Sigmoid>();
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<Sequential> mlp(const std::vector<int64_t>& sizes, MLPOptions options, Generator& gen) {
  if (sizes.size() < 2) fail("mlp", "needs at least an input and an output size, got ", sizes.size(), " size(s)");
  auto net = std::make_shared<Sequential>();
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    net->push_back(std::make_shared<Linear>(sizes[i], sizes[i + 1], LinearOptions{}, gen));
    if (i + 2 == sizes.size()) break;  // no activation after the output layer
    net->push_back(make_activation(options.activation));
    if (options.dropout > 0) net->push_back(std::make_shared<Dropout>(options.dropout, gen));
  }
  return net;
}

}  // namespace ladder::nn
