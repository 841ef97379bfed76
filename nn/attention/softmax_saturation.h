// How saturated a softmax over attention scores is (lesson 08: why dot products are divided by
// sqrt(d)): the scores' spread, how much of the weight the top key takes, and how much gradient the
// softmax still passes back to the scores. A softmax that has become one-hot passes back none.
#pragma once

#include "core/random.h"
#include "core/tensor.h"

namespace ladder::nn {

struct SoftmaxSaturation {
  double variance;                // of all the scores
  double largest_weight;          // the mean over rows of each row's largest weight
  double grad_median, grad_mean;  // over rows, of the length of the gradient reaching the row's scores
};

// scores (..., S): one softmax per row over the last dim. The gradient is backpropagated from a
// random upstream gradient g = randn(scores' shape) drawn from gen, of unit variance: each row's
// scores receive J^T g, with J = diag(p) - p p^T the softmax's Jacobian. The median of an even
// number of rows is the upper of the middle two.
SoftmaxSaturation softmax_saturation(const Tensor& scores, Generator& gen);

}  // namespace ladder::nn
