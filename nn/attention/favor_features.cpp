#include "nn/attention/favor_features.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "nn/attention/layer_seed.h"

namespace ladder::nn {

int64_t favor_feature_count(int64_t head_dim) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(head_dim) * std::log(static_cast<double>(head_dim))));
}

Tensor orthogonal_gaussian(int64_t rows, int64_t dim, Generator& gen) {
  if (rows < 1 || dim < 1) fail("orthogonal_gaussian", "rows and dim must be >= 1, got ", rows, " and ", dim);
  Tensor w = empty({rows, dim});
  std::vector<std::vector<double>> block;  // the orthonormal directions of the current block
  for (int64_t r = 0; r < rows; ++r) {
    if (r % dim == 0) block.clear();
    std::vector<double> u(static_cast<size_t>(dim));
    for (double& x : u) x = gen.normal();
    for (const std::vector<double>& b : block) {  // Gram-Schmidt: remove the earlier directions
      double along = 0;
      for (int64_t d = 0; d < dim; ++d) along += u[d] * b[d];
      for (int64_t d = 0; d < dim; ++d) u[d] -= along * b[d];
    }
    double norm = 0, length = 0;
    for (const double x : u) norm += x * x;
    for (int64_t d = 0; d < dim; ++d) length += std::pow(gen.normal(), 2.0);
    norm = std::sqrt(norm);
    for (double& x : u) x /= norm;
    block.push_back(u);
    for (int64_t d = 0; d < dim; ++d) w.data()[r * dim + d] = static_cast<float>(u[d] * std::sqrt(length));
  }
  return w;
}

Tensor favor_features(const Tensor& x, const Tensor& projection, bool shift_rows) {
  const int64_t dim = x.size(-1), features = projection.size(0);
  const Tensor scaled = x * static_cast<float>(std::pow(static_cast<double>(dim), -0.25));  // exp(q.k / sqrt(D))
  Tensor exponent = linear(scaled, projection) - sum(scaled * scaled, {-1}, /*keepdim=*/true) * 0.5f;  // (...,M)
  if (shift_rows) exponent = exponent - amax(exponent, {-1}, /*keepdim=*/true).detach();
  return exp(exponent) * static_cast<float>(1.0 / std::sqrt(static_cast<double>(features)));
}

FavorFeatures::FavorFeatures(const FeatureMapDraw& draw) : draw_(draw), redraws_(zeros({1})) {}

int64_t FavorFeatures::features(int64_t head_dim) const {
  return draw_.random_features > 0 ? draw_.random_features : favor_feature_count(head_dim);
}

Tensor FavorFeatures::projection(int64_t head_dim) const {
  const auto redraws = static_cast<int64_t>(redraws_.data()[0]);
  if (projection_redraws_ != redraws || projection_.size(1) != head_dim) {
    // Redraw r's draw number; the offset keeps it clear of small ones (BigBird's query blocks 0, 1, ...).
    Generator gen(layer_seed(draw_.seed, draw_.layer, static_cast<uint64_t>(redraws) * 7919u + 0xFA404ull));
    projection_ = orthogonal_gaussian(features(head_dim), head_dim, gen);
    projection_redraws_ = redraws;
  }
  return projection_;
}

void FavorFeatures::redraw() { redraws_.data()[0] += 1; }

Tensor FavorFeatures::query_features(const Tensor& q) const {
  return favor_features(q, projection(q.size(-1)), /*shift_rows=*/true);
}

Tensor FavorFeatures::key_features(const Tensor& k) const {
  return favor_features(k, projection(k.size(-1)), /*shift_rows=*/false);
}

}  // namespace ladder::nn
