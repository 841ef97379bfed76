#include "nn/attention/rotary.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

namespace {

// cos and sin of the angle (offset + t) * theta_i for every row t and feature -> two (T, D) tables;
// features i and i + D/2 share theta_i. Angles in double: positions reach thousands.
std::pair<Tensor, Tensor> rotation_tables(int64_t T, int64_t D, int64_t offset, float base) {
  std::vector<float> c(static_cast<size_t>(T * D)), s(c.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < D / 2; ++i) {
      const double angle = static_cast<double>(offset + t) * std::pow(static_cast<double>(base), -2.0 * i / D);
      for (int64_t f : {i, i + D / 2}) {
        c[t * D + f] = static_cast<float>(std::cos(angle));
        s[t * D + f] = static_cast<float>(std::sin(angle));
      }
    }
  return {tensor(c, {T, D}), tensor(s, {T, D})};
}

}  // namespace

Tensor rotary_embedding(const Tensor& x, int64_t offset, float base) {
  if (x.dim() < 2 || x.size(-1) % 2 != 0)
    fail("rotary_embedding", "expects (..., T, D) with D even (features are turned in pairs), got ",
         shape_str(x.shape()));
  if (offset < 0) fail("rotary_embedding", "the position offset must be >= 0, got ", offset);
  if (!(base > 1)) fail("rotary_embedding", "base must be > 1, got ", base);
  const int64_t T = x.size(-2), D = x.size(-1);
  const auto [cos_table, sin_table] = rotation_tables(T, D, offset, base);
  const Tensor first = narrow(x, -1, 0, D / 2), second = narrow(x, -1, D / 2, D / 2);
  // (x1, x2) turned by the angle a: (x1 cos a - x2 sin a, x2 cos a + x1 sin a)
  const Tensor turned = concat({-second, first}, -1);
  return x * cos_table + turned * sin_table;
}

}  // namespace ladder::nn
