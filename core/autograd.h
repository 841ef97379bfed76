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
  Shape shape;                       // the input's shape; its gradient broadcasts to it
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

// One gradient per op input, in order; an undefined Tensor where the input needs none. A gradient
// has the input's shape, or the same rank with size 1 where it is the same along that dim (sum's
// backward returns gy with the reduced dims kept as 1): the engine broadcasts it as it adds it in,
// without writing the expansion out first.
using Grads = std::vector<Tensor>;
// Given dL/d(output), returns dL/d(input) for each input. It runs under NoGradGuard.
using BackwardFn = std::function<Grads(const Tensor& grad_out, NeedsGrad needs)>;

// A value that a backward function reads (an input or the output of its op), and the version its
// values had when the op ran. If they were written in place since, backward() refuses to run.
struct SavedVersion {
  std::shared_ptr<uint64_t> counter;  // the values' version counter (TensorImpl::version)
  uint64_t version;                   // its reading when the op ran
  int role;                           // which it is: input index >= 0, kOutput, or kOther
  static constexpr int kOutput = -1, kOther = -2;
};

// A recorded op: what its backward needs and where the gradients go.
struct Node {
  const char* op;                    // "mul", "matmul", ...
  std::vector<Edge> inputs;          // one per op input
  BackwardFn backward;               // captures the values it needs (detached) by value
  std::vector<SavedVersion> saved;   // the versions of those values, checked before backward runs
  std::weak_ptr<TensorImpl> output;  // to fill .grad when the output retains it
  Tensor grad;                       // dL/d(output), summed over its uses while backward runs
  bool released = false;             // backward() already ran through here and freed the graph
  uint64_t visit_mark = 0;           // the backward pass that last visited this node

  ~Node();
  void release();  // frees the saved values and the edges once backward has run through

};

// The inputs and outputs whose values a backward function reads: record() notes their versions.
using Saved = std::vector<Tensor>;

// Attaches `backward` to `out` when grad mode is on and any input requires grad; returns `out`.
// This is the only way an op enters the graph, so an op cannot be recorded without a backward.
// An op whose backward reads values of its inputs or output lists them in `saved`; an op whose
// backward needs only shapes (add, sum, reshape) passes none.
Tensor record(const char* op, Tensor out, std::initializer_list<Tensor> inputs, BackwardFn backward);
Tensor record(const char* op, Tensor out, std::initializer_list<Tensor> inputs, const Saved& saved,
              BackwardFn backward);
Tensor record(const char* op, Tensor out, const std::vector<Tensor>& inputs, const Saved& saved,
              BackwardFn backward);

// True when an op on these inputs would be recorded.
bool any_requires_grad(std::initializer_list<Tensor> inputs);

}  // namespace ladder
