// Based's feature map (Arora et al. 2024, "Simple linear attention language models balance the
// recall-throughput tradeoff"): the second-order Taylor expansion of softmax's exp(s) at 0,
//   exp(s) ~ 1 + s + s^2 / 2,   s = q . k / sqrt(D),
// written as a dot product of features: with x' = x / D^(1/4),
//   phi(x) = [1; x'; (x' outer x') / sqrt(2)]      M = 1 + D + D^2
// so phi(q) . phi(k) = 1 + s + s^2 / 2, which is positive for every s (its smallest value is 1/2).
// The D^2 pairwise products make the state (M, D) per head about D times elu+1's: the trade Based
// makes, a bigger state for a sharper similarity and better recall.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "nn/attention/feature_map.h"

namespace ladder::nn {

class TaylorFeatures : public FeatureMap {
 public:
  static constexpr const char* kName = "taylor";
  const char* name() const override { return kName; }
  const char* label() const override { return "Taylor (Based)"; }
  int64_t features(int64_t head_dim) const override { return 1 + head_dim + head_dim * head_dim; }
  Tensor query_features(const Tensor& q) const override;  // (..., D) -> (..., 1 + D + D^2)
};

}  // namespace ladder::nn
