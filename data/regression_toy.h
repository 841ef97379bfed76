// d2l's 1-D regression toy for attention pooling (lesson 08): y = 2 sin(x) + x^0.8 plus Gaussian
// noise, training inputs drawn uniformly in [0, 5) and sorted, test inputs on a grid 0, 0.1, ..., 4.9.
#pragma once

#include <cstdint>

#include "core/random.h"
#include "core/tensor.h"

namespace ladder::data {

struct RegressionToy {
  Tensor x_train, y_train;  // (N): sorted inputs and noisy targets
  Tensor x_test, y_truth;   // (Q): a grid over [0, 5) and the noise-free targets there
};

// The function to learn: y = 2 sin(x) + x^0.8, elementwise (x in [0, 5)).
Tensor regression_truth(const Tensor& x);

// `points` training inputs, each target with N(0, noise^2) added. Sorted, so that neighbouring
// inputs are neighbouring columns of a heatmap of attention weights.
RegressionToy regression_toy(int64_t points, float noise, Generator& gen);

}  // namespace ladder::data
