// The autograd graph of a tensor as Graphviz DOT text, to look at what backward() will walk.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ladder {

// Ops are boxes, leaves that require grad are ellipses (with value and .grad when they hold
// one element); arrows point from inputs to the op that uses them. `names` labels tensors:
// leaves by name, op outputs next to their op. Call it before backward() frees the graph, or
// after backward(g, /*retain_graph=*/true) to see the gradients too.
std::string graph_to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& names = {});

}  // namespace ladder
