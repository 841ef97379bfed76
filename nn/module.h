// Module: the base of every layer and model. It owns named parameters, buffers and child
// modules, and walks them for optimizers, checkpoints and printing (as torch.nn.Module does).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ladder::nn {

// What a parameter is for. Optimizers use it to leave biases, norms and embeddings out of
// weight decay (see optim::decay_groups).
enum class ParamKind { weight, bias, norm, embedding };

struct NamedParameter {
  std::string name;  // dotted path: "encoder.layers.0.weight"
  Tensor tensor;
  ParamKind kind;
};

class Module {
 public:
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Modules that map one tensor to one tensor override forward; others define their own methods.
  virtual Tensor forward(const Tensor& x);
  Tensor operator()(const Tensor& x) { return forward(x); }

  // Registration order, children after own. A tensor registered in several places (weight tying)
  // is listed once, under the first name; so are parameters(), num_parameters() and state_dict().
  std::vector<NamedParameter> named_parameters() const;
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  int64_t num_parameters() const;

  // Parameters and buffers by dotted name: what a checkpoint holds.
  std::map<std::string, Tensor> state_dict() const;
  // Copies every value of `state` into the matching parameter or buffer. Strict: a missing or
  // unexpected name or a shape mismatch throws naming the tensor, before anything is copied.
  void load_state_dict(const std::map<std::string, Tensor>& state);

  // Ties the parameter `name` to `shared` (another module's parameter, of the same shape): from now
  // on both are one tensor, counted, stepped and saved once. Returns it, to be stored in the member:
  //   head->weight = head->share_parameter("weight", embedding->weight);
  Tensor share_parameter(const std::string& name, const Tensor& shared);

  // The generators of this module and those below it (dropout masks, a codebook's restarts), own
  // before children's, in registration order: the random state a training loop's checkpoint keeps,
  // so that a resumed run draws the masks the uninterrupted one would.
  std::vector<Generator*> generators();

  void train(bool on = true);  // recursive, like PyTorch
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();

  // Training hooks, walked over the tree like train() and zero_grad(). A training loop adds the
  // recorded losses to the loss it backpropagates (with_auxiliary_loss below) and calls
  // after_optimizer_step() right after the optimiser's step.
  // The sum of the extra losses the modules recorded in training-mode forwards and nobody took yet
  // (VectorQuantizer's commitment loss); undefined when none did.
  Tensor auxiliary_loss() const;
  // The same, and forgets them: each backward() then carries only its own forwards' losses, so
  // several backwards before one step (gradient accumulation) each go through a graph of their own.
  Tensor take_auxiliary_loss();
  // Lets each module apply what it learns outside the optimiser (VectorQuantizer's EMA step from
  // the statistics of its training-mode forwards), then forgets the recorded losses.
  void after_optimizer_step();

  const std::string& type_name() const { return type_name_; }
  std::string repr() const { return type_name_ + "(" + describe() + ")"; }  // "Linear(in=4, out=3, bias=true)"
  // The tree of every module with its settings, parameter shapes and counts.
  std::string summary() const;
  // The same tree a line per block: containers without settings or parameters of their own are
  // opened, the layers of a Sequential are one line each (identical neighbours folded: "(0)-(3):
  // 4 x GPTBlock()"), anything else is one line with the parameters it holds.
  std::string outline() const;

 protected:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}

  // The tensor becomes a leaf that requires grad; the returned handle shares its values. A
  // parameter of another module is registered as it is: the two modules then share it (tying).
  Tensor register_parameter(const std::string& name, const Tensor& value, ParamKind kind = ParamKind::weight);
  Tensor register_buffer(const std::string& name, const Tensor& value);  // state without gradients
  void register_generator(Generator& gen) { generators_.push_back(&gen); }  // a member generator the module draws from
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    check_new_name(name);
    children_.emplace_back(name, module);
    return module;
  }
  // The settings shown in summary(), e.g. "in=4, out=3, bias=true".
  virtual std::string describe() const { return ""; }
  // A training-mode forward adds `loss` (0-d, with its graph) to auxiliary_loss(); eval records nothing.
  void record_auxiliary_loss(const Tensor& loss);
  // This module's own part of after_optimizer_step(); its children are walked for it.
  virtual void apply_optimizer_step() {}

 private:
  void forget_auxiliary_losses();
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, std::vector<NamedParameter>& params,
               std::vector<std::pair<std::string, Tensor>>& buffers) const;
  void print(std::string& out, const std::string& name, const std::string& prefix, int depth,
             const std::map<const TensorImpl*, std::string>& first_name) const;
  void print_outline(std::string& out, const std::string& label, const std::string& prefix, int depth,
                     const std::map<const TensorImpl*, std::string>& first_name) const;
  void print_layers(std::string& out, const std::string& prefix, int depth,
                    const std::map<const TensorImpl*, std::string>& first_name) const;
  // The parameters of this module and those below it, each counted where it was first registered,
  // and the names of those first registered elsewhere (tied).
  std::pair<int64_t, std::vector<std::string>> held_parameters(const std::string& prefix,
                                                               const std::map<const TensorImpl*, std::string>& first_name) const;

  std::string type_name_;
  bool training_ = true;
  Tensor auxiliary_loss_;  // the sum record_auxiliary_loss kept since the last take or optimiser step
  std::vector<NamedParameter> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<Generator*> generators_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// Puts a module in eval mode for a scope (measuring, sampling) and back in the mode it was in
// when the scope ends, even by an exception.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(Module& module) : module_(module), was_training_(module.is_training()) { module.eval(); }
  ~EvalModeGuard() { module_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  Module& module_;
  bool was_training_;
};

// loss + model.take_auxiliary_loss(), or loss alone when the model recorded none: what a training
// loop backpropagates.
Tensor with_auxiliary_loss(Module& model, const Tensor& loss);

// "1,234,567"
std::string with_commas(int64_t n);

}  // namespace ladder::nn
