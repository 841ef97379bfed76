// The optimizer base: parameter groups, zero_grad, learning rate, and state that can be saved.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/module.h"

namespace ladder::optim {

// Parameters that share a weight decay.
struct ParamGroup {
  std::vector<nn::NamedParameter> params;
  float weight_decay = 0;
};

// The usual split: weights decay; biases, norm parameters and embeddings do not.
std::vector<ParamGroup> decay_groups(const std::vector<nn::NamedParameter>& params, float weight_decay);

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Updates every parameter that has a .grad (one without is skipped, as in PyTorch).
  virtual void step() = 0;
  void zero_grad();
  float lr() const { return lr_; }
  void set_lr(float lr);  // schedules call this before each step
  int64_t steps() const { return steps_; }

  // Everything the optimizer carries between steps, by name: "<param>.<slot>" (e.g.
  // "fc1.weight.exp_avg"), "step" and "lr". Saved and restored with a checkpoint.
  std::map<std::string, Tensor> state_dict() const;
  // Strict: every key must be a slot of this optimizer for one of its parameters, with that
  // parameter's shape; a parameter has all its slots or none; "step" and "lr" must be there.
  void load_state_dict(const std::map<std::string, Tensor>& state);
  // The per-parameter state this optimizer keeps ("exp_avg", ...); "step" is a 0-d count.
  virtual std::vector<std::string> slots() const = 0;

 protected:
  Optimizer(const char* name, std::vector<ParamGroup> groups, float lr);
  // The per-parameter state slot, created as zeros the first time; `created` says whether it was.
  Tensor state(const std::string& param, const char* slot, const Tensor& like, bool* created = nullptr);

  const char* name_;
  std::vector<ParamGroup> groups_;
  float lr_;
  int64_t steps_ = 0;

 private:
  std::map<std::string, Tensor> state_;
};

// Scales all gradients down so that their global L2 norm is at most max_norm (when it is larger);
// returns the norm before clipping. Parameters without .grad are skipped.
float clip_grad_norm(const std::vector<Tensor>& params, float max_norm);

}  // namespace ladder::optim
