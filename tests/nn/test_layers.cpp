// Layers: what each computes, their initialisation, shapes and errors.
#include "helpers.h"

#include <cmath>

#include "core/gradcheck.h"
#include "nn/activation.h"
#include "nn/conv.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/sequential.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

TEST_CASE("Linear computes x W^T + b over any leading dims") {
  Linear layer(3, 2);
  const Tensor w = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  std::copy_n(w.data(), 6, layer.weight.data());
  layer.bias.data()[0] = 10;
  layer.bias.data()[1] = 20;
  check_tensor(layer(tensor({1, 0, -1}, {1, 3})), {1, 2}, {10 - 2, 20 - 2});
  CHECK(layer(zeros({4, 5, 3})).shape() == Shape{4, 5, 2});
  check_tensor(layer(tensor({1, 0, -1}, {3})), {2}, {10 - 2, 20 - 2});  // one vector, no batch dim
  check_error([&] { layer(zeros({2, 4})); }, {"Linear", "(..., 3)", "(2,4)"});
  check_error([] { Linear bad(0, 3); }, {"Linear", "positive"});
}

TEST_CASE("Linear initialisations have the documented ranges and spreads") {
  Generator gen(3);
  Linear pytorch(100, 400, {}, gen);
  const float bound = 1 / std::sqrt(100.0f);
  for (float v : pytorch.weight.to_vector()) CHECK((v >= -bound && v < bound));
  for (float v : pytorch.bias.to_vector()) CHECK((v >= -bound && v < bound));
  Linear xavier(100, 400, {.init = Init::xavier}, gen);
  const float xb = std::sqrt(6.0f / 500);
  for (float v : xavier.weight.to_vector()) CHECK(std::fabs(v) <= xb);
  CHECK(xavier.bias.to_vector() == std::vector<float>(400, 0));
  Linear kaiming(100, 400, {.bias = false, .init = Init::kaiming}, gen);
  CHECK(!kaiming.bias.defined());
  CHECK(std::sqrt(var(kaiming.weight).item()) == doctest::Approx(std::sqrt(2.0 / 100)).epsilon(0.03));
  Linear normal(100, 400, {.init = Init::normal, .std = 0.02f}, gen);
  CHECK(std::sqrt(var(normal.weight).item()) == doctest::Approx(0.02).epsilon(0.03));
}

TEST_CASE("a Linear layer's gradients pass the finite-difference check") {
  Generator gen(4);
  Linear layer(4, 3, {}, gen);
  const Tensor x = randn({5, 4}, gen);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& p) { return tanh(matmul(x, p[0], {.transpose_b = true}) + p[1]); },
      {layer.weight, layer.bias});
  CHECK_MESSAGE(r.ok, r.worst);
}

TEST_CASE("Embedding looks rows up by id") {
  Embedding table(4, 2);
  const Tensor out = table(tensor({3, 0}, {1, 2}));
  CHECK(out.shape() == Shape{1, 2, 2});
  CHECK(out.at({0, 0, 1}) == table.weight.at({3, 1}));
  check_error([&] { table(tensor({4})); }, {"index 4 is out of range"});
}

TEST_CASE("LayerNorm and BatchNorm modules") {
  LayerNorm norm({4});
  const Tensor y = norm(tensor({1, 2, 3, 4}, {1, 4}));
  CHECK(std::fabs(mean(y).item()) < 1e-6f);
  CHECK(norm.weight.to_vector() == std::vector<float>(4, 1));

  BatchNorm1d bn(2);
  const Tensor x = tensor({1, 10, 3, 30}, {2, 2});
  bn(x);  // training: running stats move 10% towards the batch's
  check_tensor(bn.running_mean, {2}, {0.2f, 2.0f});
  bn.eval();
  const Tensor e = bn(x);  // eval: normalised with the running stats
  CHECK(e.at({0, 0}) == doctest::Approx((1 - 0.2f) / std::sqrt(bn.running_var.data()[0] + 1e-5f)));
  check_error([&] { bn(zeros({2, 3})); }, {"BatchNorm1d", "(N,2)", "(2,3)"});
  BatchNorm2d bn2(3);
  CHECK(bn2(randn({2, 3, 4, 4})).shape() == Shape{2, 3, 4, 4});
}

TEST_CASE("RMSNorm: one parameter named weight, rms_norm over the last dim") {
  RMSNorm norm(4, 1e-5f);
  CHECK(norm.named_parameters().size() == 1);
  CHECK(norm.named_parameters()[0].name == "weight");
  CHECK(norm.weight.to_vector() == std::vector<float>(4, 1));
  CHECK(norm.repr() == "RMSNorm(4, eps=1e-05)");
  norm.weight.data()[3] = 2;
  const Tensor x = tensor({1, 2, 3, 4, 2, -2, 2, -2}, {2, 1, 4});
  const float r = 1 / std::sqrt(7.5f + 1e-5f), q = 1 / std::sqrt(4 + 1e-5f);
  check_tensor(norm(x), {2, 1, 4}, {r, 2 * r, 3 * r, 8 * r, 2 * q, -2 * q, 2 * q, -4 * q});
  check_error([&] { norm(zeros({2, 3})); }, {"rms_norm", "(4)", "(2,3)"});
  check_error([] { RMSNorm(0); }, {"RMSNorm", "dim must be positive, got 0"});
}

TEST_CASE("Conv2d, pooling and Flatten shapes in a small CNN") {
  Sequential cnn{std::make_shared<Conv2d>(1, 4, 3, Conv2dOptions{.padding = 1}), std::make_shared<ReLU>(),
                 std::make_shared<MaxPool2d>(2), std::make_shared<Conv2d>(4, 8, 3), std::make_shared<AvgPool2d>(3),
                 std::make_shared<Flatten>(), std::make_shared<Linear>(8, 10)};
  CHECK(cnn(randn({5, 1, 12, 12})).shape() == Shape{5, 10});
  // (5,1,12,12) -> conv pad 1 (5,4,12,12) -> pool (5,4,6,6) -> conv (5,8,4,4) -> pool 3 (5,8,1,1) -> (5,8) -> (5,10)
  const Conv2d conv(3, 2, 5);
  const float bound = 1 / std::sqrt(3.0f * 25);
  for (float v : conv.weight.to_vector()) CHECK(std::fabs(v) <= bound);
}

TEST_CASE("Dropout is active in training only") {
  Dropout drop(0.5f);
  const Tensor x = ones({1000});
  const Tensor y = drop(x);
  CHECK(y.to_vector() != x.to_vector());
  drop.eval();
  CHECK(drop(x).is_same(x));
  check_error([] { Dropout bad(1.5f); }, {"Dropout", "[0, 1]"});
}

TEST_CASE("Dropout keeps its own generator: valid after the one it was built with is gone, and weights do not move") {
  auto build = [](float p) {
    Generator local(3);  // gone when build returns
    return mlp({2, 16, 3}, {.activation = ActivationKind::relu, .dropout = p}, local);
  };
  const auto with = build(0.5f), without = build(0.0f);
  CHECK(with->size() == 4);
  CHECK(without->size() == 3);  // Linear ReLU Linear: no Dropout layer at 0
  // The last Linear comes after the Dropout: the same weights with or without it.
  CHECK((*with)[3].named_parameters()[0].tensor.to_vector() == (*without)[2].named_parameters()[0].tensor.to_vector());
  const Tensor x = randn({64, 2});
  CHECK((*with)(x).to_vector() != (*with)(x).to_vector());  // fresh masks from the layer's own generator
  with->eval();
  CHECK((*with)(x).to_vector() == (*without)(x).to_vector());
}

TEST_CASE("mlp builds Linear layers with activations and dropout between them") {
  const auto net = mlp({2, 16, 16, 3}, {.activation = ActivationKind::relu, .dropout = 0.1f});
  CHECK(net->size() == 7);  // Linear ReLU Dropout Linear ReLU Dropout Linear
  CHECK((*net)[1].type_name() == "ReLU");
  CHECK((*net)[2].type_name() == "Dropout");
  CHECK((*net)[6].type_name() == "Linear");
  CHECK((*net)(zeros({4, 2})).shape() == Shape{4, 3});
  check_error([] { mlp({3}); }, {"mlp", "at least an input and an output"});
}

TEST_CASE("orthogonal initialisation: orthonormal rows (or columns), times the gain") {
  Generator gen(9);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{6, 6}, {3, 7}, {7, 3}}) {
    Tensor w = empty({rows, cols});
    init_orthogonal(w, gen, 2.0f);
    const Tensor gram = rows <= cols ? matmul(w, w, {.transpose_b = true}) : matmul(w, w, {.transpose_a = true});
    const int64_t n = std::min(rows, cols);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) CHECK(gram.at({i, j}) == doctest::Approx(i == j ? 4.0 : 0.0).epsilon(1e-4).scale(1));
  }
}
