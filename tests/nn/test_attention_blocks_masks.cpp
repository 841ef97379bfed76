// Masked softmax and key masks (nn/attention/masked_softmax.h, core/ops/masked_softmax.cpp): weights by
// hand, the three forms of a mask, weights 0 on masked keys, a query with no visible key giving zeros
// and zero gradients (never NaN), the fused op against its naive twin (also threaded), gradient
// checks and the errors.
#include "helpers.h"
#include "attention_block_checks.h"

#include <cmath>

#include "core/gradcheck.h"
#include "nn/attention/masked_softmax.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::all_finite;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::check_tensor;
using ladder::testing::check_weights_respect;
using ladder::testing::Inputs;
using ladder::testing::leaf;
using ladder::testing::require_threaded;
using ladder::testing::TwoThreads;

namespace {

// The two masked softmaxes agree on values and on the gradient for the same output gradient.
void check_fused_matches_naive(const Tensor& x, const Tensor& visible, Generator& gen) {
  const Tensor a = leaf(x), b = leaf(x);
  const Tensor fused = ladder::masked_softmax(a, visible), naive = masked_softmax_naive(b, visible);
  check_close(fused, naive, 1e-6f, 1e-5f);
  const Tensor g = randn(x.shape(), gen);
  fused.backward(g);
  naive.backward(g);
  check_close(a.grad(), b.grad(), 1e-6f, 1e-5f);
}

}  // namespace

TEST_CASE("masked_softmax: weights by hand, exactly 0 on masked keys") {
  const Tensor x = tensor({1, 2, 3, 1, 2, 3}, {1, 2, 3});
  const Tensor y = ladder::masked_softmax(x, tensor({1, 1, 0, 1, 1, 1}, {1, 2, 3}));
  // softmax([1, 2]) = [1, e] / (1 + e); softmax([1, 2, 3]) = [1, e, e^2] / (1 + e + e^2)
  check_tensor(y, {1, 2, 3}, {0.268941f, 0.731059f, 0, 0.090031f, 0.244728f, 0.665241f});
  CHECK(y.data()[2] == 0.0f);
  // A key padding mask broadcast over the queries: (1,1,3) serves both rows.
  check_tensor(ladder::masked_softmax(x, tensor({0, 1, 1}, {1, 1, 3})), {1, 2, 3},
               {0, 0.268941f, 0.731059f, 0, 0.268941f, 0.731059f});
}

TEST_CASE("KeyMask: valid lengths per row or per query and a key padding mask give the visible keys") {
  const Shape scores = {2, 2, 4};  // (B,Q,S)
  check_tensor(KeyMask{.valid_lengths = tensor({2, 3})}.visible(scores), {2, 1, 4}, {1, 1, 0, 0, 1, 1, 1, 0});
  check_tensor(KeyMask{.valid_lengths = tensor({1, 4, 0, 2}, {2, 2})}.visible(scores), {2, 2, 4},
               {1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0});
  check_tensor(KeyMask{.key_padding = tensor({0, 1, 1, 0, 1, 1, 1, 1}, {2, 4})}.visible(scores), {2, 1, 4},
               {0, 1, 1, 0, 1, 1, 1, 1});
  CHECK(!KeyMask{}.visible(scores).defined());
  // With heads between B and Q (multi-head attention, (B,H,Q,S)), the same masks broadcast over the heads.
  const Shape heads = {2, 3, 2, 4};
  CHECK(KeyMask{.valid_lengths = tensor({2, 3})}.visible(heads).shape() == Shape{2, 1, 1, 4});
  CHECK(KeyMask{.valid_lengths = tensor({1, 4, 0, 2}, {2, 2})}.visible(heads).shape() == Shape{2, 1, 2, 4});
  CHECK(KeyMask{.key_padding = ones({2, 4})}.visible(heads).shape() == Shape{2, 1, 1, 4});

  // The three forms of one mask give the same weights.
  Generator gen(1);
  const Tensor x = randn(scores, gen);
  const Tensor by_lengths = masked_softmax(x, {.valid_lengths = tensor({2, 3})});
  CHECK(by_lengths.to_vector() == masked_softmax(x, {.valid_lengths = tensor({2, 2, 3, 3}, {2, 2})}).to_vector());
  CHECK(by_lengths.to_vector() ==
        masked_softmax(x, {.key_padding = tensor({1, 1, 0, 0, 1, 1, 1, 0}, {2, 4})}).to_vector());
  // No mask: the plain softmax.
  CHECK(masked_softmax(x, KeyMask{}).to_vector() == softmax(x, -1).to_vector());
}

TEST_CASE("masked_softmax: weights sum to 1 over the visible keys and are 0 on the masked ones") {
  Generator gen(2);
  const Tensor x = randn({3, 4, 6}, gen) * 3.0f;
  const Tensor lengths = randint(0, 7, {3, 4}, gen);  // some 0: queries with no visible key
  const KeyMask mask{.valid_lengths = lengths};
  const Tensor visible = expand(mask.visible(x.shape()), x.shape());
  check_weights_respect(masked_softmax(x, mask), visible);
  const Tensor padding = randint(0, 2, {3, 6}, gen);
  check_weights_respect(masked_softmax(x, {.key_padding = padding}),
                        expand(KeyMask{.key_padding = padding}.visible(x.shape()), x.shape()));
}

TEST_CASE("masked_softmax: a query with no visible key gives zeros and no gradient, never NaN") {
  // Scores scaled by 100 (large logits) and rows whose keys are all masked.
  Generator gen(3);
  const Tensor x = leaf(randn({2, 3, 5}, gen) * 100.0f);
  const Tensor lengths = tensor({0, 5, 2, 3, 0, 1}, {2, 3});
  const Tensor y = masked_softmax(x, {.valid_lengths = lengths});
  CHECK(all_finite(y));
  const Tensor g = randn(y.shape(), gen);
  y.backward(g);
  REQUIRE(x.grad().defined());
  CHECK(all_finite(x.grad()));
  for (int64_t row : {0, 4})  // (b=0, q=0) and (b=1, q=1) have length 0
    for (int64_t j = 0; j < 5; ++j) {
      CHECK(y.data()[row * 5 + j] == 0.0f);
      CHECK(x.grad().data()[row * 5 + j] == 0.0f);
    }
  // The naive twin keeps the same promise.
  const Tensor z = leaf(x);
  const Tensor naive = masked_softmax_naive(z, KeyMask{.valid_lengths = lengths}.visible(x.shape()));
  naive.backward(g);
  CHECK(all_finite(naive));
  CHECK(all_finite(z.grad()));
  check_close(naive, y, 1e-6f);
}

TEST_CASE("masked_softmax: what masked scores and their gradients hold never leaks out") {
  Generator gen(4);
  const Tensor x = randn({2, 2, 4}, gen);
  const Tensor visible = tensor({1, 1, 0, 0, 1, 0, 1, 0}, {2, 1, 4});
  // inf, -inf and NaN where the keys are masked: the weights are the same, bit for bit.
  Tensor poisoned = x.clone();
  for (int64_t i = 0; i < 16; ++i)
    if (visible.data()[(i / 8) * 4 + i % 4] == 0)
      poisoned.data()[i] = i % 3 == 0 ? NAN : (i % 3 == 1 ? INFINITY : -INFINITY);
  const Tensor a = leaf(x), b = leaf(poisoned);
  const Tensor ya = ladder::masked_softmax(a, visible), yb = ladder::masked_softmax(b, visible);
  CHECK(ya.to_vector() == yb.to_vector());
  // An upstream gradient that is NaN on masked keys is selected away, not multiplied by 0.
  Tensor g = randn(x.shape(), gen);
  for (int64_t i = 0; i < 16; ++i)
    if (visible.data()[(i / 8) * 4 + i % 4] == 0) g.data()[i] = NAN;
  ya.backward(g);
  yb.backward(g);
  CHECK(all_finite(a.grad()));
  CHECK(a.grad().to_vector() == b.grad().to_vector());
  for (int64_t i = 0; i < 16; ++i)
    if (visible.data()[(i / 8) * 4 + i % 4] == 0) CHECK(a.grad().data()[i] == 0.0f);
}

TEST_CASE("masked_softmax: the fused op equals its naive twin, values and gradients, on one and two threads") {
  Generator gen(5);
  // Key padding broadcast over queries, masks per query with empty rows, masks broadcast over heads.
  check_fused_matches_naive(randn({2, 3, 5}, gen), randint(0, 2, {2, 1, 5}, gen), gen);
  check_fused_matches_naive(randn({2, 3, 5}, gen) * 100.0f, randint(0, 2, {2, 3, 5}, gen), gen);
  check_fused_matches_naive(randn({2, 2, 3, 4}, gen), randint(0, 2, {2, 1, 3, 4}, gen), gen);
  check_fused_matches_naive(randn({7}, gen), tensor({0, 1, 1, 0, 1, 1, 1}), gen);
  TwoThreads two;
  const int64_t batch = 3, queries = 43, keys = 263;  // odd sizes: the threads' split falls inside a batch row
  require_threaded(batch * queries, keys);
  check_fused_matches_naive(randn({batch, queries, keys}, gen) * 10.0f,
                            KeyMask{.valid_lengths = randint(0, keys + 1, {batch}, gen)}.visible({batch, queries, keys}),
                            gen);
  check_fused_matches_naive(randn({batch, queries, keys}, gen), randint(0, 2, {batch, queries, keys}, gen), gen);
}

TEST_CASE("masked_softmax through each KeyMask passes the gradient check") {
  Generator gen(6);
  const Tensor x = leaf(randn({2, 3, 4}, gen));
  for (const KeyMask& mask : {KeyMask{.valid_lengths = tensor({3, 1})}, KeyMask{.valid_lengths = tensor({0, 2, 4, 1, 3, 2}, {2, 3})},
                              KeyMask{.key_padding = tensor({1, 0, 1, 1, 0, 1, 1, 0}, {2, 4})}}) {
    const GradcheckResult r = gradcheck([&](Inputs v) { return masked_softmax(v[0], mask); }, {x});
    CHECK_MESSAGE(r.ok, r.worst);
  }
}

TEST_CASE("masked_softmax and KeyMask refuse bad masks, saying why") {
  const Tensor x = zeros({2, 3, 4});
  check_error([&] { ladder::masked_softmax(x, ones({2, 3})); }, {"masked_softmax", "(2,3)", "must end in the keys dim", "(B,1,S)"});
  check_error([&] { ladder::masked_softmax(x, ones({3, 3, 4})); }, {"masked_softmax", "(3,3,4)", "do not broadcast"});
  check_error([&] { ladder::masked_softmax(zeros({1, 3, 4}), ones({2, 1, 4})); },
              {"masked_softmax", "(2,1,4)", "without growing x"});
  check_error([&] { ladder::masked_softmax(x, full({2, 1, 4}, 2)); }, {"masked_softmax", "holds 2", "1 (visible key) or 0"});
  check_error([&] { ladder::masked_softmax(scalar(1), ones({1})); }, {"masked_softmax", "scalar"});
  check_error([&] { masked_softmax(x, {.valid_lengths = tensor({1, 5})}); }, {"KeyMask", "holds 5", "from 0 to 4"});
  check_error([&] { masked_softmax(x, {.valid_lengths = tensor({1, 1.5f})}); }, {"KeyMask", "holds 1.5", "whole numbers"});
  check_error([&] { masked_softmax(x, {.valid_lengths = tensor({1, 2, 3})}); }, {"KeyMask", "(3)", "must be (B) = (2)"});
  check_error([&] { masked_softmax(x, {.valid_lengths = ones({2, 4})}); }, {"KeyMask", "(2,4)", "(B,Q) = (2,3)"});
  check_error([&] { masked_softmax(x, {.key_padding = ones({2, 3})}); }, {"KeyMask", "key_padding (2,3)", "(B,S) = (2,4)"});
  check_error([&] { masked_softmax(x, {.valid_lengths = ones({2}), .key_padding = ones({2, 4})}); }, {"KeyMask", "not both"});
  check_error([&] { masked_softmax(ones({4}), {.key_padding = ones({1, 4})}); }, {"KeyMask", "(4)", "(B, ..., Q, S)"});
}
