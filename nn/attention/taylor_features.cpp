#include "nn/attention/taylor_features.h"

#include <cmath>

#include "core/ops.h"

namespace ladder::nn {

Tensor TaylorFeatures::query_features(const Tensor& x) const {  // x (..., D)
  const int64_t D = x.size(-1);
  const Tensor scaled = x / static_cast<float>(std::pow(static_cast<double>(D), 0.25));  // x' = x / D^(1/4)
  Shape flat = x.shape();
  flat.back() = D * D;
  const Tensor products = reshape(unsqueeze(scaled, -1) * unsqueeze(scaled, -2), flat) / std::sqrt(2.0f);  // (..., D*D)
  Shape one = x.shape();
  one.back() = 1;
  return concat({ones(one), scaled, products}, -1);  // [1; x'; x' x'^T / sqrt(2)]
}

}  // namespace ladder::nn
