// Nadaraya-Watson kernel regression (nn/attention/nadaraya_watson.h): the Gaussian kernel by hand,
// gradient checks, learning its bandwidth, and the errors.
#include "helpers.h"
#include "attention_block_checks.h"

#include "core/autograd.h"
#include "core/gradcheck.h"
#include "nn/attention/nadaraya_watson.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_error;
using ladder::testing::check_tensor;
using ladder::testing::Inputs;
using ladder::testing::leaf;

TEST_CASE("Nadaraya-Watson: the Gaussian kernel by hand, and what w does") {
  const Tensor x_q = tensor({0}), x_k = tensor({0, 1}), y_k = tensor({1, 3});
  // w = 1: softmax([0, -1/2]); w = 2: softmax([0, -2])
  const AttentionOutput standard = nadaraya_watson(x_q, x_k, y_k);
  check_tensor(standard.weights, {1, 2}, {0.622459f, 0.377541f});
  check_tensor(standard.context, {1}, {0.622459f + 3 * 0.377541f});
  check_tensor(nadaraya_watson(x_q, x_k, y_k, 2).context, {1}, {0.880797f + 3 * 0.119203f});
  // w = 0: every key weighs the same, the plain average (average pooling); a large w: the nearest key.
  check_tensor(nadaraya_watson(x_q, x_k, y_k, 0).context, {1}, {2});
  check_tensor(nadaraya_watson(x_q, x_k, y_k, 50).context, {1}, {1});
  // The learned form with w = 1 is the non-parametric one: one formula.
  NadarayaWatson learned;
  CHECK(learned.named_parameters().front().name == "w");
  CHECK(learned.w.item() >= 0);
  CHECK(learned.w.item() < 1);
  {
    NoGradGuard no_grad;
    learned.w.fill_(1);
  }
  CHECK(learned.forward(x_q, x_k, y_k).context.to_vector() == standard.context.to_vector());
  // Keys per query (Q,S): each query its own keys and values.
  const AttentionOutput own = nadaraya_watson(tensor({0, 1}), tensor({0, 1, 1, 0}, {2, 2}), tensor({1, 3, 1, 3}, {2, 2}));
  check_tensor(own.context, {2}, {0.622459f + 3 * 0.377541f, 0.622459f + 3 * 0.377541f});
}

TEST_CASE("Nadaraya-Watson passes the gradient check, for queries, keys, values and w") {
  Generator gen(14);
  const Tensor x_q = leaf(uniform({3}, 0, 5, gen)), x_k = leaf(uniform({4}, 0, 5, gen)), y_k = leaf(randn({4}, gen));
  const Tensor w = leaf(tensor({0.8f}));
  const GradcheckResult shared = gradcheck([](Inputs x) { return nadaraya_watson(x[0], x[1], x[2], x[3]).context; },
                                           {x_q, x_k, y_k, w});
  CHECK_MESSAGE(shared.ok, shared.worst);
  const Tensor own_keys = leaf(uniform({3, 4}, 0, 5, gen)), own_values = leaf(randn({3, 4}, gen));
  const GradcheckResult own = gradcheck([](Inputs x) { return nadaraya_watson(x[0], x[1], x[2], x[3]).context; },
                                        {x_q, own_keys, own_values, w});
  CHECK_MESSAGE(own.ok, own.worst);
}

TEST_CASE("parametric Nadaraya-Watson learns its bandwidth by gradient descent") {
  // Targets from a step function: a narrow kernel (a large w) fits them far better than w near 0.
  Generator gen(15);
  const Tensor x = arange(0, 5, 0.25f);
  Tensor y = empty(x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.data()[i] = x.data()[i] < 2.5f ? 0.0f : 1.0f;
  NadarayaWatson model(gen);
  const float w_before = model.w.item();
  auto loss = [&] { return mse_loss(model.forward(x, x, y).context, y); };
  const float loss_before = loss().item();
  for (int step = 0; step < 30; ++step) {
    model.zero_grad();
    loss().backward();
    NoGradGuard no_grad;
    model.w.copy_(model.w - model.w.grad() * 20.0f);
  }
  CHECK(model.w.item() > w_before);
  CHECK(loss().item() < 0.5f * loss_before);
}

TEST_CASE("Nadaraya-Watson refuses shapes that do not fit") {
  check_error([] { nadaraya_watson(zeros({2, 1}), zeros({3}), zeros({3})); }, {"nadaraya_watson", "queries (2,1)", "(Q)"});
  check_error([] { nadaraya_watson(zeros({2}), zeros({3, 3}), zeros({3, 3})); }, {"nadaraya_watson", "keys (3,3)", "(Q,S)"});
  check_error([] { nadaraya_watson(zeros({2}), zeros({3}), zeros({4})); }, {"nadaraya_watson", "values (4)", "one target per key"});
  check_error([] { nadaraya_watson(zeros({2}), zeros({3}), zeros({3}), zeros({2})); }, {"nadaraya_watson", "w must hold one number"});
}
