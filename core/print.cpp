// Printing tensors the way PyTorch does: nested brackets, aligned columns, "..." for big tensors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "core/autograd.h"
#include "core/tensor.h"

namespace ladder {

namespace {

constexpr int64_t kSummarizeAbove = 1000;  // elements; bigger tensors show only their edges
constexpr int64_t kEdgeItems = 3;

enum class Style { integer, fixed, scientific };

struct Printer {
  const float* data;
  Shape shape;
  Shape strides;
  bool summarize;
  Style style = Style::fixed;
  size_t width = 0;

  // Visits the elements that will be shown, in order.
  template <class Visit>
  void for_each_shown(int64_t dim, int64_t offset, Visit&& visit) const {
    if (dim == static_cast<int64_t>(shape.size())) {
      visit(data[offset]);
      return;
    }
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (skipped(dim, i)) continue;
      for_each_shown(dim + 1, offset + i * strides[dim], visit);
    }
  }

  bool skipped(int64_t dim, int64_t i) const {
    return summarize && shape[dim] > 2 * kEdgeItems && i >= kEdgeItems && i < shape[dim] - kEdgeItems;
  }

  std::string format(float v) const {
    char buf[48];
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (style == Style::integer) std::snprintf(buf, sizeof buf, "%.0f.", v);
    else if (style == Style::fixed) std::snprintf(buf, sizeof buf, "%.4f", v);
    else std::snprintf(buf, sizeof buf, "%.4e", v);
    return buf;
  }

  void choose_style() {
    bool all_integer = true;
    float max_abs = 0, min_abs = INFINITY;
    for_each_shown(0, 0, [&](float v) {
      if (!std::isfinite(v)) return;
      all_integer = all_integer && v == std::nearbyint(v);
      max_abs = std::max(max_abs, std::fabs(v));
      if (v != 0) min_abs = std::min(min_abs, std::fabs(v));
    });
    // Like PyTorch: whole numbers print as "3.", a wide range of magnitudes as 1.0000e-05.
    if (all_integer && max_abs < 1e8f) style = Style::integer;
    else if (max_abs >= 1e8f || min_abs < 1e-4f || (min_abs != INFINITY && max_abs / min_abs > 1e3f))
      style = Style::scientific;
    for_each_shown(0, 0, [&](float v) { width = std::max(width, format(v).size()); });
  }

  void print(std::ostream& out, int64_t dim, int64_t offset, int indent) const {
    if (dim == static_cast<int64_t>(shape.size())) {
      const std::string s = format(data[offset]);
      out << std::string(width - s.size(), ' ') << s;
      return;
    }
    out << '[';
    const bool last_dim = dim + 1 == static_cast<int64_t>(shape.size());
    bool first = true;
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (skipped(dim, i)) {
        if (i == kEdgeItems) out << (last_dim ? ", ..." : ",\n" + std::string(indent + 1, ' ') + "...");
        continue;
      }
      if (!first) {
        out << ',';
        if (last_dim) out << ' ';
        else out << std::string(shape.size() - dim - 1, '\n') << std::string(indent + 1, ' ');
      }
      first = false;
      print(out, dim + 1, offset + i * strides[dim], indent + 1);
    }
    out << ']';
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& out, const Tensor& x) {
  if (!x.defined()) return out << "tensor(undefined)";
  Printer printer{x.data(), x.shape(), contiguous_strides(x.shape()), x.numel() > kSummarizeAbove};
  if (x.numel() > 0) printer.choose_style();
  const int indent = 7;  // the width of "tensor("
  out << "tensor(";
  if (x.numel() == 0) out << "[]";
  else printer.print(out, 0, 0, indent);
  out << ", shape=" << shape_str(x.shape());
  if (x.grad_fn()) out << ", grad_fn=<" << x.grad_fn()->op << ">";
  else if (x.requires_grad()) out << ", requires_grad=true";
  return out << ")";
}

std::string to_string(const Tensor& x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace ladder
