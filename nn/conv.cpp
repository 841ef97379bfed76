#include "nn/conv.h"

#include <cmath>

#include "core/error.h"
#include "nn/init.h"

namespace ladder::nn {

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, Conv2dOptions options, bool bias,
               Generator& gen)
    : Module("Conv2d"), options_(options) {
  if (in_channels <= 0 || out_channels <= 0 || kernel <= 0)
    fail("Conv2d", "sizes must be positive, got in=", in_channels, ", out=", out_channels, ", kernel=", kernel);
  weight = register_parameter("weight", empty({out_channels, in_channels, kernel, kernel}));
  init_weight(weight, Init::pytorch, gen);
  if (bias) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(in_channels * kernel * kernel));
    this->bias = register_parameter("bias", empty({out_channels}), ParamKind::bias);
    init_uniform(this->bias, -bound, bound, gen);
  }
}

Tensor Conv2d::forward(const Tensor& x) {
  return conv2d(x, weight, bias, options_);
}

std::string Conv2d::describe() const {
  return cat(weight.size(1), ", ", weight.size(0), ", kernel=", weight.size(2), ", stride=", options_.stride,
             ", padding=", options_.padding, bias.defined() ? "" : ", bias=false");
}

std::string Pool2d::describe() const {
  return cat("kernel=", options_.kernel, ", stride=", options_.stride ? options_.stride : options_.kernel);
}

Tensor Flatten::forward(const Tensor& x) { return flatten(x, start_dim_); }

}  // namespace ladder::nn
