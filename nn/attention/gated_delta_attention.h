// The gated delta rule as an attention kind (Gated DeltaNet: Yang, Kautz and Hatamizadeh, ICLR
// 2025): the delta rule (delta_attention.h) with a decay alpha_t in (0, 1] of the whole state before
// each write, S_t = alpha_t (S_{t-1} - beta_t k_t k_t^T S_{t-1}) + beta_t k_t v_t^T, so that a head
// can forget what is old at once, where the delta rule only replaces one key's value at a time.
//
// alpha_t in Mamba-2's parameterisation, as the paper has it: alpha_t = exp(-A_h softplus(w_h . k_t +
// dt_h)), with A_h > 0 a learned rate per head (drawn from 1 to 16 as A_log = log A) and dt_h a
// learned bias (drawn so that softplus(dt_h) runs from 0.001 to 0.1, log-uniformly): each head
// starts with its own memory span, from a few positions to about a thousand.
#pragma once

#include <string>

#include "nn/attention/delta_attention.h"

namespace ladder::nn {

class GatedDeltaAttention : public DeltaAttention {
 public:
  static constexpr const char* kName = "gated_delta";
  struct Settings {
    int64_t chunk = DeltaAttention::kDefaultChunk;  // positions per chunk of the training form
  };
  // settings.heads and settings.head_dim size the projections; the decays' rates and biases are drawn from gen.
  GatedDeltaAttention(const AttentionSettings& settings, Generator& gen);

  Tensor decay_weight, decay_rate_log, decay_bias;  // w (H,D), A_log (H) and dt (H)

 protected:
  Tensor log_decay(const Tensor& raw_keys) const override;  // -A_h softplus(w_h . k_t + dt_h), (B,H,T)
};

KindDescription gated_delta_attention_kind();  // its line in the registry
AttentionSettings gated_delta_attention_settings(int64_t chunk = DeltaAttention::kDefaultChunk);

}  // namespace ladder::nn
