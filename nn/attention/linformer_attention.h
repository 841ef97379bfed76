// Linformer as an attention kind (Wang et al. 2020, "Linformer: Self-Attention with Linear
// Complexity"): keys and values are projected along the sequence to k rows by learned (k, n)
// matrices E and F, so that every query attends to k mixtures of positions instead of to each
// position: softmax(q (E K)^T / sqrt(D)) (F V), time and memory T*k*D instead of T*S*D. n is the
// longest sequence the layer will see (AttentionSettings::max_length, which the model fills in); a
// shorter sequence uses the first S columns of E and F, and padding keys and values are zeroed
// before the projection, so that padding changes nothing. One E and one F per layer, shared by its
// heads (the paper's headwise sharing).
//
// Bidirectional only: E K mixes every position of the sequence, so a causal query would see the keys
// after it; causal calls and generation are refused.
#pragma once

#include <memory>

#include "core/ops.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"

namespace ladder::nn {

class LinformerAttention : public AttentionKind {
 public:
  static constexpr const char* kName = "linformer";
  struct Settings {
    int64_t k = 32;  // the rows E and F project to
  };
  // Needs settings.max_length (n); E and F start as N(0, 1/k), drawn from gen.
  explicit LinformerAttention(const AttentionSettings& settings, Generator& gen = default_generator());
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;  // refused: generation is causal
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;  // refused
  // softmax(q (E K)^T / sqrt(D)) F: the (B,H,T,S) matrix attend() multiplies v by.
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

  Tensor E, F;  // (k, n) parameters: the projections of the keys and of the values

 protected:
  std::string describe() const override;

 private:
  // The weights over the k projected keys, (B,H,T,k), and F cut to the S keys with padding zeroed.
  std::pair<Tensor, Tensor> weights_and_values_projection(const Tensor& q, const Tensor& k, const AttendMasks& masks);
  float dropout_;
  Generator gen_;  // draws the dropout masks
};

KindDescription linformer_attention_kind();  // its line in the registry

}  // namespace ladder::nn
