// GPT (models/gpt.h), generation: the KV cache and every causal kind's carried state against the full
// forward, sampling (temperature, top-k, top-p, never-sampled ids), generation with and without the
// cache, reproducible seeds, and what happens past block_size.
#include "gpt_fixtures.h"
#include "helpers.h"
#include "small_attention.h"

#include <variant>

#include "core/autograd.h"
#include "models/gpt.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/vq_attention.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::causal_kinds;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::sharpen;
using ladder::testing::tiny_gpt_config;
using ladder::testing::values;

namespace {

// The argmax of the last position's logits, for each row of logits (B,T,V).
std::vector<float> last_argmax(const Tensor& logits) {
  const int64_t B = logits.size(0), T = logits.size(1), V = logits.size(2);
  const Tensor best = argmax(reshape(narrow(logits, 1, T - 1, 1), {B, V}), 1);
  return std::vector<float>(best.data(), best.data() + B);
}

// Greedy continuation by hand: at each step the full forward over the last block_size tokens.
Tensor greedy_by_hand(GPT& model, Tensor seq, int64_t n) {
  NoGradGuard no_grad;
  const int64_t block = model.config().block_size;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = seq.size(1), context = std::min(len, block);
    const std::vector<float> next = last_argmax(model.forward(narrow(seq, 1, len - context, context)));
    seq = concat({seq, tensor(next, {seq.size(0), 1})}, 1);
  }
  return seq;
}

// next_token_distribution over five hand-made logits: probabilities 0.5, 0.25, 0.125, 0.0625,
// 0.0625 at ids 3, 0, 4, 1, 2.
std::vector<float> dist(const GenerateOptions& options) {
  const std::vector<float> logits = {std::log(0.25f), std::log(0.0625f), std::log(0.0625f), std::log(0.5f),
                                     std::log(0.125f)};
  return next_token_distribution(logits.data(), 5, options);
}

void expect(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK_MESSAGE(got[i] == doctest::Approx(want[i]).epsilon(1e-5), "id ", i);
}

}  // namespace

TEST_CASE("GPT: cached logits equal the full forward at every position (prompt at once, then token by token, B = 2)") {
  Generator gen(3);
  GPTConfig config = tiny_gpt_config();
  config.tie_weights = false;
  GPT model(config, gen);
  const Tensor seq = tensor({1, 4, 2, 8, 5, 7, 3, 10, 0, 9, 6, 2, 2, 5, 1, 4}, {2, 8});
  const Tensor full = model.forward(seq);  // (2,8,V)

  GPTCache cache;
  const Tensor prompt_logits = model.forward_cached(narrow(seq, 1, 0, 3), cache);
  CHECK(cache.length() == 3);
  check_close(prompt_logits, narrow(full, 1, 0, 3), 1e-5f);
  for (int64_t t = 3; t < 8; ++t) {
    const Tensor step = model.forward_cached(narrow(seq, 1, t, 1), cache);
    CHECK(cache.length() == t + 1);
    check_close(step, narrow(full, 1, t, 1), 1e-5f);
  }
  GPTCache token_by_token;  // from the first token on
  for (int64_t t = 0; t < 8; ++t)
    check_close(model.forward_cached(narrow(seq, 1, t, 1), token_by_token), narrow(full, 1, t, 1), 1e-5f);

  check_error([&] { model.forward_cached(tensor({1}, {1, 1}), cache); },
              {"GPT", "cache holds 8 positions", "1 more make 9", "block_size 8"});
  GPTCache three_layers;
  three_layers.layers.resize(3);
  check_error([&] { model.forward_cached(tensor({1}, {1, 1}), three_layers); },
              {"GPT", "cache has 3 layers", "model 2"});
  GPTCache two;
  model.forward_cached(narrow(seq, 1, 0, 2), two);
  check_error([&] { model.forward_cached(tensor({1}, {1, 1}), two); },
              {"FullAttention::step", "holds 2 sequences", "B = 1"});
}

TEST_CASE("GPT with every causal attention kind: stepped logits equal the full forward, and it learns through each") {
  for (const std::string& kind : causal_kinds()) {
    SUBCASE(kind.c_str()) {
      Generator gen(5);
      GPTConfig config = tiny_gpt_config();
      // BigBird: 4 blocks of 2 in 8 positions
      config.attention = ladder::testing::small_attention(kind, ladder::testing::blocks_of(2));
      GPT model(config, gen);
      const Tensor seq = tensor({1, 4, 2, 8, 5, 7, 3, 10, 0, 9, 6, 2, 2, 5, 1, 4}, {2, 8});
      const Tensor full = model.forward(seq);
      GPTCache cache;
      check_close(model.forward_cached(narrow(seq, 1, 0, 3), cache), narrow(full, 1, 0, 3), 1e-5f);
      for (int64_t t = 3; t < 8; ++t)
        check_close(model.forward_cached(narrow(seq, 1, t, 1), cache), narrow(full, 1, t, 1), 1e-5f);
      // Every parameter gets a gradient through this kind.
      cross_entropy(reshape(full, {16, -1}), reshape(seq, {16})).backward();
      for (const nn::NamedParameter& p : model.named_parameters()) {
        INFO(p.name);
        CHECK(sum(abs(p.tensor.grad())).item() > 0);
      }
    }
  }
}

TEST_CASE("MultiheadAttention::forward_step with every causal kind and rotary positions equals the causal forward") {
  for (const std::string& kind : causal_kinds()) {
    SUBCASE(kind.c_str()) {
      Generator gen(6);
      nn::MultiheadAttention mha(
          8, 2, {.rotary = true, .attention = ladder::testing::small_attention(kind, ladder::testing::blocks_of(2, 3))}, gen);
      const Tensor x = randn({2, 7, 8}, gen);
      const Tensor full = mha.forward(x, x, x, {.causal = true}).output;
      const std::unique_ptr<nn::AttentionState> state = mha.start_state();
      check_close(mha.forward_step(narrow(x, 1, 0, 3), *state), narrow(full, 1, 0, 3), 1e-5f);
      check_close(mha.forward_step(narrow(x, 1, 3, 1), *state), narrow(full, 1, 3, 1), 1e-5f);
      check_close(mha.forward_step(narrow(x, 1, 4, 3), *state), narrow(full, 1, 4, 3), 1e-5f);
      CHECK(state->length() == 7);
      if (kind == nn::FullAttention::kName) {  // the KV cache: the rotated keys and the values of all 7 positions, per head
        const auto& cache = dynamic_cast<const nn::KeyValueState&>(*state);
        CHECK(cache.keys.shape() == Shape{2, 2, 7, 4});
        CHECK(cache.values.shape() == Shape{2, 2, 7, 4});
      }
    }
  }
}

TEST_CASE("next_token_distribution: temperature, top_k, and top_p on a hand-made distribution") {
  expect(dist({}), {0.25f, 0.0625f, 0.0625f, 0.5f, 0.125f});
  expect(dist({.top_p = 1.0f}), {0.25f, 0.0625f, 0.0625f, 0.5f, 0.125f});
  // top_p: the smallest most-likely set whose probability reaches p, renormalised.
  expect(dist({.top_p = 0.4f}), {0, 0, 0, 1, 0});                          // 0.5 >= 0.4
  expect(dist({.top_p = 0.6f}), {1 / 3.0f, 0, 0, 2 / 3.0f, 0});            // 0.5 < 0.6 <= 0.75
  expect(dist({.top_p = 0.8f}), {0.25f / 0.875f, 0, 0, 0.5f / 0.875f, 0.125f / 0.875f});  // 0.75 < 0.8 <= 0.875
  // 0.875 < 0.9 <= 0.9375: the tie at 0.0625 keeps the lower id.
  expect(dist({.top_p = 0.9f}), {0.25f / 0.9375f, 0.0625f / 0.9375f, 0, 0.5f / 0.9375f, 0.125f / 0.9375f});
  // top_k, then top_p as a share of what top_k kept: of 0.5, 0.25 (2/3, 1/3), p = 0.7 needs both.
  expect(dist({.top_k = 2}), {1 / 3.0f, 0, 0, 2 / 3.0f, 0});
  expect(dist({.top_k = 2, .top_p = 0.7f}), {1 / 3.0f, 0, 0, 2 / 3.0f, 0});
  expect(dist({.top_k = 2, .top_p = 0.6f}), {0, 0, 0, 1, 0});
  expect(dist({.top_k = 1}), {0, 0, 0, 1, 0});
  expect(dist({.top_k = 9}), dist({}));
  // Temperature 2 takes the square root of each probability (before renormalising); tiny: one-hot.
  const std::vector<float> root = {0.5f, 0.25f, 0.25f, std::sqrt(0.5f), std::sqrt(0.125f)};
  float total = 0;
  for (float r : root) total += r;
  expect(dist({.temperature = 2.0f}), {root[0] / total, root[1] / total, root[2] / total, root[3] / total, root[4] / total});
  expect(dist({.temperature = 1e-4f}), {0, 0, 0, 1, 0});
}

TEST_CASE("next_token_distribution: never_sample ids get 0, before temperature, top_k and top_p") {
  expect(dist({.never_sample = {3}}), {0.5f, 0.125f, 0.125f, 0, 0.25f});  // the rest renormalised
  expect(dist({.never_sample = {3, 0}}), {0, 0.25f, 0.25f, 0, 0.5f});
  expect(dist({.top_k = 1, .never_sample = {3}}), {1, 0, 0, 0, 0});
  expect(dist({.top_k = 2, .never_sample = {3}}), {2 / 3.0f, 0, 0, 0, 1 / 3.0f});
  expect(dist({.top_p = 0.6f, .never_sample = {3}}), {2 / 3.0f, 0, 0, 0, 1 / 3.0f});  // 0.5 < 0.6 <= 0.75
  // The excluded id has the largest logit: a tiny temperature still gives the best allowed one, not NaN.
  expect(dist({.temperature = 1e-4f, .never_sample = {3}}), {1, 0, 0, 0, 0});
  check_error([&] { dist({.never_sample = {5}}); }, {"next_token_distribution", "never_sample", "id 5", "[0, 5)"});
  check_error([&] { dist({.never_sample = {-1}}); }, {"next_token_distribution", "id -1"});
  check_error([&] { dist({.never_sample = {0, 1, 2, 3, 4}}); }, {"next_token_distribution", "all 5 ids", "nothing is left"});
}

TEST_CASE("generate: never_sample ids are never drawn, with and without the cache") {
  Generator init(12);
  GPT model(tiny_gpt_config(), init);  // vocabulary 11, block_size 8: 60 tokens restart the cache several times
  const Tensor prompt = tensor({5, 6}, {1, 2});
  auto count_specials = [&](const GenerateOptions& options) {
    Generator gen(13);
    const std::vector<float> out = values(model.generate(prompt, 60, options, gen));
    return std::count_if(out.begin(), out.end(), [](float id) { return id < 4; });
  };
  // A fresh model spreads its probability: without the exclusion ids 0-3 come up.
  CHECK(count_specials({.temperature = 1.5f}) > 0);
  for (const bool use_cache : {false, true}) {
    CAPTURE(use_cache);
    CHECK(count_specials({.temperature = 1.5f, .use_cache = use_cache, .never_sample = {0, 1, 2, 3}}) == 0);
  }
}

TEST_CASE("generate: top_k 1 and a tiny temperature are greedy, with and without the cache") {
  Generator gen(5);
  GPT model(tiny_gpt_config(), gen);
  const Tensor prompt = tensor({1, 2, 3, 7, 7, 0}, {2, 3});
  const Tensor greedy = greedy_by_hand(model, prompt, 4);  // stays within block_size 8
  CHECK(greedy.shape() == Shape{2, 7});
  Generator sampling(99);
  for (bool use_cache : {false, true}) {
    CAPTURE(use_cache);
    CHECK(values(model.generate(prompt, 4, {.top_k = 1, .use_cache = use_cache}, sampling)) == values(greedy));
    CHECK(values(model.generate(prompt, 4, {.temperature = 1e-4f, .use_cache = use_cache}, sampling)) ==
          values(greedy));
  }
  CHECK(model.is_training());  // back in the mode it was in
}

TEST_CASE("GPT with vq attention: generation through the carried state equals the whole-sequence forward") {
  // Blocks of 4 over up to 22 positions: five block boundaries, and from position 8 on the queries
  // read the per-code cache of the blocks that left the window.
  GPTConfig config = tiny_gpt_config();
  config.block_size = 24;
  config.attention = nn::vq_attention_settings(4, 6);
  Generator init(21);
  GPT model(config, init);
  sharpen(model);
  const Tensor seq = tensor({1, 4, 2, 8, 5, 7, 3, 10, 0, 9, 6, 2, 2, 5, 1, 4, 3, 3, 9, 7, 1, 6,
                             6, 0, 3, 1, 2, 9, 4, 4, 8, 10, 7, 5, 1, 2, 0, 3, 6, 9, 8, 2, 5, 7},
                            {2, 22});
  const Tensor full = model.forward(seq);
  GPTCache cache;
  int64_t at = 0;
  for (const int64_t n : {3, 1, 6, 1, 11}) {
    INFO("positions ", at, " to ", at + n - 1);
    check_close(model.forward_cached(narrow(seq, 1, at, n), cache), narrow(full, 1, at, n), 1e-4f);
    at += n;
  }
  // Greedy tokens: with the state, and by hand with the whole forward for every token.
  const Tensor prompt = narrow(seq, 1, 0, 3);
  const Tensor greedy = greedy_by_hand(model, prompt, 19);
  Generator gen(1);
  CHECK(values(model.generate(prompt, 19, {.top_k = 1, .use_cache = true}, gen)) == values(greedy));
}

TEST_CASE("generate: seeded sampling is reproducible, and the cache draws the same tokens within block_size") {
  Generator init(6);
  GPTConfig config = tiny_gpt_config();
  config.vocab_size = 40;
  GPT model(config, init);
  const Tensor prompt = tensor({1, 2, 3}, {1, 3});
  const GenerateOptions options{.temperature = 1.5f, .top_k = 30, .top_p = 0.95f, .use_cache = false};
  Generator a(7), b(7), c(8), cached(7);
  const Tensor first = model.generate(prompt, 5, options, a);
  CHECK(values(first) == values(model.generate(prompt, 5, options, b)));
  CHECK(values(first) != values(model.generate(prompt, 5, options, c)));
  GenerateOptions with_cache = options;
  with_cache.use_cache = true;
  CHECK(values(first) == values(model.generate(prompt, 5, with_cache, cached)));
  CHECK(values(narrow(first, 1, 0, 3)) == values(prompt));
  CHECK(model.generate(prompt, 0, options, a).shape() == Shape{1, 3});
}

TEST_CASE("generate past block_size: without the cache the last block_size tokens, with it a restart from the last block_size / 2") {
  Generator gen(9);
  GPT model(tiny_gpt_config(), gen);  // block_size 8
  sharpen(model);
  const Tensor prompt = tensor({1, 2, 3, 4, 5}, {1, 5});
  Generator unused(0);
  CHECK(values(model.generate(prompt, 12, {.top_k = 1, .use_cache = false}, unused)) ==
        values(greedy_by_hand(model, prompt, 12)));

  // The cached rule by hand: the window starts at `start`; when it would hold 9 tokens, it starts
  // again at the last 4; each token is the argmax after the window's tokens.
  Tensor seq = prompt;
  int64_t start = 0;
  for (int i = 0; i < 12; ++i) {
    const int64_t len = seq.size(1);
    if (len - start > 8) start = len - 4;
    const std::vector<float> next = last_argmax(model.forward(narrow(seq, 1, start, len - start)));
    seq = concat({seq, tensor(next, {1, 1})}, 1);
  }
  CHECK(values(model.generate(prompt, 12, {.top_k = 1, .use_cache = true}, unused)) == values(seq));

  // A prompt longer than block_size: both start from its last 8 tokens.
  const Tensor long_prompt = tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 10});
  const Tensor expected = greedy_by_hand(model, long_prompt, 1);
  CHECK(values(model.generate(long_prompt, 1, {.top_k = 1, .use_cache = true}, unused)) == values(expected));
  CHECK(values(model.generate(long_prompt, 1, {.top_k = 1, .use_cache = false}, unused)) == values(expected));
}