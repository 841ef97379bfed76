#include "models/perceptron.h"

#include "core/error.h"

namespace ladder::models {

Perceptron::Perceptron(int64_t features) : weight(zeros({features})) {}

void Perceptron::check_input(const Tensor& x) const {
  if (x.dim() != 2 || x.size(1) != weight.numel())
    fail("Perceptron", "expects inputs (N, ", weight.numel(), "), got ", shape_str(x.shape()));
}

float Perceptron::score(const Tensor& x, int64_t row) const {
  const int64_t f = weight.numel();
  float s = bias;
  for (int64_t j = 0; j < f; ++j) s += weight.data()[j] * x.data()[row * f + j];
  return s;
}

Tensor Perceptron::predict(const Tensor& x) const {
  check_input(x);
  Tensor out = empty({x.size(0)});
  for (int64_t i = 0; i < x.size(0); ++i) out.data()[i] = score(x, i) >= 0 ? 1.0f : -1.0f;
  return out;
}

int64_t Perceptron::epoch(const Tensor& x, const Tensor& labels) {
  check_input(x);
  const int64_t f = weight.numel();
  int64_t mistakes = 0;
  for (int64_t i = 0; i < x.size(0); ++i) {
    const float y = labels.data()[i];
    if (y != 1 && y != -1) fail("Perceptron", "labels must be +1 or -1, got ", y, " at row ", i);
    if (y * score(x, i) > 0) continue;  // on the right side (a point on the line counts as a mistake)
    ++mistakes;
    float* w = weight.mutable_data();
    for (int64_t j = 0; j < f; ++j) w[j] += y * x.data()[i * f + j];
    bias += y;
  }
  return mistakes;
}

}  // namespace ladder::models
