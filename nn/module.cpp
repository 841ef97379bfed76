#include "nn/module.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

Tensor Module::forward(const Tensor&) {
  fail("forward", type_name_, " does not map one tensor to one tensor; call its own methods");
}

void Module::check_new_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos)
    fail("register", type_name_, ": name '", name, "' must be non-empty and contain no '.'");
  auto taken = [&name](const auto& entries) {
    return std::any_of(entries.begin(), entries.end(), [&](const auto& e) {
      if constexpr (requires { e.name; }) return e.name == name;
      else return e.first == name;
    });
  };
  if (taken(parameters_) || taken(buffers_) || taken(children_))
    fail("register", type_name_, ": the name '", name, "' is already registered");
}

Tensor Module::register_parameter(const std::string& name, const Tensor& value, ParamKind kind) {
  check_new_name(name);
  // A parameter of another module is shared as it is (weight tying); any other value becomes a new leaf.
  Tensor leaf = value.is_leaf() && value.requires_grad() ? value : value.detach();
  leaf.requires_grad_();
  parameters_.push_back({name, leaf, kind});
  return leaf;
}

Tensor Module::share_parameter(const std::string& name, const Tensor& shared) {
  auto it = std::find_if(parameters_.begin(), parameters_.end(), [&](const NamedParameter& p) { return p.name == name; });
  if (it == parameters_.end()) fail("share_parameter", type_name_, " has no parameter named '", name, "'");
  if (!shared.defined() || !shared.is_leaf() || !shared.requires_grad())
    fail("share_parameter", "'", name, "' can only be tied to a parameter (a leaf that requires grad), such as "
         "another module's weight");
  if (shared.shape() != it->tensor.shape())
    fail("share_parameter", "'", name, "' has shape ", shape_str(it->tensor.shape()), " but the tensor to share has ",
         shape_str(shared.shape()));
  it->tensor = shared;
  return shared;
}

Tensor Module::register_buffer(const std::string& name, const Tensor& value) {
  check_new_name(name);
  buffers_.emplace_back(name, value.detach());
  return buffers_.back().second;
}

void Module::collect(const std::string& prefix, std::vector<NamedParameter>& params,
                     std::vector<std::pair<std::string, Tensor>>& buffers) const {
  for (const NamedParameter& p : parameters_) params.push_back({prefix + p.name, p.tensor, p.kind});
  for (const auto& [name, b] : buffers_) buffers.emplace_back(prefix + name, b);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", params, buffers);
}

namespace {

// A tensor registered in several places (a tied embedding and output layer) is listed once, under
// the first name the walk meets, as PyTorch does: one tensor is one parameter to count, step and save.
template <class Entries, class TensorOf>
Entries first_of_each_tensor(const Entries& entries, TensorOf tensor_of) {
  Entries unique;
  std::set<const TensorImpl*> seen;
  for (const auto& e : entries)
    if (seen.insert(tensor_of(e).impl()).second) unique.push_back(e);
  return unique;
}

}  // namespace

std::vector<NamedParameter> Module::named_parameters() const {
  std::vector<NamedParameter> params;
  std::vector<std::pair<std::string, Tensor>> buffers;
  collect("", params, buffers);
  return first_of_each_tensor(params, [](const NamedParameter& p) { return p.tensor; });
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (const NamedParameter& p : named_parameters()) out.push_back(p.tensor);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<NamedParameter> params;
  std::vector<std::pair<std::string, Tensor>> buffers;
  collect("", params, buffers);
  return first_of_each_tensor(buffers, [](const auto& b) { return b.second; });
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const NamedParameter& p : named_parameters()) n += p.tensor.numel();
  return n;
}

std::map<std::string, Tensor> Module::state_dict() const {
  std::map<std::string, Tensor> state;
  for (const NamedParameter& p : named_parameters()) state.emplace(p.name, p.tensor);
  for (const auto& [name, b] : named_buffers()) state.emplace(name, b);
  return state;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state) {
  const std::map<std::string, Tensor> mine = state_dict();
  std::vector<std::string> missing, unexpected;
  for (const auto& [name, t] : mine)
    if (!state.count(name)) missing.push_back(name);
  for (const auto& [name, t] : state)
    if (!mine.count(name)) unexpected.push_back(name);
  auto join = [](const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  if (!missing.empty() || !unexpected.empty())
    fail("load_state_dict", type_name_, ": ", missing.empty() ? "" : "missing " + join(missing),
         !missing.empty() && !unexpected.empty() ? "; " : "", unexpected.empty() ? "" : "unexpected " + join(unexpected),
         ". The checkpoint was written by a different model (or a different configuration of it)");
  for (const auto& [name, t] : mine)
    if (state.at(name).shape() != t.shape())
      fail("load_state_dict", "'", name, "' has shape ", shape_str(state.at(name).shape()),
           " in the checkpoint but ", shape_str(t.shape()), " in the model");
  for (const auto& [name, t] : mine) t.copy_(state.at(name));
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (const NamedParameter& p : named_parameters()) p.tensor.zero_grad();
}

void Module::record_auxiliary_loss(const Tensor& loss) {
  if (!training_) return;
  if (loss.numel() != 1)
    fail(type_name_.c_str(), "an auxiliary loss must be one number, got ", shape_str(loss.shape()));
  auxiliary_loss_ = auxiliary_loss_.defined() ? auxiliary_loss_ + loss : loss;
}

Tensor Module::auxiliary_loss() const {
  Tensor total = auxiliary_loss_;
  for (const auto& [name, child] : children_) {
    const Tensor part = child->auxiliary_loss();
    if (part.defined()) total = total.defined() ? total + part : part;
  }
  return total;
}

Tensor Module::take_auxiliary_loss() {
  const Tensor total = auxiliary_loss();
  forget_auxiliary_losses();
  return total;
}

void Module::forget_auxiliary_losses() {
  auxiliary_loss_ = Tensor();
  for (const auto& [name, child] : children_) child->forget_auxiliary_losses();
}

std::vector<Generator*> Module::generators() {
  std::vector<Generator*> all = generators_;
  for (const auto& [name, child] : children_)
    for (Generator* gen : child->generators()) all.push_back(gen);
  return all;
}

void Module::after_optimizer_step() {
  apply_optimizer_step();
  auxiliary_loss_ = Tensor();  // a loss nobody took: its graph goes now rather than pile up
  for (const auto& [name, child] : children_) child->after_optimizer_step();
}

Tensor with_auxiliary_loss(Module& model, const Tensor& loss) {
  const Tensor extra = model.take_auxiliary_loss();
  return extra.defined() ? loss + extra : loss;
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

namespace {

// "  [198,272 each]", "  [weight tied to transformer.wte.weight]": what a line of the outline holds.
std::string held_note(const std::pair<int64_t, std::vector<std::string>>& held, bool each) {
  std::string note = held.first > 0 ? with_commas(held.first) + (each ? " each" : "") : "";
  for (const std::string& tied : held.second) note += (note.empty() ? "" : "; ") + tied;
  return note.empty() ? "" : "  [" + note + "]";
}

}  // namespace

void Module::print(std::string& out, const std::string& name, const std::string& prefix, int depth,
                   const std::map<const TensorImpl*, std::string>& first_name) const {
  const std::string indent(2 * depth, ' ');
  out += indent + (name.empty() ? "" : "(" + name + "): ") + repr();
  int64_t own = 0;
  std::string shapes;
  for (const NamedParameter& p : parameters_) {
    const std::string& first = first_name.at(p.tensor.impl());
    const bool tied = first != prefix + p.name;  // counted where it was first registered
    if (!tied) own += p.tensor.numel();
    shapes += (shapes.empty() ? "" : ", ") + p.name + " " + shape_str(p.tensor.shape()) + (tied ? " tied to " + first : "");
  }
  if (!parameters_.empty()) out += "  [" + shapes + ": " + with_commas(own) + "]";
  out += "\n";
  for (const auto& [child_name, child] : children_)
    child->print(out, child_name, prefix + child_name + ".", depth + 1, first_name);
}

std::pair<int64_t, std::vector<std::string>> Module::held_parameters(
    const std::string& prefix, const std::map<const TensorImpl*, std::string>& first_name) const {
  int64_t count = 0;
  std::vector<std::string> tied;
  for (const NamedParameter& p : parameters_) {
    const std::string& first = first_name.at(p.tensor.impl());
    if (first == prefix + p.name) count += p.tensor.numel();
    else tied.push_back(p.name + " tied to " + first);
  }
  for (const auto& [child_name, child] : children_) {
    auto [child_count, child_tied] = child->held_parameters(prefix + child_name + ".", first_name);
    count += child_count;
    for (const std::string& t : child_tied) tied.push_back(child_name + "." + t);
  }
  return {count, tied};
}

void Module::print_outline(std::string& out, const std::string& label, const std::string& prefix, int depth,
                           const std::map<const TensorImpl*, std::string>& first_name) const {
  const std::string indent(2 * depth, ' ');
  const bool opened = depth == 0 || (parameters_.empty() && describe().empty() && !children_.empty());
  if (!opened) {
    out += indent + label + repr() + held_note(held_parameters(prefix, first_name), false) + "\n";
    return;
  }
  out += indent + label + repr() + "\n";
  if (type_name_ == "Sequential") {
    print_layers(out, prefix, depth + 1, first_name);
    return;
  }
  for (const auto& [child_name, child] : children_)
    child->print_outline(out, "(" + child_name + "): ", prefix + child_name + ".", depth + 1, first_name);
}

void Module::print_layers(std::string& out, const std::string& prefix, int depth,
                          const std::map<const TensorImpl*, std::string>& first_name) const {
  const std::string indent(2 * depth, ' ');
  for (size_t i = 0; i < children_.size();) {
    const Module& layer = *children_[i].second;
    const auto held = layer.held_parameters(prefix + children_[i].first + ".", first_name);
    size_t j = i + 1;  // past the run of layers like this one: same type, settings and parameter count
    while (j < children_.size() && children_[j].second->repr() == layer.repr() &&
           children_[j].second->held_parameters(prefix + children_[j].first + ".", first_name).first == held.first)
      ++j;
    std::string parts;
    for (const auto& [part_name, part] : layer.children_) parts += (parts.empty() ? " of " : ", ") + part_name;
    const std::string run = j - i == 1 ? "(" + children_[i].first + "): "
                                       : "(" + children_[i].first + ")-(" + children_[j - 1].first + "): " + std::to_string(j - i) + " x ";
    out += indent + run + layer.repr() + parts + held_note(held, j - i > 1) + "\n";
    i = j;
  }
}

std::string Module::outline() const {
  std::map<const TensorImpl*, std::string> first_name;
  for (const NamedParameter& p : named_parameters()) first_name.emplace(p.tensor.impl(), p.name);
  std::string out;
  print_outline(out, "", "", 0, first_name);
  return out + "total parameters: " + with_commas(num_parameters()) + "\n";
}

std::string Module::summary() const {
  std::map<const TensorImpl*, std::string> first_name;
  for (const NamedParameter& p : named_parameters()) first_name.emplace(p.tensor.impl(), p.name);
  std::string out;
  print(out, "", "", 0, first_name);
  return out + "total parameters: " + with_commas(num_parameters()) + "\n";
}

}  // namespace ladder::nn
