// The delta rule as an attention kind (DeltaNet: Schlag, Irie and Schmidhuber 2021, "Linear
// Transformers Are Secretly Fast Weight Programmers"; trained in chunks as Yang et al. 2024 do):
// linear attention's state, a (D,D) matrix per head, but each position first reads what the state
// holds for its key and replaces it, S_t = S_{t-1} + k_t beta_t (v_t - S_{t-1}^T k_t)^T, instead of
// adding v_t on top. A key written twice keeps its latest value, so up to D associations stay
// apart where linear attention's sum blurs them. Causal only: the state is written position by
// position. core/kernels/delta_rule.h has the forms it runs in.
//
// Queries and keys are L2-normalised per head. The write strength beta_t = sigmoid(w_h . k_t + b_h)
// is a learned projection of the input, read through the head's raw key k_t = W_k x_t: a kind sees
// its heads' q, k and v only.
#pragma once

#include <memory>
#include <string>

#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"

namespace ladder::nn {

// What generation carries: the state of every batch row and head, nothing that grows.
struct DeltaState : AttentionState {
  Tensor memory;  // (B,H,D,D): S, row m what key direction m maps to
  int64_t positions = 0;
  int64_t length() const override { return positions; }
  std::unique_ptr<AttentionState> clone() const override { return std::make_unique<DeltaState>(*this); }
};

class DeltaAttention : public AttentionKind {
 public:
  static constexpr const char* kName = "delta";
  static constexpr int64_t kDefaultChunk = 64;
  struct Settings {
    int64_t chunk = kDefaultChunk;  // positions per chunk of the training form
  };
  // settings.heads and settings.head_dim size beta's projection.
  explicit DeltaAttention(const AttentionSettings& settings);
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;
  // The output is linear in the values: the matrix is the naive twin's output for v = the identity.
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

  Tensor beta_weight, beta_bias;  // (H,D) and (H): beta_t = sigmoid(w_h . k_t + b_h)

 protected:
  DeltaAttention(const char* module_name, const AttentionSettings& settings, int64_t chunk);
  // log alpha_t (B,H,T), the decay of the state before position t writes, from the raw keys;
  // undefined: no decay (the delta rule itself).
  virtual Tensor log_decay(const Tensor& raw_keys) const;
  std::string describe() const override;
  int64_t heads() const { return beta_bias.size(0); }

 private:
  // What the rule reads: unit queries and keys, beta (B,H,T) and log alpha (B,H,T or undefined),
  // padding keys writing nothing (beta 0, no decay).
  struct Prepared {
    Tensor q, k, beta, log_alpha;
  };
  Prepared prepared(const Tensor& q, const Tensor& k, const Tensor& key_padding_mask) const;
  void check(const Tensor& q, const Tensor& k, const AttendMasks& masks) const;
  int64_t chunk_;
};

// (B,H,T): w_h . x_t + b_h for every position of every head of x (B,H,T,D), w (H,D), b (H).
Tensor per_head_projection(const Tensor& x, const Tensor& weight, const Tensor& bias);

KindDescription delta_attention_kind();  // its line in the registry
AttentionSettings delta_attention_settings(int64_t chunk = DeltaAttention::kDefaultChunk);

}  // namespace ladder::nn
