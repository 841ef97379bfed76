#include "nn/attention/softmax_saturation.h"

#include <algorithm>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

SoftmaxSaturation softmax_saturation(const Tensor& scores_in, Generator& gen) {
  if (scores_in.dim() < 1 || scores_in.numel() == 0)
    fail("softmax_saturation", "scores ", shape_str(scores_in.shape()), " must be (..., S) with at least one score");
  Tensor scores = scores_in.detach();  // (..., S), a leaf of a graph of its own
  scores.requires_grad_();
  const Tensor weights = softmax(scores, -1);
  sum(weights * randn(weights.shape(), gen)).backward();
  NoGradGuard no_grad;
  std::vector<float> lengths = sqrt(sum(scores.grad() * scores.grad(), {-1})).to_vector();  // one per row
  std::sort(lengths.begin(), lengths.end());
  double total = 0;
  for (const float l : lengths) total += l;
  return {var(scores).item(), mean(amax(weights, {-1})).item(), lengths[lengths.size() / 2],
          total / static_cast<double>(lengths.size())};
}

}  // namespace ladder::nn
