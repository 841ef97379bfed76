#include "nn/norm.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

LayerNorm::LayerNorm(Shape normalized_shape, float eps, bool affine)
    : Module("LayerNorm"), normalized_shape_(std::move(normalized_shape)), eps_(eps) {
  if (affine) {
    weight = register_parameter("weight", ones(normalized_shape_), ParamKind::norm);
    bias = register_parameter("bias", zeros(normalized_shape_), ParamKind::norm);
  }
}

Tensor LayerNorm::forward(const Tensor& x) { return layer_norm(x, normalized_shape_, weight, bias, eps_); }

std::string LayerNorm::describe() const {
  return cat(shape_str(normalized_shape_), ", eps=", eps_, ", affine=", weight.defined() ? "true" : "false");
}

RMSNorm::RMSNorm(int64_t dim, float eps) : Module("RMSNorm"), eps_(eps) {
  if (dim <= 0) fail("RMSNorm", "dim must be positive, got ", dim);
  weight = register_parameter("weight", ones({dim}), ParamKind::norm);
}

Tensor RMSNorm::forward(const Tensor& x) { return rms_norm(x, {weight.size(0)}, weight, eps_); }

std::string RMSNorm::describe() const { return cat(weight.size(0), ", eps=", eps_); }

BatchNorm::BatchNorm(const char* type_name, int64_t channels, int64_t input_dims, float eps, float momentum)
    : Module(type_name), input_dims_(input_dims), eps_(eps), momentum_(momentum) {
  if (channels <= 0) fail(type_name, "channels must be positive, got ", channels);
  weight = register_parameter("weight", ones({channels}), ParamKind::norm);
  bias = register_parameter("bias", zeros({channels}), ParamKind::norm);
  running_mean = register_buffer("running_mean", zeros({channels}));
  running_var = register_buffer("running_var", ones({channels}));
}

Tensor BatchNorm::forward(const Tensor& x) {
  if (x.dim() != input_dims_ || x.size(1) != weight.size(0))
    fail(type_name().c_str(), "expects input ", input_dims_ == 2 ? "(N," : "(N,", weight.size(0),
         input_dims_ == 2 ? ")" : ",H,W)", ", got ", shape_str(x.shape()));
  return batch_norm(x, running_mean, running_var, weight, bias, is_training(), momentum_, eps_);
}

std::string BatchNorm::describe() const { return cat(weight.size(0), ", eps=", eps_, ", momentum=", momentum_); }

}  // namespace ladder::nn
