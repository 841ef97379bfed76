#include "nn/init.h"

#include <cmath>

#include "core/error.h"

namespace ladder::nn {

std::pair<int64_t, int64_t> fans(const Tensor& weight) {
  if (weight.dim() < 2) fail("init", "fan-in needs a weight of at least 2 dims, got ", shape_str(weight.shape()));
  const int64_t receptive = weight.numel() / (weight.size(0) * weight.size(1));  // kernel area for convs
  return {weight.size(1) * receptive, weight.size(0) * receptive};
}

void init_uniform(const Tensor& t, float low, float high, Generator& gen) {
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = gen.uniform(low, high);
}

void init_normal(const Tensor& t, float mean, float std, Generator& gen) {
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = mean + std * gen.normal();
}

void init_weight(const Tensor& weight, Init scheme, Generator& gen, float std) {
  const auto [fan_in, fan_out] = fans(weight);
  switch (scheme) {
    case Init::pytorch: {
      const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
      return init_uniform(weight, -bound, bound, gen);
    }
    case Init::xavier: {
      const float bound = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
      return init_uniform(weight, -bound, bound, gen);
    }
    case Init::kaiming: return init_normal(weight, 0, std::sqrt(2.0f / static_cast<float>(fan_in)), gen);
    case Init::normal: return init_normal(weight, 0, std, gen);
  }
}

}  // namespace ladder::nn
