// Rosenblatt's perceptron: a linear classifier trained by its own rule, without gradients.
#pragma once

#include "core/tensor.h"

namespace ladder::models {

class Perceptron {
 public:
  explicit Perceptron(int64_t features);
  // +1 or -1 for each row of x (N, features): the sign of x . w + b (0 counts as +1).
  Tensor predict(const Tensor& x) const;
  // One pass over the data in order; labels are +1 or -1. For each mistake, w += y x and b += y.
  // Returns the number of mistakes: 0 means every point is on its side (the data is separated).
  int64_t epoch(const Tensor& x, const Tensor& labels);

  Tensor weight;  // (features)
  float bias = 0;

 private:
  void check_input(const Tensor& x) const;
  float score(const Tensor& x, int64_t row) const;  // x[row] . w + b
};

}  // namespace ladder::models
