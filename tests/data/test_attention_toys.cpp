// The toy data of the attention-pooling lesson: the noisy 1-D regression (data/regression_toy.h)
// and keys with queries that are noisy copies of some of them (data/copied_keys.h).
#include "helpers.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "data/copied_keys.h"
#include "data/regression_toy.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_close;
using ladder::testing::check_error;

TEST_CASE("regression_toy: sorted inputs in [0, 5), the test grid, and targets 2 sin(x) + x^0.8 plus noise") {
  Generator gen(1);
  const RegressionToy toy = regression_toy(200, 0.5f, gen);
  REQUIRE(toy.x_train.shape() == Shape{200});
  REQUIRE(toy.y_train.shape() == Shape{200});
  const std::vector<float> x = toy.x_train.to_vector();
  CHECK(std::is_sorted(x.begin(), x.end()));
  CHECK(x.front() >= 0);
  CHECK(x.back() < 5);
  // The test inputs: 0, 0.1, ..., 4.9, and the noise-free targets there.
  REQUIRE(toy.x_test.shape() == Shape{50});
  CHECK(toy.x_test.data()[0] == 0.0f);
  CHECK(toy.x_test.data()[49] == doctest::Approx(4.9));
  for (int64_t i = 0; i < 50; ++i) {
    const double xi = toy.x_test.data()[i];
    CHECK(toy.y_truth.data()[i] == doctest::Approx(2 * std::sin(xi) + std::pow(xi, 0.8)).epsilon(1e-5));
  }
  // The noise: the residuals about the truth have a mean near 0 and a standard deviation near 0.5.
  const Tensor residual = toy.y_train - regression_truth(toy.x_train);
  CHECK(std::fabs(mean(residual).item()) < 0.15f);
  CHECK(std::sqrt(var(residual).item()) == doctest::Approx(0.5).epsilon(0.15));
}

TEST_CASE("regression_toy: no noise gives the truth, one seed the same points, another seed others") {
  Generator a(2), b(2), c(3);
  const RegressionToy clean = regression_toy(30, 0, a);
  check_close(clean.y_train, regression_truth(clean.x_train), 0);
  const RegressionToy noisy_a = regression_toy(30, 0.5f, b), noisy_b = regression_toy(30, 0.5f, c);
  CHECK(noisy_a.x_train.to_vector() == clean.x_train.to_vector());  // the inputs are drawn before the noise
  CHECK(noisy_a.y_train.to_vector() != clean.y_train.to_vector());
  CHECK(noisy_b.x_train.to_vector() != noisy_a.x_train.to_vector());
}

TEST_CASE("regression_toy refuses no points and a negative noise") {
  Generator gen(4);
  check_error([&] { regression_toy(0, 0.5f, gen); }, {"regression_toy", "at least one point", "0"});
  check_error([&] { regression_toy(10, -1, gen); }, {"regression_toy", "noise >= 0", "-1"});
}

TEST_CASE("copied_keys: each query is its own key plus noise of the given size") {
  Generator gen(5);
  const CopiedKeys toy = copied_keys(10, 6, 8, 0.5f, gen);
  REQUIRE(toy.keys.shape() == Shape{1, 10, 8});
  REQUIRE(toy.queries.shape() == Shape{1, 6, 8});
  REQUIRE(toy.copied.size() == 6);
  CHECK(std::set<int64_t>(toy.copied.begin(), toy.copied.end()).size() == 6);  // distinct keys
  double squares = 0;
  for (int64_t q = 0; q < 6; ++q) {
    const int64_t k = toy.copied[static_cast<size_t>(q)];
    CHECK(k >= 0);
    CHECK(k < 10);
    for (int64_t j = 0; j < 8; ++j) {
      const double gap = toy.queries.data()[q * 8 + j] - toy.keys.data()[k * 8 + j];
      squares += gap * gap;
    }
  }
  CHECK(std::sqrt(squares / 48) == doctest::Approx(0.5).epsilon(0.3));  // 48 draws of N(0, 0.25)
  Generator again(5);
  const CopiedKeys exact = copied_keys(10, 6, 8, 0, again);  // the same draws, no noise: exact copies
  CHECK(exact.copied == toy.copied);
  for (int64_t q = 0; q < 6; ++q)
    for (int64_t j = 0; j < 8; ++j)
      CHECK(exact.queries.data()[q * 8 + j] == exact.keys.data()[exact.copied[static_cast<size_t>(q)] * 8 + j]);
}

TEST_CASE("copied_keys refuses more queries than keys") {
  Generator gen(6);
  check_error([&] { copied_keys(3, 4, 8, 0.5f, gen); }, {"copied_keys", "queries <= keys", "4 queries, 3 keys"});
  check_error([&] { copied_keys(3, 2, 0, 0.5f, gen); }, {"copied_keys", "dim >= 1", "dim 0"});
}
