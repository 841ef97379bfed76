// Nadaraya-Watson kernel regression as a trainable model (models/kernel_regression.h): the
// leave-one-out keys, the loss, and its width learned through the shared training step.
#include "helpers.h"

#include "core/autograd.h"
#include "models/kernel_regression.h"
#include "optim/sgd.h"
#include "optim/train_step.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

static_assert(optim::Trainable<KernelRegression, RegressionBatch>);

TEST_CASE("leave_one_out: row i holds every entry but the i-th") {
  check_tensor(leave_one_out(tensor({1, 2, 3})), {3, 2}, {2, 3, 1, 3, 1, 2});
  check_tensor(leave_one_out(tensor({7, 8})), {2, 1}, {8, 7});
  check_error([] { leave_one_out(tensor({1})); }, {"leave_one_out", "N >= 2", "(1)"});
  check_error([] { leave_one_out(ones({2, 2})); }, {"leave_one_out", "(N)", "(2,2)"});
}

TEST_CASE("KernelRegression: its parameter is the kernel's w, and its loss the MSE of its predictions") {
  Generator gen(1);
  KernelRegression model(gen);
  REQUIRE(model.named_parameters().size() == 1);
  CHECK(model.named_parameters().front().name == "w");  // checkpoints hold the one number "w"
  CHECK(model.w.item() >= 0);
  CHECK(model.w.item() < 1);
  const Tensor x = tensor({0, 1, 2, 4}), y = tensor({1, 3, 2, 0});
  const RegressionBatch batch{x, leave_one_out(x), leave_one_out(y), y};
  const Tensor predictions = nn::nadaraya_watson(x, leave_one_out(x), leave_one_out(y), model.w).context;
  CHECK(model.loss(batch).item() == doctest::Approx(mse_loss(predictions, y).item()));
  // Shared keys (S) work too: each point among its own keys.
  const RegressionBatch shared{x, x, y, y};
  CHECK(model.loss(shared).item() == doctest::Approx(mse_loss(model.forward(x, x, y).context, y).item()));
}

TEST_CASE("KernelRegression: a train_step is one SGD step on w, and steps lower the leave-one-out loss") {
  // A step function: a narrow kernel (a large w) predicts each point from its neighbours far better
  // than a nearly flat one.
  Generator gen(2);
  const Tensor x = arange(0, 5, 0.25f);
  Tensor y = empty(x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.data()[i] = x.data()[i] < 2.5f ? 0.0f : 1.0f;
  const RegressionBatch batch{x, leave_one_out(x), leave_one_out(y), y};
  KernelRegression model(gen);
  optim::SGD sgd(model.named_parameters(), {.lr = 5});
  // The first step by hand: w - lr * dloss/dw.
  const float w0 = model.w.item();
  model.zero_grad();
  const Tensor first = model.loss(batch);
  first.backward();
  const float expected = w0 - 5 * model.w.grad().item();
  const optim::StepResult r = optim::train_step(model, sgd, batch, 0);
  CHECK(r.loss == doctest::Approx(first.item()));
  CHECK(model.w.item() == doctest::Approx(expected));
  for (int step = 0; step < 30; ++step) optim::train_step(model, sgd, batch, 0);
  CHECK(model.w.item() > w0);
  NoGradGuard no_grad;
  CHECK(model.loss(batch).item() < 0.5 * r.loss);
}
