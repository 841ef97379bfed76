#include "core/graphviz.h"

#include <cstdio>
#include <map>

#include "core/autograd.h"

namespace ladder {

namespace {

std::string value_text(const TensorImpl& t) {
  if (numel(t.shape) != 1) return shape_str(t.shape);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", t.storage[0]);
  return buf;
}

}  // namespace

std::string graph_to_dot(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& names) {
  std::map<const TensorImpl*, std::string> name_of;
  for (const auto& [name, t] : names) name_of[t.impl()] = name;
  std::map<const Node*, std::string> op_names;
  for (const auto& [name, t] : names)
    if (t.grad_fn()) op_names[t.grad_fn().get()] = name;

  std::string dot = "digraph autograd {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n";
  std::map<const void*, std::string> ids;
  auto id_of = [&ids](const void* p) {
    auto [it, added] = ids.try_emplace(p, "n" + std::to_string(ids.size()));
    return std::make_pair(it->second, added);
  };
  std::vector<const Node*> todo;
  if (root.grad_fn()) todo.push_back(root.grad_fn().get());
  else if (root.requires_grad()) dot += "  n0 [shape=ellipse, label=\"" + value_text(*root.impl()) + "\"];\n";
  if (!todo.empty()) id_of(todo.front());
  while (!todo.empty()) {
    const Node* node = todo.back();
    todo.pop_back();
    const std::string id = ids.at(node);
    std::string label = node->op;
    if (const auto out = node->output.lock()) {
      const std::string name = op_names.count(node) ? op_names.at(node) + " = " : "";
      label += "\\n" + name + value_text(*out);
      if (out->grad) label += "\\ngrad " + value_text(*out->grad);
    }
    dot += "  " + id + " [shape=box, style=filled, fillcolor=\"#dde8f6\", label=\"" + label + "\"];\n";
    for (const Edge& edge : node->inputs) {
      if (edge.node) {
        const auto [child, added] = id_of(edge.node.get());
        if (added) todo.push_back(edge.node.get());
        dot += "  " + child + " -> " + id + ";\n";
      } else if (edge.leaf) {
        const auto [leaf, added] = id_of(edge.leaf.get());
        if (added) {
          const std::string name = name_of.count(edge.leaf.get()) ? name_of.at(edge.leaf.get()) + " = " : "";
          std::string text = name + value_text(*edge.leaf);
          if (edge.leaf->grad) text += "\\ngrad " + value_text(*edge.leaf->grad);
          dot += "  " + leaf + " [shape=ellipse, style=filled, fillcolor=\"#fde9d4\", label=\"" + text + "\"];\n";
        }
        dot += "  " + leaf + " -> " + id + ";\n";
      }
    }
  }
  return dot + "}\n";
}

}  // namespace ladder
