#include "optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::optim {

std::vector<ParamGroup> decay_groups(const std::vector<nn::NamedParameter>& params, float weight_decay) {
  ParamGroup decay{.weight_decay = weight_decay}, no_decay{.weight_decay = 0};
  for (const nn::NamedParameter& p : params) (p.kind == nn::ParamKind::weight ? decay : no_decay).params.push_back(p);
  return {decay, no_decay};
}

Optimizer::Optimizer(const char* name, std::vector<ParamGroup> groups, float lr)
    : name_(name), groups_(std::move(groups)) {
  set_lr(lr);
  std::set<std::string> names;
  std::set<const TensorImpl*> tensors;
  for (ParamGroup& g : groups_) {
    if (g.weight_decay < 0) fail(name_, "weight_decay must not be negative, got ", g.weight_decay);
    // A tensor listed twice (a tied weight under two names) is stepped once, under its first name.
    std::erase_if(g.params, [&tensors](const nn::NamedParameter& p) { return !tensors.insert(p.tensor.impl()).second; });
    for (const nn::NamedParameter& p : g.params)
      if (!names.insert(p.name).second) fail(name_, "two different parameters are both named '", p.name, "'");
  }
  if (names.empty()) fail(name_, "was given no parameters to optimize");
}

void Optimizer::set_lr(float lr) {
  if (!(lr >= 0) || std::isinf(lr)) fail(name_, "learning rate must be a finite number >= 0, got ", lr);
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (const ParamGroup& g : groups_)
    for (const nn::NamedParameter& p : g.params) p.tensor.zero_grad();
}

Tensor Optimizer::state(const std::string& param, const char* slot, const Tensor& like, bool* created) {
  auto [it, inserted] = state_.try_emplace(param + "." + slot);
  if (inserted) it->second = zeros_like(like);
  if (created) *created = inserted;
  return it->second;
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> out = state_;
  out["step"] = scalar(static_cast<float>(steps_));
  out["lr"] = scalar(lr_);
  return out;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  std::map<std::string, Shape> params;
  for (const ParamGroup& g : groups_)
    for (const nn::NamedParameter& p : g.params) params[p.name] = p.tensor.shape();
  const std::vector<std::string> known = slots();
  auto list = [&known] {
    std::string names;
    for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
    return names.empty() ? std::string("nothing") : names;
  };
  std::map<std::string, Tensor> loaded;
  std::map<std::string, size_t> slots_per_param;
  for (const auto& [key, t] : state) {
    if (key == "step" || key == "lr") continue;
    const size_t dot = key.rfind('.');
    const std::string param = dot == std::string::npos ? key : key.substr(0, dot);
    const std::string slot = dot == std::string::npos ? "" : key.substr(dot + 1);
    if (std::find(known.begin(), known.end(), slot) == known.end())
      fail("load_state_dict", name_, ": state '", key, "' is not something ", name_, " keeps per parameter (it keeps ",
           list(), "); was it saved by another optimizer?");
    if (!params.count(param))
      fail("load_state_dict", name_, ": state '", key, "' belongs to no parameter of this optimizer");
    const Shape expected = slot == "step" ? Shape{} : params[param];
    if (t.shape() != expected)
      fail("load_state_dict", name_, ": state '", key, "' has shape ", shape_str(t.shape()), " but ", shape_str(expected),
           " is expected for parameter '", param, "'");
    loaded[key] = t.clone();
    ++slots_per_param[param];
  }
  for (const auto& [param, count] : slots_per_param)
    if (count != known.size())
      fail("load_state_dict", name_, ": parameter '", param, "' has ", count, " of the ", known.size(), " state slots (",
           list(), "); the state is incomplete");
  if (!state.count("step") || !state.count("lr") || state.at("step").numel() != 1 || state.at("lr").numel() != 1)
    fail("load_state_dict", name_, ": the state has no 'step' or no 'lr'; it was not written by an optimizer");
  const float step = state.at("step").item();
  if (!(step >= 0 && step < 1e15f) || step != std::floor(step))
    fail("load_state_dict", name_, ": 'step' must be a whole number of steps, got ", step);
  state_ = std::move(loaded);
  steps_ = static_cast<int64_t>(step);
  set_lr(state.at("lr").item());
}

float clip_grad_norm(const std::vector<Tensor>& params, float max_norm) {
  double squares = 0;
  for (const Tensor& p : params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    const float* pg = g.data();
    const int64_t n = g.numel();
#pragma omp simd reduction(+ : squares)
    for (int64_t i = 0; i < n; ++i) squares += static_cast<double>(pg[i]) * pg[i];
  }
  const auto total = static_cast<float>(std::sqrt(squares));
  // exercise: clip_grad_norm
  const float coef = max_norm / (total + 1e-6f);  // PyTorch's formula
  if (coef < 1)
    for (const Tensor& p : params) {
      const Tensor g = p.grad();
      if (!g.defined()) continue;
      float* pg = g.mutable_data();
      const int64_t n = g.numel();
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) pg[i] *= coef;
    }
  // end of exercise: clip_grad_norm
  return total;
}

}  // namespace ladder::optim
