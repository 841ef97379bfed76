#include "nn/attention/relative_positions.h"

#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

Tensor sinusoid_of_offsets(int64_t first, int64_t count, int64_t width, double wavelength) {
  if (width < 2 || width % 2 != 0) fail("sinusoid_of_offsets", "width must be even and >= 2, got ", width);
  const int64_t m = width / 2;
  Tensor table = empty({count, width});
  for (int64_t row = 0; row < count; ++row)
    for (int64_t k = 0; k < m; ++k) {
      const double angle = static_cast<double>(first - row) * std::pow(wavelength, -2.0 * k / width);
      table.data()[row * width + k] = static_cast<float>(std::sin(angle));
      table.data()[row * width + m + k] = static_cast<float>(std::cos(angle));
    }
  return table;
}

namespace {

int64_t sinusoid_width(int64_t heads, int64_t head_dim) { return (heads * head_dim + 1) / 2 * 2; }

}  // namespace

RelativePositions::RelativePositions(int64_t heads, int64_t head_dim, float scale, Generator& gen)
    : Module("RelativePositions"), heads_(heads), head_dim_(head_dim), scale_(scale) {
  if (heads < 1 || head_dim < 1)
    fail("RelativePositions", "needs heads >= 1 and head_dim >= 1, got ", heads, " and ", head_dim);
  content_bias = register_parameter("content_bias", zeros({heads * head_dim}), ParamKind::bias);
  position_bias = register_parameter("position_bias", zeros({heads * head_dim}), ParamKind::bias);
  const int64_t width = sinusoid_width(heads, head_dim);
  offset_proj = register_module(
      "offset_proj",
      std::make_shared<Linear>(width, heads * head_dim,
                               LinearOptions{.bias = false, .init = Init::normal,
                                             .std = 1.0f / std::sqrt(static_cast<float>(width))},
                               gen));
}

Tensor RelativePositions::offsets(int64_t block, bool causal) {
  const Tensor& weight = offset_proj->weight;
  const bool keep = !grad_enabled() && !is_training();  // generation
  if (keep && kept_.defined() && kept_block_ == block && kept_causal_ == causal && kept_storage_ == weight.data() &&
      kept_version_ == weight.version())
    return kept_;
  const int64_t count = causal ? block + 1 : 2 * block + 1;
  if (!sinusoid_.defined() || sinusoid_block_ != block || sinusoid_.size(0) != count) {
    sinusoid_ = sinusoid_of_offsets(block, count, sinusoid_width(heads_, head_dim_));
    sinusoid_block_ = block;
  }
  // (P, H*D) -> (H, P, D)
  const Tensor r = permute(reshape(offset_proj->forward(sinusoid_) * scale_, {count, heads_, head_dim_}), {1, 0, 2});
  if (keep) {
    kept_ = r, kept_block_ = block, kept_causal_ = causal;
    kept_storage_ = weight.data(), kept_version_ = weight.version();
  }
  return r;
}

Tensor RelativePositions::content_query_bias() const {
  return reshape(content_bias, {1, heads_, 1, head_dim_}) * scale_;
}
Tensor RelativePositions::position_query_bias() const {
  return reshape(position_bias, {1, heads_, 1, head_dim_}) * scale_;
}

std::string RelativePositions::describe() const {
  return cat("heads=", heads_, ", head_dim=", head_dim_, ", scale=", scale_);
}

}  // namespace ladder::nn
