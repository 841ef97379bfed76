#include "nn/linear.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

Linear::Linear(int64_t in_features, int64_t out_features, LinearOptions options, Generator& gen) : Module("Linear") {
  if (in_features <= 0 || out_features <= 0)
    fail("Linear", "sizes must be positive, got in=", in_features, ", out=", out_features);
  weight = register_parameter("weight", empty({out_features, in_features}));
  init_weight(weight, options.init, gen, options.std);
  if (options.bias) {
    bias = register_parameter("bias", zeros({out_features}), ParamKind::bias);
    // PyTorch draws the bias like the weight; the other schemes start it at zero.
    if (options.init == Init::pytorch) {
      const float bound = 1.0f / std::sqrt(static_cast<float>(in_features));
      init_uniform(bias, -bound, bound, gen);
    }
  }
}

Tensor Linear::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != weight.size(1))
    fail("Linear", "expects input (..., ", weight.size(1), "), got ", shape_str(x.shape()));
  return linear(x, weight, bias);  // (..., in) @ (out, in)^T + bias, the bias added inside the GEMM
}

std::string Linear::describe() const {
  return cat("in=", weight.size(1), ", out=", weight.size(0), ", bias=", bias.defined() ? "true" : "false");
}

}  // namespace ladder::nn
