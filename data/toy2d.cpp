#include "data/toy2d.h"

#include <cmath>
#include <numbers>

#include "core/error.h"

namespace ladder::data {

Points blobs(int64_t n_per_class, const std::vector<std::pair<float, float>>& centers, float spread, Generator& gen) {
  if (centers.empty() || n_per_class <= 0) fail("blobs", "needs at least one center and one point per class");
  const auto n = n_per_class * static_cast<int64_t>(centers.size());
  Points p{empty({n, 2}), empty({n})};
  for (int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<size_t>(i % static_cast<int64_t>(centers.size()));
    p.x.data()[2 * i] = centers[c].first + spread * gen.normal();
    p.x.data()[2 * i + 1] = centers[c].second + spread * gen.normal();
    p.y.data()[i] = static_cast<float>(c);
  }
  return p;
}

Points separable_blobs(int64_t n_per_class, float spread, float margin, Generator& gen) {
  std::vector<float> xs, ys;
  for (int label = 0; label < 2; ++label) {
    const float sign = label == 0 ? -1.0f : 1.0f;
    for (int64_t kept = 0; kept < n_per_class;) {
      const float a = sign + spread * gen.normal(), b = sign + spread * gen.normal();
      if (sign * (a + b) / std::sqrt(2.0f) < margin) continue;  // too close to the line, or across it
      xs.insert(xs.end(), {a, b});
      ys.push_back(static_cast<float>(label));
      ++kept;
    }
  }
  const auto n = static_cast<int64_t>(ys.size());
  return {tensor(xs, {n, 2}), tensor(ys, {n})};
}

Points xor_points(int64_t n_per_cluster, float spread, Generator& gen) {
  Points p = blobs(n_per_cluster, {{-1, -1}, {1, 1}, {-1, 1}, {1, -1}}, spread, gen);
  for (int64_t i = 0; i < p.y.numel(); ++i) p.y.data()[i] = p.y.data()[i] >= 2 ? 1.0f : 0.0f;  // the last two: one sign differs
  return p;
}

Points spirals(int64_t n_per_class, int classes, float noise, Generator& gen, float turns) {
  if (classes < 2 || n_per_class <= 0) fail("spirals", "needs at least 2 classes and 1 point per class");
  const int64_t n = n_per_class * classes;
  Points p{empty({n, 2}), empty({n})};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % classes, k = i / classes;
    const float r = static_cast<float>(k + 1) / static_cast<float>(n_per_class);  // radius grows along the arm
    const float two_pi = 2.0f * std::numbers::pi_v<float>;
    const float angle = two_pi * (turns * r + static_cast<float>(c) / static_cast<float>(classes)) + noise * gen.normal();
    p.x.data()[2 * i] = r * std::cos(angle);
    p.x.data()[2 * i + 1] = r * std::sin(angle);
    p.y.data()[i] = static_cast<float>(c);
  }
  return p;
}

Points linear_targets(int64_t n, std::pair<float, float> weights, float bias, float noise, Generator& gen) {
  Points p{uniform({n, 2}, -1, 1, gen), empty({n})};
  for (int64_t i = 0; i < n; ++i)
    p.y.data()[i] = weights.first * p.x.data()[2 * i] + weights.second * p.x.data()[2 * i + 1] + bias + noise * gen.normal();
  return p;
}

}  // namespace ladder::data
