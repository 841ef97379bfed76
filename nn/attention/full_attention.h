// Full softmax attention as an attention kind: core's fused scaled_dot_product_attention for whole
// sequences, a KV cache for generation, attention_weights for maps. Every query may see every key
// (the masks allowing): time T*S*D, memory T*D (the fused op never holds the (T,S) scores).
#pragma once

#include "core/ops.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"

namespace ladder::nn {

// The KV cache: the projected keys and values (rotated, when rotary) of every position a causal
// self attention has been fed so far. FullAttention::step (and BigBird's) appends the new
// positions' keys and values and attends to them: for the GPT, one per block; for the
// Transformer's decoder, whose DecoderState keeps the two tensors and wraps them at each step.
struct KeyValueState : AttentionState {
  Tensor keys, values;  // (B,H,L,D); undefined while empty
  int64_t length() const override { return keys.defined() ? keys.size(2) : 0; }
  std::unique_ptr<AttentionState> clone() const override { return std::make_unique<KeyValueState>(*this); }
};

class FullAttention : public AttentionKind {
 public:
  static constexpr const char* kName = "full";
  static constexpr const char* kLabel = "softmax";  // beside linear attention's feature maps: softmax attention
  struct Settings {};  // none of its own: every query may see every key the masks allow
  explicit FullAttention(const AttentionSettings& settings, Generator& gen = default_generator());
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

 protected:
  std::string describe() const override;

 private:
  float dropout_;
  Generator gen_;  // draws the dropout masks
};

KindDescription full_attention_kind();  // its line in the registry
AttentionSettings full_attention();     // the settings of full attention

}  // namespace ladder::nn
