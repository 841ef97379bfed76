#include "nn/attention/feature_map.h"

#include "core/error.h"
#include "core/ops.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/favor_features.h"
#include "nn/attention/taylor_features.h"

namespace ladder::nn {

namespace {

using MakeMap = std::unique_ptr<FeatureMap> (*)(const FeatureMapDraw&);

template <class Map>
std::unique_ptr<FeatureMap> make_plain(const FeatureMapDraw&) {  // a map that draws nothing
  return std::make_unique<Map>();
}

std::unique_ptr<FeatureMap> make_favor(const FeatureMapDraw& draw) { return std::make_unique<FavorFeatures>(draw); }

// The registry of maps: a name and how to build it, one line per map.
const std::vector<std::pair<std::string, MakeMap>>& registered_maps() {
  static const std::vector<std::pair<std::string, MakeMap>> maps = {{EluFeatures::kName, make_plain<EluFeatures>},
                                                                    {CosFeatures::kName, make_plain<CosFeatures>},
                                                                    {DoubleSoftmaxFeatures::kName, make_plain<DoubleSoftmaxFeatures>},
                                                                    {FavorFeatures::kName, make_favor},
                                                                    {TaylorFeatures::kName, make_plain<TaylorFeatures>}};
  return maps;
}

}  // namespace

// The one elu + 1 of nn; core's fused kernel applies its own inside the chunked product.
Tensor EluFeatures::query_features(const Tensor& q) const { return elu(q) + 1.0f; }

Tensor CosFeatures::query_features(const Tensor& q) const {
  const Tensor unit = q / sqrt(sum(q * q, {-1}, /*keepdim=*/true) + 1e-12f);
  Shape one = q.shape();
  one.back() = 1;
  return concat({ones(one), unit}, -1);  // [1; q/|q|]
}

Tensor DoubleSoftmaxFeatures::query_features(const Tensor& q) const { return softmax(q, -1); }

Tensor DoubleSoftmaxFeatures::key_features(const Tensor&) const {
  fail("DoubleSoftmaxFeatures::key_features", "double softmax normalises keys over the positions, not one key at a "
       "time; use implied_weights or attend");
}

std::vector<std::string> feature_map_names() {
  std::vector<std::string> names;
  for (const auto& [name, make_map] : registered_maps()) names.push_back(name);
  return names;
}

std::unique_ptr<FeatureMap> make_feature_map(const std::string& name, const FeatureMapDraw& draw) {
  for (const auto& [registered, make_map] : registered_maps())
    if (registered == name) return make_map(draw);
  fail("make_feature_map", "unknown feature map '", name, "'; the feature maps are ", joined_names(feature_map_names()));
}

}  // namespace ladder::nn
