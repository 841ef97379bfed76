#include "data/regression_toy.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::data {

namespace {
constexpr float kLow = 0, kHigh = 5, kTestSpacing = 0.1f;  // inputs in [0, 5); test inputs every 0.1
}  // namespace

Tensor regression_truth(const Tensor& x) { return 2.0f * sin(x) + pow(x, 0.8f); }

RegressionToy regression_toy(int64_t points, float noise, Generator& gen) {
  if (points < 1 || !(noise >= 0)) fail("regression_toy", "needs at least one point and a noise >= 0, got ", points, " and ", noise);
  std::vector<float> xs(static_cast<size_t>(points));
  for (float& x : xs) x = gen.uniform(kLow, kHigh);
  std::sort(xs.begin(), xs.end());
  RegressionToy toy;
  toy.x_train = tensor(xs);
  toy.y_train = regression_truth(toy.x_train) + noise * randn({points}, gen);
  toy.x_test = arange(kLow, kHigh, kTestSpacing);
  toy.y_truth = regression_truth(toy.x_test);
  return toy;
}

}  // namespace ladder::data
