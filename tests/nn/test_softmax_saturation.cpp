// How saturated a softmax over scores is (nn/attention/softmax_saturation.h): against the formulas
// for equal scores and for one-hot weights, and the errors.
#include "helpers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/attention/softmax_saturation.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_error;

TEST_CASE("softmax_saturation on equal scores: weights 1/S, and J^T g = (g - mean(g)) / S per row") {
  const int64_t rows = 7, S = 4;
  Generator gen(1), same(1);
  const SoftmaxSaturation r = softmax_saturation(full({rows, 1, S}, 2.5f), gen);
  CHECK(r.variance == doctest::Approx(0));
  CHECK(r.largest_weight == doctest::Approx(0.25));
  // The upstream gradient is randn(scores' shape) from the same generator: the lengths by hand.
  const Tensor g = randn({rows, 1, S}, same);
  std::vector<double> lengths;
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0, squares = 0;
    for (int64_t j = 0; j < S; ++j) mean += g.data()[i * S + j] / S;
    for (int64_t j = 0; j < S; ++j) squares += std::pow((g.data()[i * S + j] - mean) / S, 2);
    lengths.push_back(std::sqrt(squares));
  }
  std::sort(lengths.begin(), lengths.end());
  double total = 0;
  for (const double l : lengths) total += l;
  CHECK(r.grad_median == doctest::Approx(lengths[rows / 2]).epsilon(1e-5));
  CHECK(r.grad_mean == doctest::Approx(total / rows).epsilon(1e-5));
}

TEST_CASE("softmax_saturation on far-apart scores: one key takes all the weight and no gradient comes back") {
  Generator gen(2);
  const Tensor scores = tensor({0, 200, -200, 50, 0, 200}, {2, 3});  // gaps of 150 and more: exp underflows to 0
  const SoftmaxSaturation r = softmax_saturation(scores, gen);
  CHECK(r.largest_weight == doctest::Approx(1));
  CHECK(r.grad_median == 0);
  CHECK(r.grad_mean == 0);
  CHECK(r.variance == doctest::Approx(var(scores).item()));
}

TEST_CASE("softmax_saturation refuses a scalar and empty scores") {
  Generator gen(3);
  check_error([&] { softmax_saturation(scalar(1), gen); }, {"softmax_saturation", "()", "(..., S)"});
  check_error([&] { softmax_saturation(zeros({2, 0}), gen); }, {"softmax_saturation", "(2,0)", "at least one score"});
}
