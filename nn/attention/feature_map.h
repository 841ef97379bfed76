// The feature maps of linear attention (nn/attention/linear_attention.h): phi such that phi(q) . phi(k)
// stands in for softmax's exp(q . k). Each map is one object behind one interface; linear attention's
// `feature_map` setting names one of feature_map_names(), and make_feature_map builds it for a layer.
//
//   elu      phi(x) = elu(x) + 1                                   M = D
//   cos      phi(x) = [1; x / |x|], so phi(q) . phi(k) = 1 + cos    M = D + 1
//   softmax  double softmax (Shen et al.): a query through softmax over its features, the keys through
//            exp and normalised over the positions the query sees (linear attention's own path)   M = D
//   favor    FAVOR+ (Performer): positive random features estimating exp(q.k / sqrt(D))
//            (nn/attention/favor_features.h)                       M = D ln D, or a setting
//   taylor   Based's 2nd-order Taylor expansion of exp: [1; x'; x' x'^T / sqrt(2)], x' = x / D^(1/4)
//            (nn/attention/taylor_features.h)                      M = 1 + D + D^2
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ladder::nn {

// What a map may draw from: FAVOR+ draws its projection from (seed, layer), `random_features` rows.
struct FeatureMapDraw {
  uint64_t seed = 0;
  int64_t layer = 0;
  int64_t random_features = 0;  // favor: M (0: D ln D for heads of width D)
};

class FeatureMap {
 public:
  virtual ~FeatureMap() = default;
  virtual const char* name() const = 0;   // the value of linear attention's feature_map setting: "elu"
  virtual const char* label() const = 0;  // for tables and legends: "elu+1"
  virtual int64_t features(int64_t head_dim) const = 0;  // M, for heads of width D
  // q or k (..., D) -> phi (..., M), with phi(q) . phi(k) >= 0 (1 + cos: some features are negative).
  virtual Tensor query_features(const Tensor& q) const = 0;
  virtual Tensor key_features(const Tensor& k) const { return query_features(k); }
  // elu + 1 only: core's linear_attention applies it itself (inside the chunked product when causal),
  // so the layer hands it the raw q and k.
  virtual bool fused_elu() const { return false; }
  // double softmax only: its keys are normalised over the positions, not one at a time, so the layer
  // takes a path of its own.
  virtual bool keys_over_positions() const { return false; }
  // State the layer registers as buffers, so that a checkpoint keeps it (favor: its redraws so far).
  virtual std::vector<std::pair<std::string, Tensor>> buffers() const { return {}; }
};

class EluFeatures : public FeatureMap {
 public:
  static constexpr const char* kName = "elu";
  const char* name() const override { return kName; }
  const char* label() const override { return "elu+1"; }
  int64_t features(int64_t head_dim) const override { return head_dim; }
  Tensor query_features(const Tensor& q) const override;
  bool fused_elu() const override { return true; }
};

class CosFeatures : public FeatureMap {
 public:
  static constexpr const char* kName = "cos";
  const char* name() const override { return kName; }
  const char* label() const override { return "1+cos"; }
  int64_t features(int64_t head_dim) const override { return head_dim + 1; }
  Tensor query_features(const Tensor& q) const override;
};

class DoubleSoftmaxFeatures : public FeatureMap {
 public:
  static constexpr const char* kName = "softmax";
  const char* name() const override { return kName; }
  const char* label() const override { return "double softmax"; }
  int64_t features(int64_t head_dim) const override { return head_dim; }
  Tensor query_features(const Tensor& q) const override;  // softmax over the features
  Tensor key_features(const Tensor& k) const override;    // fails: keys need the other positions
  bool keys_over_positions() const override { return true; }
};

// The names of every map, in the registry's order (feature_map.cpp).
std::vector<std::string> feature_map_names();
// The map `name` names, for one layer; an unknown name fails listing the names there are.
std::unique_ptr<FeatureMap> make_feature_map(const std::string& name, const FeatureMapDraw& draw = {});

}  // namespace ladder::nn
