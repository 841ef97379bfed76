// optim::train_step, the step every lesson takes: gradients zeroed, the model's loss and the losses
// its layers add backpropagated together, the gradient clipped, the optimiser's step, then the
// layers' own updates, once per step.
#include "helpers.h"

#include <cmath>

#include "optim/sgd.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

// A model with one parameter w (2): loss(batch) = w . batch; a training-mode loss also records
// the auxiliary loss aux * |w|^2, and after_optimizer_step counts itself.
class Toy : public nn::Module {
 public:
  explicit Toy(float aux) : nn::Module("Toy"), aux_(aux) { w = register_parameter("w", tensor({1, -2})); }
  Tensor loss(const Tensor& batch) {
    if (aux_ > 0) record_auxiliary_loss(sum(w * w) * aux_);
    return sum(w * batch);
  }
  Tensor w;
  int after_steps = 0;

 protected:
  void apply_optimizer_step() override { ++after_steps; }

 private:
  float aux_;
};

static_assert(optim::Trainable<Toy, Tensor>);
static_assert(!optim::Trainable<Toy, int>);

}  // namespace

TEST_CASE("train_step: the loss and the layers' auxiliary loss go backward together, then the layers' own update") {
  Toy model(0.5f);
  optim::SGD sgd(model.named_parameters(), {.lr = 0.1f});
  const optim::StepResult r = optim::train_step(model, sgd, tensor({3, 4}), 0.0f);
  CHECK(r.loss == doctest::Approx(1 * 3 - 2 * 4));  // the model's loss alone
  // d/dw (w . b + 0.5 |w|^2) = b + w = (4, 2): its norm before clipping, and the step taken with it.
  CHECK(r.grad_norm == doctest::Approx(std::sqrt(20.0)));
  ladder::testing::check_tensor(model.w, {2}, {1 - 0.4f, -2 - 0.2f});
  CHECK(model.after_steps == 1);
  CHECK_FALSE(model.auxiliary_loss().defined());  // taken by the step, nothing left for the next one
}

TEST_CASE("train_step: gradients start from zero at every step, and clip scales the step down to the norm") {
  Toy model(0);
  optim::SGD sgd(model.named_parameters(), {.lr = 1.0f});
  optim::train_step(model, sgd, tensor({3, 4}), 0.0f);
  const optim::StepResult r = optim::train_step(model, sgd, tensor({3, 4}), 1.0f);
  CHECK(r.grad_norm == doctest::Approx(5));  // (3, 4) again, not the sum of two steps' gradients
  // Clipped to norm 1: w moved by (3, 4) / 5 on top of the first, unclipped step of (3, 4).
  ladder::testing::check_tensor(model.w, {2}, {1 - 3 - 0.6f, -2 - 4 - 0.8f}, 1e-5f);
  CHECK(model.after_steps == 2);
}

TEST_CASE("train_step: after_backward sees the whole gradient and changes it before the clip and the step") {
  Toy model(0);
  optim::SGD sgd(model.named_parameters(), {.lr = 1.0f});
  int calls = 0;
  // What data parallelism does there: every process's gradient becomes their average (here: half of it).
  const optim::StepResult r = optim::train_step(model, sgd, tensor({3, 4}), 0.0f, [&] {
    ++calls;
    ladder::testing::check_tensor(model.w.grad(), {2}, {3, 4});
    model.w.set_grad(model.w.grad() * 0.5f);
  });
  CHECK(calls == 1);
  CHECK(r.grad_norm == doctest::Approx(2.5));  // the norm of the changed gradient, (1.5, 2)
  ladder::testing::check_tensor(model.w, {2}, {1 - 1.5f, -2 - 2.0f});
}
