// Linear attention as an attention kind (Katharopoulos et al. 2020, "Transformers are RNNs"):
// softmax(q . k) is replaced by phi(q) . phi(k) for a feature map phi, so that the sum over keys can
// be taken once, sum_j phi(k_j) v_j^T, and shared by every query: time T*M*D instead of T*S*D.
// Causal, the same sum grows position by position, which makes the layer an RNN whose state is
// that (M,D) sum: generation costs the same per token whatever the context.
//
// Feature maps (M features from D):
//   elu      phi(x) = elu(x) + 1                              M = D
//   cos      phi(x) = [1; x / |x|], phi(q) . phi(k) = 1 + cos   M = D + 1
//   softmax  double softmax (Shen et al.): phi(q) = softmax of q over its features, phi(k) = softmax
//            of k over the positions (over the positions so far, when causal); every row of the
//            implied matrix then sums to 1 without a normaliser.
//   favor    FAVOR+ (Performer): exp(W x - |x|^2/2) / sqrt(M), W (M,D) orthogonal random rows, so
//            that phi(q) . phi(k) estimates softmax's exp(q.k / sqrt(D))   M = D ln D (a setting)
//            (nn/attention/favor_features.h). W is drawn from (seed, layer, redraws): the
//            checkpoint keeps the number of redraws as a buffer, and redraw_features() draws anew.
#pragma once

#include <string>
#include <vector>

#include "nn/attention/attention_kind.h"

namespace ladder::nn {

std::vector<std::string> feature_map_names();

// The sums of the positions fed so far, per batch row and head: all generation needs.
struct LinearState : AttentionState {
  Tensor sums;        // (B,H,M,D): sum_j phi(k_j) v_j^T
  Tensor normaliser;  // elu, cos: (B,H,1,M) sum_j phi(k_j); softmax: the same of exp(k_j - shift)
  Tensor shift;       // softmax only: (B,H,1,M), the largest key feature so far (keeps exp finite)
  int64_t positions = 0;
  int64_t length() const override { return positions; }
  std::unique_ptr<AttentionState> clone() const override { return std::make_unique<LinearState>(*this); }
};

class LinearAttention : public AttentionKind {
 public:
  explicit LinearAttention(const AttentionSettings& settings);
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

  // phi applied to queries or to keys (elu and cos: the same map; softmax: over features for
  // queries, the keys' exp(k - shift) unnormalised, see double_softmax_parts).
  Tensor query_features(const Tensor& q) const;
  Tensor key_features(const Tensor& k) const;

  // favor: the (M,D) random projection used for heads of width D, and a fresh draw of it (Performer
  // redraws during training so that no single draw's errors are learned around).
  Tensor projection(int64_t head_dim) const;
  void redraw_features();

 protected:
  std::string describe() const override;

 private:
  // Double softmax as one causal or non-causal product without a normaliser: returns
  // (q', k') with q'_im = softmax(q_i)_m / Z_im and k'_jm = exp(k_jm - shift_m) (0 for padding),
  // Z_im the sum of k'_jm over the keys query i sees.
  std::pair<Tensor, Tensor> double_softmax_parts(const Tensor& q, const Tensor& k, const AttendMasks& masks) const;
  void check_masks(const Tensor& q, const Tensor& k, const AttendMasks& masks) const;
  std::string feature_map_;
  int64_t chunk_;
  int64_t random_features_;
  uint64_t seed_;
  int64_t layer_;
  Tensor redraws_;  // favor: (1) buffer, the draws so far after the first
  mutable Tensor projection_;  // favor: the draw for (head width, redraws), made on first use
  mutable int64_t projection_redraws_ = -1;
};

}  // namespace ladder::nn
