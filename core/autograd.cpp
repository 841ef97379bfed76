#include "core/autograd.h"

#include "core/error.h"
#include "core/kernels/parallel.h"
#include "core/observer.h"
#include "core/ops.h"
#include "core/ops/elementwise.h"

namespace ladder {

namespace {

thread_local bool grad_mode = true;
uint64_t backward_passes = 0;

// Adds g, which broadcasts to `shape`, into a gradient slot of that shape. A fresh slot gets its
// own copy, because g may be shared with other slots and optimizers later scale .grad in place
// (clip_grad_norm).
void accumulate_owned(std::shared_ptr<TensorImpl>& slot, const Tensor& g, const Shape& shape) {
  if (!slot) {
    slot = (g.shape() == shape ? g.clone() : expand(g, shape)).impl_ptr();
    return;
  }
  float* dst = slot->storage.get();
  const float* src = g.data();
  if (g.shape() == shape) {
    parallel_for(g.numel(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] += src[i];
    });
    return;
  }
  const Broadcast plan(shape, g.shape(), "backward");
  parallel_for(numel(shape), 1, [&](int64_t begin, int64_t end) {
    plan.for_range(begin, end, [&](int64_t i, int64_t, int64_t ig) { dst[i] += src[ig]; });
  });
}

// The gradient pending at a node: the sum over its uses, always of the node's output shape.
void accumulate_pending(Tensor& pending, const Tensor& g, const Shape& shape) {
  if (pending.defined()) pending = pending + g;
  else pending = g.shape() == shape ? g : expand(g, shape);
}

// Reverse post-order of the nodes reachable from root: every node comes before the nodes it
// reads from. Iterative, so that a chain of a million ops cannot overflow the stack.
std::vector<std::shared_ptr<Node>> topological_order(const std::shared_ptr<Node>& root) {
  const uint64_t mark = ++backward_passes;
  std::vector<std::shared_ptr<Node>> post_order;
  std::vector<std::pair<Node*, size_t>> stack{{root.get(), 0}};
  std::vector<std::shared_ptr<Node>> owners{root};  // parallel to stack
  root->visit_mark = mark;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const std::shared_ptr<Node>& child = node->inputs[next++].node;
      if (child && child->visit_mark != mark) {
        child->visit_mark = mark;
        stack.push_back({child.get(), 0});
        owners.push_back(child);
      }
      continue;
    }
    post_order.push_back(std::move(owners.back()));
    owners.pop_back();
    stack.pop_back();
  }
  return {post_order.rbegin(), post_order.rend()};
}

bool broadcasts_to(const Shape& g, const Shape& shape) {
  if (g.size() != shape.size()) return false;
  for (size_t d = 0; d < g.size(); ++d)
    if (g[d] != shape[d] && g[d] != 1) return false;
  return true;
}

void check_gradient(const Node& node, size_t i, const Tensor& g) {
  if (!broadcasts_to(g.shape(), node.inputs[i].shape))
    fail("backward", "op '", node.op, "' produced a gradient of shape ", shape_str(g.shape()),
         " for its input ", i, " of shape ", shape_str(node.inputs[i].shape),
         "; this is a bug in that op's backward");
}

// Refuses to run a backward whose saved values were written in place after its op ran: it would
// compute the gradient of a function that was never evaluated (as PyTorch's "modified by an
// inplace operation").
void check_saved_versions(const Node& node) {
  for (const SavedVersion& s : node.saved) {
    if (*s.counter == s.version) continue;
    const std::string what = s.role == SavedVersion::kOutput ? std::string("its output")
                             : s.role >= 0 ? cat("its input ", s.role, " of shape ", shape_str(node.inputs[s.role].shape))
                                           : std::string("a value it saved");
    fail("backward", "op '", node.op, "' needs ", what, " as it was in the forward pass, but it was modified in "
         "place since (version ", *s.counter, ", saved at version ", s.version, "). An optimizer step or a write "
         "through mutable_data(), fill_() or copy_() between the forward pass and backward() does this: call "
         "backward() before changing the values, or change a clone()");
  }
}

void run_node(Node& node, bool retain_graph) {
  if (node.released)
    fail("backward", "the graph through '", node.op,
         "' was freed by an earlier backward(); pass retain_graph=true to the first backward() "
         "to go through it again, or run the forward pass again");
  Tensor grad_out = std::move(node.grad);
  node.grad = Tensor();
  if (!grad_out.defined()) {  // every path to this node carried no gradient
    if (!retain_graph) node.release();
    return;
  }
  if (auto out = node.output.lock(); out && out->retains_grad) accumulate_owned(out->grad, grad_out, grad_out.shape());

  check_saved_versions(node);
  if (installed_observer) installed_observer->backward_starts(node.op);
  const Grads grads = node.backward(grad_out, NeedsGrad(node.inputs));
  if (installed_observer) installed_observer->backward_ends(node.op);
  if (grads.size() != node.inputs.size())
    fail("backward", "op '", node.op, "' returned ", grads.size(), " gradients for ",
         node.inputs.size(), " inputs; this is a bug in that op's backward");
  for (size_t i = 0; i < grads.size(); ++i) {
    Edge& edge = node.inputs[i];
    if (!edge.needed() || !grads[i].defined()) continue;
    check_gradient(node, i, grads[i]);
    if (edge.leaf) accumulate_owned(edge.leaf->grad, grads[i], edge.shape);
    else accumulate_pending(edge.node->grad, grads[i], edge.shape);
  }
  if (!retain_graph) node.release();
}

}  // namespace

bool grad_enabled() { return grad_mode; }

NoGradGuard::NoGradGuard() : previous_(grad_mode) { grad_mode = false; }
NoGradGuard::~NoGradGuard() { grad_mode = previous_; }

void Node::release() {
  inputs.clear();
  saved.clear();
  backward = nullptr;  // frees the saved values
  grad = Tensor();
  released = true;
}

Node::~Node() {
  // Destroying a long chain recursively would take one stack frame per op; unlink it in a loop:
  // take over every input node that only this chain owns, and empty it before it dies.
  std::vector<std::shared_ptr<Node>> orphans;
  auto adopt_inputs = [&orphans](Node& node) {
    for (Edge& edge : node.inputs)
      if (edge.node && edge.node.use_count() == 1) orphans.push_back(std::move(edge.node));
    node.release();
  };
  adopt_inputs(*this);
  while (!orphans.empty()) {
    std::shared_ptr<Node> node = std::move(orphans.back());
    orphans.pop_back();
    adopt_inputs(*node);
  }
}

bool any_requires_grad(std::initializer_list<Tensor> inputs) {
  if (!grad_mode) return false;
  for (const Tensor& x : inputs)
    if (x.requires_grad()) return true;
  return false;
}

Tensor record(const char* op, Tensor out, const std::vector<Tensor>& inputs, const Saved& saved,
              BackwardFn backward) {
  if (!grad_mode) return out;
  bool any = false;
  for (const Tensor& x : inputs) any = any || x.requires_grad();
  if (!any) return out;

  auto node = std::make_shared<Node>();
  node->op = op;
  node->backward = std::move(backward);
  node->inputs.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    Edge edge;  // an undefined input (an optional bias, say) gets an empty edge
    if (x.defined()) {
      edge.shape = x.shape();
      if (x.grad_fn()) edge.node = x.grad_fn();
      else if (x.requires_grad()) edge.leaf = x.impl_ptr();
    }
    node->inputs.push_back(std::move(edge));
  }
  for (const Tensor& x : saved) {
    if (!x.defined()) continue;  // an optional input that was not given
    int role = SavedVersion::kOther;
    if (x.impl()->storage == out.impl()->storage) role = SavedVersion::kOutput;
    for (size_t i = 0; i < inputs.size() && role == SavedVersion::kOther; ++i)
      if (inputs[i].defined() && inputs[i].impl()->storage == x.impl()->storage) role = static_cast<int>(i);
    node->saved.push_back({x.impl()->version, *x.impl()->version, role});
  }
  node->output = out.impl_ptr();
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
  if (installed_observer) installed_observer->op_recorded(op);
  return out;
}

Tensor record(const char* op, Tensor out, std::initializer_list<Tensor> inputs, BackwardFn backward) {
  return record(op, std::move(out), inputs, Saved{}, std::move(backward));
}

Tensor record(const char* op, Tensor out, std::initializer_list<Tensor> inputs, const Saved& saved,
              BackwardFn backward) {
  if (!any_requires_grad(inputs)) return out;
  return record(op, std::move(out), std::vector<Tensor>(inputs), saved, std::move(backward));
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  TensorImpl& self = checked_impl("backward");
  if (!self.requires_grad)
    fail("backward", "this tensor of shape ", shape_str(self.shape),
         " does not require grad: nothing that produced it requires grad. Mark the leaves you want "
         "gradients for with requires_grad_(), and do not compute it under NoGradGuard");
  Tensor seed = gradient;
  if (!seed.defined()) {
    if (numel() != 1)
      fail("backward", "called on a tensor of shape ", shape_str(self.shape),
           " without a gradient; backward() with no argument needs a single-element (scalar) output: "
           "reduce it first (sum or mean) or pass a gradient of shape ",
           shape_str(self.shape));
    seed = ones(self.shape);
  } else if (seed.shape() != self.shape) {
    fail("backward", "gradient of shape ", shape_str(seed.shape()), " given for a tensor of shape ",
         shape_str(self.shape), "; they must match");
  }

  NoGradGuard no_grad;
  if (!self.grad_fn) {  // a leaf: its gradient is the seed itself
    accumulate_owned(self.grad, seed, seed.shape());
    return;
  }
  self.grad_fn->grad = seed;
  for (const std::shared_ptr<Node>& node : topological_order(self.grad_fn)) run_node(*node, retain_graph);
}

}  // namespace ladder
