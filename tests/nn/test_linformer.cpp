// Linformer (nn/attention/linformer_attention.h), beside the tests every kind passes
// (tests/nn/test_attention_kinds.cpp): the formula written out, the first S columns of E and F for a
// shorter sequence, padding that changes nothing, E and F as trained and checkpointed parameters, and
// the refusals (causal calls, generation, sequences longer than n).
#include "helpers.h"

#include <cmath>

#include "models/encoder_classifier.h"
#include "nn/attention/linformer_attention.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::max_abs;

namespace {

LinformerAttention linformer(int64_t k, int64_t longest, uint64_t seed = 1) {
  Generator gen(seed);
  return LinformerAttention({.kind = LinformerAttention::Settings{.k = k}, .max_length = longest}, gen);
}

}  // namespace

TEST_CASE("linformer: softmax(q (E K)^T / sqrt(D)) (F V) with the first S columns of E and F") {
  LinformerAttention layer = linformer(5, 20);
  CHECK(layer.E.shape() == Shape{5, 20});
  CHECK(layer.F.shape() == Shape{5, 20});
  Generator gen(2);
  const int64_t S = 13, D = 4;
  const Tensor q = randn({2, 3, S, D}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
  const Tensor E = narrow(layer.E, 1, 0, S), F = narrow(layer.F, 1, 0, S);  // (5,S)
  const Tensor weights = softmax(matmul(q, matmul(E, k), {.transpose_b = true}) / std::sqrt(float(D)), -1);
  check_close(layer.attend(q, k, v, {}), matmul(weights, matmul(F, v)), 1e-5f);
  check_close(layer.implied_weights(q, k, {}), matmul(weights, F), 1e-5f);
}

TEST_CASE("linformer: padding after the real keys changes nothing for the real queries") {
  LinformerAttention layer = linformer(4, 16);
  Generator gen(3);
  const Tensor q = randn({1, 2, 12, 6}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
  Tensor padding = ones({1, 12});
  for (int64_t j = 9; j < 12; ++j) padding.data()[j] = 0;
  const Tensor padded = layer.attend(q, k + 100.0f * (1.0f - reshape(padding, {1, 1, 12, 1})), v * 7.0f,
                                     {.key_padding_mask = padding});
  // Garbage in the padded keys and values above, the nine real positions alone here.
  const auto real = [](const Tensor& x) { return narrow(x, 2, 0, 9); };
  const Tensor alone = layer.attend(real(q), real(k), real(v * 7.0f), {});
  check_close(real(padded), alone, 1e-5f);
}

TEST_CASE("linformer: E and F are parameters that train and travel in a checkpoint") {
  LinformerAttention layer = linformer(3, 10);
  const std::vector<NamedParameter> params = layer.named_parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].name == "E");
  CHECK(params[1].name == "F");
  // N(0, 1/k): a standard deviation near 1/sqrt(3) = 0.577 over the 30 entries of each.
  for (const Tensor& projection : {layer.E, layer.F}) {
    const double sd = std::sqrt(mean(projection * projection).item());
    CHECK(sd > 0.35);
    CHECK(sd < 0.85);
  }
  Generator gen(4);
  const Tensor q = randn({2, 1, 7, 4}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
  sum(layer.attend(q, k, v, {}) * randn(q.shape(), gen)).backward();
  CHECK(max_abs(narrow(layer.E.grad(), 1, 0, 7)) > 0);
  CHECK(max_abs(narrow(layer.F.grad(), 1, 0, 7)) > 0);
  CHECK(max_abs(narrow(layer.E.grad(), 1, 7, 3)) == 0);  // columns past S = 7 take no part

  LinformerAttention other = linformer(3, 10, 9);
  CHECK(max_abs(other.attend(q, k, v, {}) - layer.attend(q, k, v, {})) > 1e-3f);
  other.load_state_dict(layer.state_dict());
  CHECK(max_abs(other.attend(q, k, v, {}) - layer.attend(q, k, v, {})) == 0);

  // In a model: each encoder layer's projections, sized by the model's max_len.
  Generator init(5);
  const models::EncoderClassifier model({.vocab_size = 8, .num_classes = 2, .max_len = 24, .d_model = 8, .nhead = 2,
                                         .num_layers = 2, .dim_feedforward = 16,
                                         .attention = {.kind = LinformerAttention::Settings{.k = 6}}},
                                        init);
  CHECK(model.state_dict().at("encoder.layers.1.self_attn.attention.F").shape() == Shape{6, 24});
}

TEST_CASE("linformer refuses causal calls, generation and sequences longer than its projections") {
  LinformerAttention layer = linformer(4, 8);
  const Tensor x = zeros({1, 1, 8, 4});
  check_error([&] { layer.attend(x, x, x, {.causal = true}); },
              {"LinformerAttention", "bidirectional only", "mixes every position", "causal = false"});
  check_error([&] { layer.implied_weights(x, x, {.causal = true}); }, {"bidirectional only"});
  check_error([&] { layer.start(); }, {"LinformerAttention::start", "bidirectional only"});
  const Tensor long_keys = zeros({1, 1, 9, 4});
  check_error([&] { layer.attend(x, long_keys, long_keys, {}); },
              {"S = 9 positions", "made for 8 (max_length)", "max_len of at least 9"});
  check_error([&] { layer.attend(x, x, x, {.key_padding_mask = ones({1, 7})}); }, {"key_padding_mask must be (B,S) = (1,8)"});
  check_error([] { make_attention({.kind = LinformerAttention::Settings{}}); },
              {"LinformerAttention", "max_length = 0", "AttentionSettings::max_length"});
  check_error([] { make_attention({.kind = LinformerAttention::Settings{.k = 0}, .max_length = 8}); },
              {"linformer attention", "k must be from 1 to 65536, got 0"});
}
