// Every op's forward pass against values computed by hand (or by a formula written out here).
#include "helpers.h"

#include <numbers>

#include "core/autograd.h"
#include "core/kernels/fast_math.h"
#include "core/linalg.h"

using namespace ladder;
using ladder::testing::check_tensor;

TEST_CASE("elementwise ops of one tensor") {
  const Tensor x = tensor({-2, -0.5f, 0, 1.5f});
  check_tensor(neg(x), {4}, {2, 0.5f, 0, -1.5f});
  check_tensor(-x, {4}, {2, 0.5f, 0, -1.5f});
  check_tensor(abs(x), {4}, {2, 0.5f, 0, 1.5f});
  check_tensor(relu(x), {4}, {0, 0, 0, 1.5f});
  check_tensor(exp(tensor({0, 1})), {2}, {1, std::numbers::e_v<float>});
  check_tensor(log(tensor({1, std::numbers::e_v<float>})), {2}, {0, 1});
  check_tensor(sqrt(tensor({4, 2.25f})), {2}, {2, 1.5f});
  check_tensor(sin(tensor({0, std::numbers::pi_v<float> / 2})), {2}, {0, 1});
  check_tensor(cos(tensor({0, std::numbers::pi_v<float>})), {2}, {1, -1});
  check_tensor(tanh(tensor({0, 1})), {2}, {0, 0.7615941559f});
  check_tensor(sigmoid(tensor({0, 2})), {2}, {0.5f, 0.8807970780f});
  check_tensor(elu(x, 2), {4}, {2 * std::expm1(-2.0f), 2 * std::expm1(-0.5f), 0, 1.5f});
  check_tensor(silu(tensor({0, 1})), {2}, {0, 0.7310585786f});
  check_tensor(softplus(tensor({0, 1, 30})), {3}, {std::log(2.0f), 1.3132616875f, 30});
  check_tensor(softplus(tensor({1}), 2), {1}, {std::log1p(std::exp(2.0f)) / 2});
  check_tensor(pow(tensor({2, 3}), 3), {2}, {8, 27});
  check_tensor(pow(tensor({4}), 0.5f), {1}, {2});
  check_tensor(clamp(x, -1, 1), {4}, {-1, -0.5f, 0, 1});
  check_tensor(clone(x), {4}, {-2, -0.5f, 0, 1.5f});
}

TEST_CASE("gelu, exact and tanh approximation") {
  // Exact: x Phi(x). Phi(1) = 0.8413447461, Phi(-1) = 0.1586552539.
  check_tensor(gelu(tensor({-1, 0, 1})), {3}, {-0.1586552539f, 0, 0.8413447461f});
  // tanh form: 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) at x = 1: 0.8411919906
  check_tensor(gelu(tensor({1}), GeluApprox::tanh), {1}, {0.8411919906f});
}

TEST_CASE("binary ops broadcast like NumPy") {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor row = tensor({10, 20, 30});
  const Tensor col = tensor({100, 200}, {2, 1});
  check_tensor(a + row, {2, 3}, {11, 22, 33, 14, 25, 36});
  check_tensor(a - col, {2, 3}, {-99, -98, -97, -196, -195, -194});
  check_tensor(row * col, {2, 3}, {1000, 2000, 3000, 2000, 4000, 6000});
  check_tensor(a / tensor({2}), {2, 3}, {0.5f, 1, 1.5f, 2, 2.5f, 3});
  check_tensor(maximum(a, tensor({3})), {2, 3}, {3, 3, 3, 4, 5, 6});
  check_tensor(minimum(a, row / 5.0f), {2, 3}, {1, 2, 3, 2, 4, 6});
  check_tensor(add(scalar(1), ones({2, 1, 2})), {2, 1, 2}, {2, 2, 2, 2});
  // (2,1,3) with (4,1): both sides broadcast.
  const Tensor b = reshape(arange(6), {2, 1, 3}), c = reshape(arange(4), {4, 1});
  const Tensor bc = b + c;
  CHECK(bc.shape() == Shape{2, 4, 3});
  CHECK(bc.at({1, 2, 1}) == 4 + 2);
  CHECK(bc.at({0, 3, 2}) == 2 + 3);
}

TEST_CASE("scalar operators") {
  const Tensor x = tensor({1, 2, 4});
  check_tensor(x + 1.0f, {3}, {2, 3, 5});
  check_tensor(1.0f + x, {3}, {2, 3, 5});
  check_tensor(x - 1.0f, {3}, {0, 1, 3});
  check_tensor(1.0f - x, {3}, {0, -1, -3});
  check_tensor(x * 2.0f, {3}, {2, 4, 8});
  check_tensor(2.0f * x, {3}, {2, 4, 8});
  check_tensor(x / 2.0f, {3}, {0.5f, 1, 2});
  check_tensor(4.0f / x, {3}, {4, 2, 1});
}

TEST_CASE("sum and mean over any dims, with and without keepdim") {
  const Tensor x = reshape(arange(24), {2, 3, 4});
  check_tensor(sum(x), {}, {276});
  check_tensor(mean(x), {}, {11.5f});
  check_tensor(sum(x, {1}), {2, 4}, {12, 15, 18, 21, 48, 51, 54, 57});
  check_tensor(sum(x, {-1}, true), {2, 3, 1}, {6, 22, 38, 54, 70, 86});
  check_tensor(sum(x, {0, 2}), {3}, {60, 92, 124});
  check_tensor(mean(x, {0, 1}, true), {1, 1, 4}, {10, 11, 12, 13});
  check_tensor(sum(ones({3, 1, 2}), {1}), {3, 2}, {1, 1, 1, 1, 1, 1});
}

TEST_CASE("var, logsumexp, amax and amin") {
  const Tensor x = tensor({1, 2, 3, 4, 6, 8}, {2, 3});
  check_tensor(var(x, {1}), {2}, {1, 4});
  check_tensor(var(x, {1}, false, 0), {2}, {2.0f / 3, 8.0f / 3});
  check_tensor(var(tensor({1, 2, 3, 4})), {}, {5.0f / 3});
  check_tensor(logsumexp(tensor({0, 0}, {1, 2}), {1}), {1}, {std::log(2.0f)});
  check_tensor(logsumexp(tensor({1000, 1000})), {}, {1000 + std::log(2.0f)});  // no overflow
  check_tensor(logsumexp(tensor({-INFINITY, -INFINITY})), {}, {-INFINITY});
  check_tensor(amax(x, {1}), {2}, {3, 8});
  check_tensor(amin(x, {0}, true), {1, 3}, {1, 2, 3});
  check_tensor(amax(x), {}, {8});
  check_tensor(logsumexp(x, {0}), {3}, {std::log(std::exp(1.0f) + std::exp(4.0f)), std::log(std::exp(2.0f) + std::exp(6.0f)),
                                        std::log(std::exp(3.0f) + std::exp(8.0f))});
  check_tensor(logsumexp(reshape(x, {2, 1, 3}), {0, 2}), {1}, {std::log(std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f) +
                                                                        std::exp(4.0f) + std::exp(6.0f) + std::exp(8.0f))});
  check_tensor(logsumexp(tensor({INFINITY, 1})), {}, {INFINITY});
  check_tensor(amin(tensor({2, 5, -1, 7, -3, 0}, {3, 2}), {0}), {2}, {-3, 0});
}

TEST_CASE("max and min along a dim return values and indices") {
  const Tensor x = tensor({3, 9, 9, 1, 0, 5}, {2, 3});
  const ValuesIndices mx = max(x, 1);
  check_tensor(mx.values, {2}, {9, 5});
  check_tensor(mx.indices, {2}, {1, 2});  // the first 9
  const ValuesIndices mn = min(x, 0, true);
  check_tensor(mn.values, {1, 3}, {1, 0, 5});
  check_tensor(mn.indices, {1, 3}, {1, 1, 1});
  check_tensor(argmax(x, -1), {2}, {1, 2});
  check_tensor(argmin(x, -1, true), {2, 1}, {0, 1});
}

TEST_CASE("matmul: 2-d, batched, broadcast batches, transposes and vectors") {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = tensor({1, 0, 0, 1, 1, 1}, {3, 2});
  check_tensor(matmul(a, b), {2, 2}, {4, 5, 10, 11});
  check_tensor(matmul(a, a, {.transpose_b = true}), {2, 2}, {14, 32, 32, 77});
  check_tensor(matmul(a, a, {.transpose_a = true}), {3, 3}, {17, 22, 27, 22, 29, 36, 27, 36, 45});
  check_tensor(matmul(a, b, {.transpose_a = true, .transpose_b = true}), {3, 3}, {1, 4, 5, 2, 5, 7, 3, 6, 9});
  // batch (2) of (2,3) @ one shared (3,2)
  const Tensor batch = stack({a, a * 2.0f});
  check_tensor(matmul(batch, b), {2, 2, 2}, {4, 5, 10, 11, 8, 10, 20, 22});
  // broadcast batch dims: (2,1,2,3) @ (3,3,2) -> (2,3,2,2)
  const Tensor left = reshape(stack({a, a}), {2, 1, 2, 3});
  const Tensor right = stack({b, b * 2.0f, b * 3.0f});
  const Tensor out = matmul(left, right);
  CHECK(out.shape() == Shape{2, 3, 2, 2});
  CHECK(out.at({1, 2, 1, 0}) == 30);
  // vectors
  check_tensor(matmul(a, tensor({1, 1, 1})), {2}, {6, 15});
  check_tensor(matmul(tensor({1, 1}), a), {3}, {5, 7, 9});
  check_tensor(matmul(tensor({1, 2}), tensor({3, 4})), {}, {11});
}

TEST_CASE("shape ops") {
  const Tensor x = reshape(arange(6), {2, 3});
  check_tensor(reshape(x, {3, -1}), {3, 2}, {0, 1, 2, 3, 4, 5});
  check_tensor(flatten(zeros({2, 3, 4}), 1), {2, 12}, std::vector<float>(24, 0));
  check_tensor(transpose(x, 0, 1), {3, 2}, {0, 3, 1, 4, 2, 5});
  const Tensor y = reshape(arange(24), {2, 3, 4});
  const Tensor p = permute(y, {2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.at({3, 1, 2}) == y.at({1, 2, 3}));
  check_tensor(narrow(x, 1, 1, 2), {2, 2}, {1, 2, 4, 5});
  check_tensor(slice(arange(10), 0, 1, -1, 3), {3}, {1, 4, 7});
  check_tensor(slice(arange(5), 0, -2, 100), {2}, {3, 4});
  check_tensor(slice(arange(5), 0, 4, 2), {0}, {});
  check_tensor(concat({x, x * 10.0f}, 0), {4, 3}, {0, 1, 2, 3, 4, 5, 0, 10, 20, 30, 40, 50});
  check_tensor(concat({x, ones({2, 1})}, 1), {2, 4}, {0, 1, 2, 1, 3, 4, 5, 1});
  check_tensor(stack({tensor({1, 2}), tensor({3, 4})}, 1), {2, 2}, {1, 3, 2, 4});
  const std::vector<Tensor> parts = split(arange(5), 2);
  REQUIRE(parts.size() == 3);
  check_tensor(parts[2], {1}, {4});
  const std::vector<Tensor> chunks = chunk(arange(6), 3);
  REQUIRE(chunks.size() == 3);
  check_tensor(chunks[1], {2}, {2, 3});
  CHECK(squeeze(zeros({2, 1, 3}), 1).shape() == Shape{2, 3});
  CHECK(squeeze(zeros({2, 3}), 1).shape() == Shape{2, 3});
  CHECK(unsqueeze(zeros({2, 3}), -1).shape() == Shape{2, 3, 1});
  check_tensor(expand(tensor({1, 2}, {2, 1}), {2, 2, 3}), {2, 2, 3}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  check_tensor(expand(tensor({5}), {-1}), {1}, {5});
}

TEST_CASE("indexing ops") {
  const Tensor x = reshape(arange(6), {3, 2});
  check_tensor(index_select(x, 0, tensor({2, 0, 2})), {3, 2}, {4, 5, 0, 1, 4, 5});
  check_tensor(index_select(x, 1, tensor({1})), {3, 1}, {1, 3, 5});
  const Tensor e = embedding(x, tensor({1, 2, 1, 0}, {2, 2}));
  check_tensor(e, {2, 2, 2}, {2, 3, 4, 5, 2, 3, 0, 1});
  check_tensor(gather(x, 1, tensor({1, 0, 0}, {3, 1})), {3, 1}, {1, 2, 4});
  check_tensor(gather(x, 0, tensor({2, 0}, {1, 2})), {1, 2}, {4, 1});
  check_tensor(masked_fill(x, tensor({1, 0}), -1), {3, 2}, {-1, 1, -1, 3, -1, 5});
  check_tensor(where(tensor({1, 0, 1}), tensor({1, 2, 3}), scalar(0)), {3}, {1, 0, 3});
  check_tensor(one_hot(tensor({2, 0}), 3), {2, 3}, {0, 0, 1, 1, 0, 0});
  check_tensor(tril_mask(2, 3), {2, 3}, {1, 0, 0, 1, 1, 0});
  check_tensor(triu_mask(3, 3, 1), {3, 3}, {0, 1, 1, 0, 0, 1, 0, 0, 0});
}

TEST_CASE("softmax and log_softmax along any dim, stable for large inputs") {
  const float e = std::numbers::e_v<float>;
  check_tensor(softmax(tensor({0, 1}, {1, 2})), {1, 2}, {1 / (1 + e), e / (1 + e)});
  check_tensor(softmax(tensor({1000, 1000, 1000})), {3}, {1.0f / 3, 1.0f / 3, 1.0f / 3});
  check_tensor(softmax(tensor({0, -INFINITY})), {2}, {1, 0});
  check_tensor(softmax(tensor({0, 1, 0, 1}, {2, 2}), 0), {2, 2}, {0.5f, 0.5f, 0.5f, 0.5f});
  check_tensor(log_softmax(tensor({0, 0, 0, 0})), {4}, {-std::log(4.0f), -std::log(4.0f), -std::log(4.0f), -std::log(4.0f)});
  check_tensor(log_softmax(tensor({-1000, 0})), {2}, {-1000, 0});
}

TEST_CASE("cross_entropy: mean, sum, none, class weights and ignore_index") {
  // logits rows [0, ln 3] and [0, 0]: log-probs [-ln 4, ln 3 - ln 4] and [-ln 2, -ln 2]
  const Tensor logits = tensor({0, std::log(3.0f), 0, 0}, {2, 2});
  const Tensor targets = tensor({1, 0});
  const float l0 = std::log(4.0f) - std::log(3.0f), l1 = std::log(2.0f);
  check_tensor(cross_entropy(logits, targets), {}, {(l0 + l1) / 2});
  check_tensor(cross_entropy(logits, targets, {.reduction = Reduction::sum}), {}, {l0 + l1});
  check_tensor(cross_entropy(logits, targets, {.reduction = Reduction::none}), {2}, {l0, l1});
  check_tensor(cross_entropy(logits, targets, {.weight = tensor({1, 3})}), {}, {(3 * l0 + 1 * l1) / 4});
  check_tensor(cross_entropy(logits, tensor({1, -100})), {}, {l0});
  check_tensor(cross_entropy(logits, tensor({-1, 0}), {.ignore_index = -1}), {}, {l1});
  // class dim last: (B,T,C) logits with (B,T) targets
  const Tensor seq = cross_entropy(zeros({2, 3, 5}), zeros({2, 3}));
  check_tensor(seq, {}, {std::log(5.0f)});
}

TEST_CASE("cross_entropy over an all-padding batch: the mean is NaN as in PyTorch, the gradient exactly 0") {
  // A batch whose every target is ignore_index (all padding): the mean divides 0 by 0. PyTorch
  // returns a NaN loss and a zero gradient; a NaN gradient would poison every weight and Adam's state.
  Tensor logits = randn({3, 4});
  logits.requires_grad_();
  const Tensor loss = cross_entropy(logits, full({3}, -100));
  CHECK(std::isnan(loss.item()));
  loss.backward();
  check_tensor(logits.grad(), {3, 4}, std::vector<float>(12, 0.0f), 0);
}

TEST_CASE("fast_exp of NaN is NaN, with no undefined float-to-int conversion on the way") {
  CHECK(std::isnan(fast_exp(NAN)));
  CHECK(std::isnan(fast_exp(-NAN)));
  CHECK(fast_exp(-INFINITY) == 0.0f);
  CHECK(std::isinf(fast_exp(INFINITY)));
}

TEST_CASE("mse and binary cross entropy with logits") {
  check_tensor(mse_loss(tensor({1, 2, 3}), tensor({1, 0, 0})), {}, {13.0f / 3});
  check_tensor(mse_loss(tensor({1, 2}), tensor({0, 0}), Reduction::sum), {}, {5});
  check_tensor(mse_loss(tensor({1, 2}), tensor({0, 0}), Reduction::none), {2}, {1, 4});
  // -[t log s(x) + (1-t) log(1 - s(x))]: x = 0 gives ln 2 for any t; x = 2, t = 1 gives log(1 + e^-2)
  check_tensor(binary_cross_entropy_with_logits(tensor({0, 2}), tensor({0.3f, 1}), Reduction::none), {2},
               {std::log(2.0f), std::log1p(std::exp(-2.0f))});
  check_tensor(binary_cross_entropy_with_logits(tensor({-200}), tensor({1})), {}, {200});  // stable
}

TEST_CASE("layer_norm normalises the trailing dims and applies the affine") {
  const Tensor x = tensor({1, 2, 3, 4, 2, 2, 2, 2}, {2, 4});
  // row 0: mean 2.5, biased var 1.25; row 1: constant, var 0 -> all zeros (up to eps)
  const float s = 1 / std::sqrt(1.25f + 1e-5f);
  check_tensor(layer_norm(x, {4}), {2, 4}, {-1.5f * s, -0.5f * s, 0.5f * s, 1.5f * s, 0, 0, 0, 0}, 1e-5f);
  const Tensor y = layer_norm(x, {4}, tensor({1, 1, 2, 2}), tensor({0, 1, 0, 1}));
  check_tensor(y, {2, 4}, {-1.5f * s, -0.5f * s + 1, 1 * s, 3 * s + 1, 0, 1, 0, 1}, 1e-5f);
  const Tensor z = layer_norm(reshape(x, {1, 2, 4}), {2, 4});  // over both trailing dims
  CHECK(std::fabs(sum(z).item()) < 1e-5f);
}

TEST_CASE("rms_norm divides by the root mean square of the trailing dims and applies the weight") {
  const Tensor x = tensor({1, 2, 3, 4, 2, -2, 2, -2}, {2, 4});
  // row 0: mean of squares (1 + 4 + 9 + 16) / 4 = 7.5; row 1: 4, so it becomes +-1 (up to eps)
  const float r = 1 / std::sqrt(7.5f + 1e-6f);
  check_tensor(rms_norm(x, {4}), {2, 4}, {r, 2 * r, 3 * r, 4 * r, 1, -1, 1, -1}, 1e-5f);
  check_tensor(rms_norm(x, {4}, tensor({1, 1, 2, 2})), {2, 4}, {r, 2 * r, 6 * r, 8 * r, 1, -1, 2, -2}, 1e-5f);
  // over both trailing dims: mean of squares (30 + 16) / 8 = 5.75
  const float q = 1 / std::sqrt(5.75f + 0.5f);
  check_tensor(rms_norm(reshape(x, {1, 2, 4}), {2, 4}, {}, 0.5f), {1, 2, 4},
               {q, 2 * q, 3 * q, 4 * q, 2 * q, -2 * q, 2 * q, -2 * q}, 1e-5f);
}

TEST_CASE("dropout keeps the expected value, and is the identity in eval") {
  Generator gen(5);
  const Tensor x = ones({100000});
  const Tensor y = dropout(x, 0.3f, true, gen);
  int64_t zeros_seen = 0;
  for (float v : y.to_vector()) {
    CHECK((v == 0 || std::fabs(v - 1 / 0.7f) < 1e-6f));
    zeros_seen += v == 0;
  }
  CHECK(static_cast<double>(zeros_seen) / 100000 == doctest::Approx(0.3).epsilon(0.02));
  CHECK(mean(y).item() == doctest::Approx(1.0).epsilon(0.01));
  CHECK(dropout(x, 0.3f, false).is_same(x));
  check_tensor(dropout(ones({3}), 1, true), {3}, {0, 0, 0});
}

TEST_CASE("cumsum along a dim") {
  check_tensor(cumsum(tensor({1, 2, 3, 4}), 0), {4}, {1, 3, 6, 10});
  check_tensor(cumsum(tensor({1, 2, 3, 4, 5, 6}, {2, 3}), 0), {2, 3}, {1, 2, 3, 5, 7, 9});
  check_tensor(cumsum(tensor({1, 2, 3, 4, 5, 6}, {2, 3}), 1), {2, 3}, {1, 3, 6, 4, 9, 15});
}

TEST_CASE("conv2d by hand: a 2x2 kernel with stride and padding") {
  const Tensor x = reshape(arange(1, 10), {1, 1, 3, 3});  // 1..9
  const Tensor w = tensor({1, 0, 0, -1}, {1, 1, 2, 2});  // x[i][j] - x[i+1][j+1]
  check_tensor(conv2d(x, w), {1, 1, 2, 2}, {-4, -4, -4, -4});
  check_tensor(conv2d(x, w, tensor({10})), {1, 1, 2, 2}, {6, 6, 6, 6});
  // padding 1, stride 2: windows at (-1,-1), (-1,1), (1,-1), (1,1)
  check_tensor(conv2d(x, w, {}, {.stride = 2, .padding = 1}), {1, 1, 2, 2}, {-1, -3, -7, -4});
  // two input channels, two output channels
  const Tensor x2 = concat({x, x * 2.0f}, 1);
  const Tensor w2 = tensor({1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, {2, 2, 2, 2});
  const Tensor y2 = conv2d(x2, w2);
  CHECK(y2.shape() == Shape{1, 2, 2, 2});
  check_tensor(narrow(y2, 1, 0, 1), {1, 1, 2, 2}, {1 + 10, 2 + 12, 4 + 16, 5 + 18});
  check_tensor(narrow(y2, 1, 1, 1), {1, 1, 2, 2}, {0, 0, 0, 0});
}

TEST_CASE("max and average pooling") {
  const Tensor x = tensor({1, 5, 2, 0, 3, 4, 8, 1, 0, 2, 7, 6, 1, 9, 3, 4}, {1, 1, 4, 4});
  check_tensor(max_pool2d(x), {1, 1, 2, 2}, {5, 8, 9, 7});
  check_tensor(avg_pool2d(x), {1, 1, 2, 2}, {13.0f / 4, 11.0f / 4, 12.0f / 4, 20.0f / 4});
  check_tensor(max_pool2d(x, {.kernel = 3, .stride = 1}), {1, 1, 2, 2}, {8, 8, 9, 9});
  // padding: the window at (-1,-1) sees only x[0][0]; padding counts as zero in the average
  check_tensor(avg_pool2d(x, {.kernel = 2, .stride = 2, .padding = 1}), {1, 1, 3, 3},
               {0.25f, 7.0f / 4, 0, 3.0f / 4, 21.0f / 4, 7.0f / 4, 0.25f, 12.0f / 4, 1});
  check_tensor(max_pool2d(tensor({-1, -2, -3, -4}, {1, 1, 2, 2}), {.kernel = 2, .stride = 1, .padding = 1}), {1, 1, 3, 3},
               {-1, -1, -2, -1, -1, -2, -3, -3, -4});
}

TEST_CASE("batch_norm: batch statistics in training, running statistics in eval") {
  // (N=2, C=2, L=2): channel 0 holds 1,2,3,4 (mean 2.5, var 1.25); channel 1 holds 10 four times.
  const Tensor x = tensor({1, 2, 10, 10, 3, 4, 10, 10}, {2, 2, 1, 2});
  Tensor running_mean = zeros({2}), running_var = ones({2});
  const Tensor y = batch_norm(x, running_mean, running_var, Tensor(), Tensor(), true, 0.1f, 1e-5f);
  const float s = 1 / std::sqrt(1.25f + 1e-5f);
  check_tensor(y, {2, 2, 1, 2}, {-1.5f * s, -0.5f * s, 0, 0, 0.5f * s, 1.5f * s, 0, 0});
  check_tensor(running_mean, {2}, {0.25f, 1.0f});
  check_tensor(running_var, {2}, {0.9f + 0.1f * 1.25f * 4 / 3, 0.9f});  // unbiased batch variance
  const Tensor e = batch_norm(x, running_mean, running_var, tensor({2, 1}), tensor({0, 1}), false, 0.1f, 0);
  CHECK(e.at({0, 0, 0, 0}) == doctest::Approx(2 * (1 - 0.25f) / std::sqrt(running_var.data()[0])));
  CHECK(e.at({0, 1, 0, 1}) == doctest::Approx((10 - 1.0f) / std::sqrt(0.9f) + 1));
  check_tensor(batch_norm(tensor({1, 3}, {2, 1}), {}, {}, {}, {}, true, 0.1f, 0), {2, 1}, {-1, 1});
}

TEST_CASE("solve: Gaussian elimination with pivoting; singular systems refused") {
  // 2x + y = 5, x + 3y = 10  ->  x = 1, y = 3 (and a second right-hand side at once)
  const Tensor x = solve(tensor({2, 1, 1, 3}, {2, 2}), tensor({5, 2, 10, 1}, {2, 2}));
  ladder::testing::check_tensor(x, {2, 2}, {1, 1, 3, 0}, 1e-6f);
  ladder::testing::check_tensor(solve(tensor({0, 1, 1, 0}, {2, 2}), tensor({7, 9})), {2}, {9, 7});  // needs a pivot swap
  ladder::testing::check_error([] { solve(tensor({1, 2, 2, 4}, {2, 2}), tensor({1, 2})); }, {"solve", "singular"});
  ladder::testing::check_error([] { solve(zeros({2, 3}), zeros({2})); }, {"solve", "square", "(2,3)"});
}

TEST_CASE("NaN propagates through relu, maximum, minimum and max pooling, as in PyTorch") {
  CHECK(std::isnan(relu(tensor({NAN})).item()));
  CHECK(std::isnan(maximum(tensor({NAN}), tensor({1})).item()));
  CHECK(std::isnan(maximum(tensor({1}), tensor({NAN})).item()));
  CHECK(std::isnan(minimum(tensor({NAN}), tensor({1})).item()));
  CHECK(std::isnan(minimum(tensor({1}), tensor({NAN})).item()));
  CHECK(std::isnan(max_pool2d(tensor({1, NAN, 3, 4}, {1, 1, 2, 2})).item()));
  CHECK(max_pool2d(tensor({1, 5, 3, 4}, {1, 1, 2, 2})).item() == 5);
}

TEST_CASE("pow with exponent 0 has slope 0 everywhere, including at 0") {
  Tensor x = tensor({0, 2});
  x.requires_grad_();
  sum(pow(x, 0)).backward();
  ladder::testing::check_tensor(x.grad(), {2}, {0, 0});
}
