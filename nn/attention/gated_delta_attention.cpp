#include "nn/attention/gated_delta_attention.h"

#include <cmath>

#include "core/ops.h"

namespace ladder::nn {

namespace {

constexpr float kFewestRate = 1, kMostRate = 16;        // A_h, drawn uniformly between
constexpr float kShortestStep = 1e-3f, kLongestStep = 0.1f;  // softplus(dt_h), drawn log-uniformly between

}  // namespace

GatedDeltaAttention::GatedDeltaAttention(const AttentionSettings& settings, Generator& gen)
    : DeltaAttention("GatedDeltaAttention", settings, checked_settings<Settings>(settings).chunk) {
  const int64_t H = settings.heads;
  decay_weight = register_parameter("decay_weight", zeros({H, settings.head_dim}));
  decay_rate_log = register_parameter("decay_rate_log", empty({H}), ParamKind::bias);
  decay_bias = register_parameter("decay_bias", empty({H}), ParamKind::bias);
  for (int64_t h = 0; h < H; ++h) {
    decay_rate_log.data()[h] = std::log(gen.uniform(kFewestRate, kMostRate));
    const float step = std::exp(gen.uniform(std::log(kShortestStep), std::log(kLongestStep)));
    decay_bias.data()[h] = step + std::log(-std::expm1(-step));  // softplus(dt) = step
  }
}

Tensor GatedDeltaAttention::log_decay(const Tensor& raw_keys) const {
  const Tensor rate = reshape(exp(decay_rate_log), {1, heads(), 1});
  return -(rate * softplus(per_head_projection(raw_keys, decay_weight, decay_bias)));
}

KindDescription gated_delta_attention_kind() {
  using Settings = GatedDeltaAttention::Settings;
  KindDescription kind = delta_attention_kind();
  kind.name = GatedDeltaAttention::kName;
  kind.defaults = Settings{};
  kind.settings = {kind_setting(&Settings::chunk, kind.settings.front())};
  kind.make = [](const AttentionSettings& s, Generator& gen) { return std::make_shared<GatedDeltaAttention>(s, gen); };
  kind.describe = [](const AttentionSettings& s, bool) {
    return cat("gated_delta (the delta rule with a decay, chunk ", s.kind.as<Settings>().chunk, ")");
  };
  return kind;
}

AttentionSettings gated_delta_attention_settings(int64_t chunk) {
  return {.kind = GatedDeltaAttention::Settings{.chunk = chunk}};
}

}  // namespace ladder::nn
