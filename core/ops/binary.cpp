// Elementwise ops of two tensors with NumPy broadcasting: out = f(a, b), and both partial derivatives.
#include "core/ops/elementwise.h"

namespace ladder {

template <size_t N>
BroadcastN<N>::BroadcastN(const std::array<Shape, N>& inputs, const char* op) : out_(inputs[0]) {
  for (size_t n = 1; n < N; ++n) out_ = broadcast_shapes(out_, inputs[n], op);
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
  std::array<std::vector<int64_t>, N> full;
  for (size_t n = 0; n < N; ++n) full[n] = strides_of(inputs[n]);
  // Merge each dim into the one inside it when every input steps through them as one block.
  for (size_t d = rank; d-- > 0;) {
    if (out_[d] == 1) continue;
    bool mergeable = !sizes_.empty();
    for (size_t n = 0; n < N && mergeable; ++n) mergeable = full[n][d] == strides_[n].back() * sizes_.back();
    if (mergeable) {
      sizes_.back() *= out_[d];
    } else {
      sizes_.push_back(out_[d]);
      for (size_t n = 0; n < N; ++n) strides_[n].push_back(full[n][d]);
    }
  }
  if (sizes_.empty()) {  // every dim is 1: one element
    sizes_ = {1};
    for (auto& strides : strides_) strides = {0};
  }
  std::reverse(sizes_.begin(), sizes_.end());  // built inside-out; store outermost first
  for (auto& strides : strides_) std::reverse(strides.begin(), strides.end());
}

template class BroadcastN<2>;
template class BroadcastN<3>;

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
