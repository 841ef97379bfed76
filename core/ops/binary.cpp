// Elementwise ops of two tensors with NumPy broadcasting: out = f(a, b), and both partial derivatives.
#include "core/ops/elementwise.h"

namespace ladder {

Broadcast::Broadcast(const Shape& a, const Shape& b, const char* op) : out_(broadcast_shapes(a, b, op)) {
  const size_t rank = out_.size();
  // Strides of an input measured in the output's dims: 0 where the input is broadcast.
  auto strides_of = [rank](const Shape& s) {
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t size = s[s.size() - 1 - i];
      strides[rank - 1 - i] = size == 1 ? 0 : stride;
      stride *= size;
    }
    return strides;
  };
  const std::vector<int64_t> sa = strides_of(a), sb = strides_of(b);
  // Merge each dim into the one inside it when both inputs step through them as one block.
  for (size_t d = rank; d-- > 0;) {
    if (out_[d] == 1) continue;
    const bool mergeable = !sizes_.empty() && sa[d] == stride_a_.back() * sizes_.back() &&
                           sb[d] == stride_b_.back() * sizes_.back();
    if (mergeable) {
      sizes_.back() *= out_[d];
    } else {
      sizes_.push_back(out_[d]);
      stride_a_.push_back(sa[d]);
      stride_b_.push_back(sb[d]);
    }
  }
  if (sizes_.empty()) {  // every dim is 1: one element
    sizes_ = {1};
    stride_a_ = stride_b_ = {0};
  }
  std::reverse(sizes_.begin(), sizes_.end());  // built inside-out; store outermost first
  std::reverse(stride_a_.begin(), stride_a_.end());
  std::reverse(stride_b_.begin(), stride_b_.end());
}

Tensor add(const Tensor& a, const Tensor& b) {
  return binary_op("add", a, b, [](float x, float y) { return x + y; },
                   1.0f, 1.0f);
}

Tensor sub(const Tensor& a, const Tensor& b) {
  return binary_op("sub", a, b, [](float x, float y) { return x - y; },
                   1.0f, -1.0f);
}

Tensor mul(const Tensor& a, const Tensor& b) {  // d(ab)/da = b, d(ab)/db = a
  return binary_op("mul", a, b, [](float x, float y) { return x * y; },
                   [](float, float y, float) { return y; }, [](float x, float, float) { return x; });
}

Tensor div(const Tensor& a, const Tensor& b) {  // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -out/b
  return binary_op("div", a, b, [](float x, float y) { return x / y; },
                   [](float, float y, float) { return 1 / y; },
                   [](float, float y, float out) { return -out / y; });
}

// x + y is NaN when either is: the comparisons alone would let a NaN through on one side only.
Tensor maximum(const Tensor& a, const Tensor& b) {
  return binary_op("maximum", a, b, [](float x, float y) { return x >= y ? x : (y > x ? y : x + y); },
                   [](float x, float y, float) { return x > y ? 1.0f : (x == y ? 0.5f : 0.0f); },
                   [](float x, float y, float) { return y > x ? 1.0f : (x == y ? 0.5f : 0.0f); });
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  return binary_op("minimum", a, b, [](float x, float y) { return x <= y ? x : (y < x ? y : x + y); },
                   [](float x, float y, float) { return x < y ? 1.0f : (x == y ? 0.5f : 0.0f); },
                   [](float x, float y, float) { return y < x ? 1.0f : (x == y ? 0.5f : 0.0f); });
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }

}  // namespace ladder
