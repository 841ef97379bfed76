#include "nn/attention/favor_features.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/ops.h"

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

}  // namespace ladder::nn
