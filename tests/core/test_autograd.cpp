// The semantics of backward(): the chain rule, accumulation, freeing the graph, no-grad mode.
#include "helpers.h"

#include "core/autograd.h"
#include "core/kernels/parallel.h"

using namespace ladder;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

namespace {

Tensor leaf(std::vector<float> values) {
  Tensor t = tensor(values);
  return t.requires_grad_();
}

}  // namespace

TEST_CASE("the chain rule through a small expression") {
  Tensor x = leaf({2, -1});
  const Tensor y = sum(x * x * x + 3.0f * x);  // dy/dx = 3x^2 + 3
  y.backward();
  check_tensor(x.grad(), {2}, {15, 6});
  CHECK(y.grad_fn_name() == "sum");
  CHECK(x.is_leaf());
  CHECK(!y.is_leaf());
}

TEST_CASE("a tensor used twice gets both gradients") {
  Tensor x = leaf({3});
  sum(x * x).backward();  // d(x^2)/dx = 2x through the two uses of x
  check_tensor(x.grad(), {1}, {6});
}

TEST_CASE("a shared subgraph is walked once, after all its uses") {
  Tensor x = leaf({1.5f});
  const Tensor h = x * 2.0f;
  const Tensor y = sum(h * h + h);  // dy/dh = 2h + 1, dh/dx = 2
  y.backward();
  check_tensor(x.grad(), {1}, {(2 * 3.0f + 1) * 2});
}

TEST_CASE("gradients accumulate over backward calls until zero_grad") {
  Tensor x = leaf({1, 2});
  sum(x * 3.0f).backward();
  sum(x * 3.0f).backward();  // a second forward and backward adds on top
  check_tensor(x.grad(), {2}, {6, 6});
  x.zero_grad();
  CHECK(!x.grad().defined());
  sum(x * x).backward();
  check_tensor(x.grad(), {2}, {2, 4});
}

TEST_CASE("backward frees the graph; retain_graph keeps it for a second pass") {
  Tensor x = leaf({2});
  const Tensor y = sum(exp(x));
  y.backward();
  CHECK(y.grad_fn()->released);
  CHECK(y.grad_fn()->inputs.empty());
  check_error([&] { y.backward(); }, {"backward", "freed by an earlier backward()", "retain_graph"});

  Tensor z = leaf({2});
  const Tensor w = sum(exp(z));
  w.backward(Tensor(), /*retain_graph=*/true);
  w.backward();
  check_tensor(z.grad(), {1}, {2 * std::exp(2.0f)}, 1e-6f);
}

TEST_CASE("no graph is recorded under NoGradGuard") {
  Tensor x = leaf({1, 2});
  Tensor y;
  {
    NoGradGuard no_grad;
    CHECK(!grad_enabled());
    y = sum(x * 2.0f);
  }
  CHECK(grad_enabled());
  CHECK(!y.requires_grad());
  CHECK(!y.grad_fn());
  check_error([&] { y.backward(); }, {"backward", "does not require grad", "requires_grad_()"});
}

TEST_CASE("backward on a non-scalar needs a gradient of its shape") {
  Tensor x = leaf({1, 2, 3});
  const Tensor y = x * 2.0f;
  check_error([&] { y.backward(); }, {"backward", "shape (3)", "scalar", "sum or mean"});
  check_error([&] { y.backward(ones({2})); }, {"backward", "gradient of shape (2)", "shape (3)"});
  y.backward(tensor({1, 0, -1}));
  check_tensor(x.grad(), {3}, {2, 0, -2});
}

TEST_CASE("detach cuts the graph; retain_grad keeps an intermediate gradient") {
  Tensor x = leaf({3});
  Tensor h = x * x;
  h.retain_grad();
  const Tensor y = sum(h * x.detach());  // through detach, x is a constant
  y.backward();
  check_tensor(x.grad(), {1}, {2 * 3 * 3});  // only via h = x^2: dy/dh * 2x = 3 * 6
  check_tensor(h.grad(), {1}, {3});
}

TEST_CASE("requires_grad_ only on leaves") {
  Tensor x = leaf({1});
  Tensor y = x * 2.0f;
  check_error([&] { y.requires_grad_(); }, {"requires_grad_", "leaf", "'mul_scalar'", "detach()"});
}

TEST_CASE("each leaf owns its gradient even when backward hands both the same values") {
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  sum(a + b).backward();  // add passes one gradient tensor to both inputs
  CHECK(a.grad().data() != b.grad().data());
  a.grad().data()[0] = 100;
  CHECK(b.grad().data()[0] == 1);
}

TEST_CASE("a gradient that reaches an input through a broadcast is summed back to its shape") {
  Tensor bias = leaf({1, 2, 3});
  const Tensor x = ones({4, 3});
  sum(x + bias).backward();
  check_tensor(bias.grad(), {3}, {4, 4, 4});
}

TEST_CASE("very long chains neither overflow the stack in backward nor in destruction") {
  Tensor x = leaf({0.5f});
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = y * 1.0f;
  sum(y).backward();
  check_tensor(x.grad(), {1}, {1});
  Tensor z = x;
  for (int i = 0; i < 200000; ++i) z = tanh(z) + 0.0f;
  z = Tensor();  // drops 400,000 nodes without backward
  CHECK(!z.defined());
}

TEST_CASE("the same seed and thread count give bit-identical training") {
  set_num_threads(2);
  auto train = [] {
    manual_seed(42);
    Tensor w1 = (randn({64, 256}) * 0.1f).requires_grad_();
    Tensor w2 = (randn({256, 10}) * 0.1f).requires_grad_();
    const Tensor x = randn({512, 64});
    const Tensor labels = randint(0, 10, {512});
    std::vector<float> losses;
    for (int step = 0; step < 5; ++step) {
      const Tensor h = dropout(layer_norm(tanh(matmul(x, w1)), {256}), 0.1f, true);
      const Tensor loss = cross_entropy(matmul(h, w2), labels);
      loss.backward();
      losses.push_back(loss.item());
      NoGradGuard no_grad;
      for (Tensor* w : {&w1, &w2}) {
        for (int64_t i = 0; i < w->numel(); ++i) w->data()[i] -= 0.5f * w->grad().data()[i];
        w->zero_grad();
      }
    }
    return losses;
  };
  const std::vector<float> first = train(), second = train();
  CHECK(first == second);
  CHECK(first.back() < first.front());
}

TEST_CASE("in-place writes bump a version shared by every view of the values") {
  Tensor x = zeros({2, 3});
  const Tensor view = reshape(x, {6}), detached = x.detach();
  CHECK(x.version() == 0);
  x.fill_(1);
  view.copy_(ones({6}));
  detached.mutable_data()[0] = 2;
  CHECK(x.version() == 3);
  CHECK(view.version() == 3);
  CHECK(x.clone().version() == 0);  // a clone has values of its own
  x.data()[1] = 5;                  // data() is for reading and for filling fresh outputs: not counted
  CHECK(x.version() == 3);
  check_error([&] { x.copy_(ones({3})); }, {"copy_", "(3)", "(2,3)"});
}

TEST_CASE("backward refuses values that an optimizer step changed after the forward pass") {
  // y = sum(w * x), then w changes in place, then y.backward(): the gradient for x would be the new
  // w, a function that was never evaluated. PyTorch raises here too.
  Tensor w = leaf({1, 2}), x = leaf({3, 4});
  const Tensor y = sum(w * x);
  w.mutable_data()[0] -= 0.1f;  // what SGD::step does
  check_error([&] { y.backward(); },
              {"backward: op 'mul' needs its input 0 of shape (2) as it was in the forward pass",
               "modified in place since (version 1, saved at version 0)", "optimizer step"});
}

TEST_CASE("writing into a detached output changes nothing silently: backward refuses") {
  Tensor x = leaf({0.5f, 1});
  const Tensor y = exp(x);
  y.detach().fill_(5);
  check_error([&] { sum(y).backward(); }, {"op 'exp' needs its output as it was in the forward pass"});
}

TEST_CASE("ops whose backward reads no values do not refuse in-place writes to them") {
  // add's and a scalar multiply's gradients are constants: changing their inputs afterwards is harmless.
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  const Tensor y = sum((a + b) * 2.0f);
  a.fill_(10);
  y.backward();
  check_tensor(a.grad(), {2}, {2, 2});
  check_tensor(b.grad(), {2}, {2, 2});
}

TEST_CASE("running statistics updated by a second forward pass do not block the first one's backward") {
  Tensor x = randn({4, 3});
  x.requires_grad_();
  const Tensor mean = zeros({3}), var = ones({3});
  const Tensor first = batch_norm(x, mean, var, {}, {}, /*training=*/true);
  const Tensor second = batch_norm(x * 2.0f, mean, var, {}, {}, /*training=*/true);
  CHECK(mean.version() == 2);
  (sum(first * first) + sum(second)).backward();
  CHECK(x.grad().defined());
}
