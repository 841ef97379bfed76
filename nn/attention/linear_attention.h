// Linear attention as an attention kind (Katharopoulos et al. 2020, "Transformers are RNNs"):
// softmax(q . k) is replaced by phi(q) . phi(k) for a feature map phi, so that the sum over keys can
// be taken once, sum_j phi(k_j) v_j^T, and shared by every query: time T*M*D instead of T*S*D.
// Causal, the same sum grows position by position, which makes the layer an RNN whose state is
// that (M,D) sum: generation costs the same per token whatever the context.
//
// The feature map is an object (nn/attention/feature_map.h): elu+1, 1+cos, double softmax or FAVOR+,
// named by the `feature_map` setting.
#pragma once

#include <string>
#include <vector>

#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/feature_map.h"

namespace ladder::nn {

// The sums of the positions fed so far, per batch row and head: all generation needs.
struct LinearState : AttentionState {
  Tensor sums;        // (B,H,M,D): sum_j phi(k_j) v_j^T
  Tensor normaliser;  // (B,H,1,M) sum_j phi(k_j); double softmax: the same of exp(k_j - shift)
  Tensor shift;       // double softmax only: (B,H,1,M), the largest key feature so far (keeps exp finite)
  int64_t positions = 0;
  int64_t length() const override { return positions; }
  std::unique_ptr<AttentionState> clone() const override { return std::make_unique<LinearState>(*this); }
};

class LinearAttention : public AttentionKind {
 public:
  static constexpr const char* kName = "linear";
  static constexpr int64_t kDefaultChunk = 64;
  struct Settings {
    std::string feature_map = EluFeatures::kName;  // one of feature_map_names()
    int64_t chunk = kDefaultChunk;  // causal: positions per chunk of the fused product
    int64_t random_features = 0;    // favor: M, 0 for D ln D
  };
  // settings.seed and settings.layer draw FAVOR+'s projection.
  explicit LinearAttention(const AttentionSettings& settings);
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

  const FeatureMap& feature_map() const { return *map_; }
  // favor only: a fresh draw of its random projection (FavorFeatures::redraw).
  void redraw_features();

 protected:
  std::string describe() const override;

 private:
  // Double softmax as one causal or non-causal product without a normaliser: returns
  // (q', k') with q'_im = softmax(q_i)_m / Z_im and k'_jm = exp(k_jm - shift_m) (0 for padding),
  // Z_im the sum of k'_jm over the keys query i sees.
  std::pair<Tensor, Tensor> double_softmax_parts(const Tensor& q, const Tensor& k, const AttendMasks& masks) const;
  void check_masks(const Tensor& q, const Tensor& k, const AttendMasks& masks) const;
  Settings own_;
  std::unique_ptr<FeatureMap> map_;
};

KindDescription linear_attention_kind();  // its line in the registry
// The settings of linear attention with this feature map and chunk.
AttentionSettings linear_attention_settings(const std::string& feature_map, int64_t chunk = LinearAttention::kDefaultChunk);

}  // namespace ladder::nn
