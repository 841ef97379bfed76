// The autograd engine: ops record Nodes as they run; backward() walks them in reverse.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace ladder {

// Grad mode is on by default; under a NoGradGuard ops record nothing (evaluation, optimizer steps).
bool grad_enabled();

class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Where the gradient for one input of an op goes.
struct Edge {
  std::shared_ptr<Node> node;        // the op that produced the input, when it has one;
  std::shared_ptr<TensorImpl> leaf;  // else the input itself, when it is a leaf that requires grad
  Shape shape;                       // the input's shape; its gradient must have it
  bool needed() const { return node || leaf; }
};

// Tells a backward function which inputs want a gradient, so that it can skip the others.
class NeedsGrad {
 public:
  explicit NeedsGrad(const std::vector<Edge>& inputs) : inputs_(inputs) {}
  bool operator[](size_t i) const { return inputs_[i].needed(); }

 private:
  const std::vector<Edge>& inputs_;
};

// One gradient per op input, in order; an undefined Tensor where the input needs none.
using Grads = std::vector<Tensor>;
// Given dL/d(output), returns dL/d(input) for each input. It runs under NoGradGuard.
using BackwardFn = std::function<Grads(const Tensor& grad_out, NeedsGrad needs)>;

// A recorded op: what its backward needs and where the gradients go.
struct Node {
  const char* op;                    // "mul", "matmul", ...
  std::vector<Edge> inputs;          // one per op input
  BackwardFn backward;               // captures the values it needs (detached) by value
  std::weak_ptr<TensorImpl> output;  // to fill .grad when the output retains it
  Tensor grad;                       // dL/d(output), summed over its uses while backward runs
  bool released = false;             // backward() already ran through here and freed the graph
  uint64_t visit_mark = 0;           // the backward pass that last visited this node

  ~Node();
  void release();  // frees the saved values and the edges once backward has run through

};

// Attaches `backward` to `out` when grad mode is on and any input requires grad; returns `out`.
// This is the only way an op enters the graph, so an op cannot be recorded without a backward.
Tensor record(const char* op, Tensor out, std::initializer_list<Tensor> inputs, BackwardFn backward);
Tensor record(const char* op, Tensor out, const std::vector<Tensor>& inputs, BackwardFn backward);

// True when an op on these inputs would be recorded.
bool any_requires_grad(std::initializer_list<Tensor> inputs);

}  // namespace ladder
