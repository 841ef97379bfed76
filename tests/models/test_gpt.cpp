// GPT (models/gpt.h): names and sizes, causality, the KV cache against the full forward, the heads
// forward_with_heads hands back, loss(batch), sampling (temperature, top-k, top-p), generation with
// and without the cache, gradients, weight tying, errors.
#include "helpers.h"
#include "small_attention.h"

#include <type_traits>
#include <variant>

#include "core/autograd.h"
#include "core/gradcheck.h"
#include "models/gpt.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/vq_attention.h"
#include "optim/train_step.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::max_abs;

namespace {

GPTConfig tiny_config() {
  return {.vocab_size = 11, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8, .dropout = 0, .bias = true,
          .tie_weights = true};
}

// The kinds a GPT can take: those that attend causally.
std::vector<std::string> causal_kinds() {
  std::vector<std::string> kinds;
  for (const nn::KindDescription& kind : nn::attention_kinds())
    if (kind.attends(true)) kinds.push_back(kind.name);
  return kinds;
}

std::vector<std::string> parameter_names(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& p : m.named_parameters()) names.push_back(p.name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

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

// Weights 20x GPT-2's initial scale, so that the next token depends on the whole context and not
// mostly on the last token, as it does in a freshly initialised model.
void sharpen(GPT& model) {
  for (const auto& p : model.named_parameters())
    if (p.kind != nn::ParamKind::norm)
      for (int64_t i = 0; i < p.tensor.numel(); ++i) p.tensor.data()[i] *= 20.0f;
}

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); }

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

TEST_CASE("GPT: nanoGPT's names, the parameter count, logits (B,T,V)") {
  Generator gen(1);
  GPTConfig config = tiny_config();
  GPT tied(config, gen);
  const auto names = parameter_names(tied);
  for (const char* name : {"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.ln_1.weight",
                           "transformer.h.0.attn.in_proj_weight", "transformer.h.0.attn.in_proj_bias",
                           "transformer.h.0.attn.out_proj.weight", "transformer.h.0.ln_2.bias",
                           "transformer.h.1.mlp.c_fc.weight", "transformer.h.1.mlp.c_proj.bias",
                           "transformer.ln_f.weight"})
    CHECK_MESSAGE(has(names, name), name);
  CHECK_FALSE(has(names, "lm_head.weight"));  // tied: listed once, as the embedding
  CHECK_FALSE(has(names, "lm_head.bias"));
  const int64_t V = 11, Tmax = 8, C = 8, L = 2;
  const int64_t per_block = 2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (4 * C * C + 4 * C) + (4 * C * C + C);
  CHECK(tied.num_parameters() == V * C + Tmax * C + L * per_block + 2 * C);

  config.tie_weights = false;
  GPT untied(config, gen);
  CHECK(has(parameter_names(untied), "lm_head.weight"));
  CHECK(untied.num_parameters() == tied.num_parameters() + V * C);

  const Tensor idx = tensor({1, 2, 3, 4, 5, 6, 10, 0, 3}, {3, 3});
  CHECK(tied.forward(idx).shape() == Shape{3, 3, V});
  CHECK(tied.summary().find("GPT(vocab_size=11, block_size=8") != std::string::npos);
}

TEST_CASE("GPT: the logits at position i do not depend on later tokens") {
  Generator gen(2);
  GPT model(tiny_config(), gen);
  const Tensor a = model.forward(tensor({1, 2, 3, 4, 5, 6}, {1, 6}));
  const Tensor b = model.forward(tensor({1, 2, 3, 9, 0, 7}, {1, 6}));
  check_close(narrow(a, 1, 0, 3), narrow(b, 1, 0, 3), 0);
  CHECK(sum(abs(narrow(a, 1, 3, 3) - narrow(b, 1, 3, 3))).item() > 1e-4f);
}

TEST_CASE("GPT: cached logits equal the full forward at every position (prompt at once, then token by token, B = 2)") {
  Generator gen(3);
  GPTConfig config = tiny_config();
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
      GPTConfig config = tiny_config();
      // BigBird: 4 blocks of 2 in 8 positions
      config.attention = ladder::testing::small_attention(kind, {{"block", 2}, {"random_blocks", 1}});
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

TEST_CASE("GPT config through JSON: every field and the attention's settings rebuild the same model") {
  for (const std::string& kind : causal_kinds()) {
    SUBCASE(kind.c_str()) {
      GPTConfig config = tiny_config();
      config.dropout = 0.25f, config.bias = false, config.tie_weights = false;
      // BigBird: 8 blocks of 1, so that the seed's random blocks matter.
      config.attention = ladder::testing::small_attention(
          kind, {{"feature_map", "cos"}, {"chunk", 3}, {"block", 1}, {"random_blocks", 2}, {"global_blocks", false},
                 {"codes", 5}});
      config.attention.seed = 77;
      // Every setting of the kind away from its default, so that each must travel.
      for (const nn::KindSetting& setting : nn::registered_kind(kind).settings)
        if (config.attention.value(setting.name) == setting.default_value)
          config.attention.values[setting.name] = std::visit(
              [&](const auto& d) -> nn::SettingValue {
                using T = std::decay_t<decltype(d)>;
                if constexpr (std::is_same_v<T, bool>) return !d;
                else if constexpr (std::is_same_v<T, int64_t>) return d + 1;
                else return setting.choices.back() != d ? setting.choices.back() : setting.choices.front();
              },
              setting.default_value);
      const GPTConfig back = gpt_config_from_json(gpt_config_to_json(config));
      CHECK(back.vocab_size == 11);
      CHECK(back.block_size == 8);
      CHECK(back.n_layer == 2);
      CHECK(back.n_head == 2);
      CHECK(back.n_embd == 8);
      CHECK(back.dropout == 0.25f);
      CHECK_FALSE(back.bias);
      CHECK_FALSE(back.tie_weights);
      const nn::AttentionSettings& a = back.attention;
      CHECK(a.kind == kind);
      CHECK(a.seed == 77);
      for (const nn::KindSetting& setting : nn::registered_kind(kind).settings) {
        INFO(setting.name);
        CHECK(a.value(setting.name) == config.attention.value(setting.name));
        CHECK(a.value(setting.name) != setting.default_value);
      }

      config.dropout = 0;  // for the same logits in training mode
      Generator gen(3);
      GPT saved(config, gen);
      GPT loaded(gpt_config_from_json(gpt_config_to_json(config)));
      loaded.load_state_dict(saved.state_dict());
      const Tensor seq = tensor({1, 4, 2, 8, 5, 7, 3, 10}, {1, 8});
      CHECK(max_abs(saved.forward(seq) - loaded.forward(seq)) == 0);
      if (kind == nn::BigBirdAttention::kName) {  // another seed draws other random blocks: the seed had to travel
        config.attention.seed = 78;
        GPT reseeded(config);
        reseeded.load_state_dict(saved.state_dict());
        CHECK(max_abs(saved.forward(seq) - reseeded.forward(seq)) > 1e-4f);
      }
      if (kind == nn::VQAttention::kName) {  // the codebooks (H,S,D) have S = codes rows: the setting had to travel
        CHECK(saved.state_dict().at("transformer.h.0.attn.attention.quantizer.codes").shape() == Shape{2, 5, 4});
      }
    }
  }
}

TEST_CASE("GPT config from JSON: a config saved before the kinds is full attention; bad fields are named") {
  const std::string old = R"({"vocab_size":5,"block_size":4,"n_layer":1,"n_head":1,"n_embd":4,"dropout":0,"bias":true,"tie_weights":true})";
  CHECK(gpt_config_from_json(old).attention.kind == "full");
  // Saved with an attention but before vq: no codes, the default.
  const std::string before_vq = old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"linear","feature_map":"elu",)" +
                                R"("chunk":64,"block":64,"random_blocks":3,"global_blocks":true,"seed":0}})";
  CHECK(gpt_config_from_json(before_vq).attention.kind == "linear");
  CHECK(gpt_config_from_json(before_vq).attention.word("feature_map") == "elu");
  CHECK(gpt_config_from_json(before_vq).attention.number("chunk") == 64);
  // Saved before the registry: every kind's fields, each read by its kind only; a missing one has its default.
  const std::string every_field = old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"vq","feature_map":"cos",)" +
                                  R"("chunk":8,"block":16,"random_blocks":3,"global_blocks":true,"seed":4}})";
  const nn::AttentionSettings vq = gpt_config_from_json(every_field).attention;
  CHECK(vq.number("block") == 16);
  CHECK(vq.number("codes") == 64);
  CHECK(vq.seed == 4);
  CHECK(vq.values.size() == 1);
  check_error([] { gpt_config_from_json(R"({"vocab_size":5})"); }, {"gpt_config_from_json", "cannot read block_size"});
  check_error([&] { gpt_config_from_json(old.substr(0, old.size() - 1) + R"(,"attention":{"kind":3}})"); },
              {"cannot read attention.kind", "gpt_config_to_json"});
  check_error([] { gpt_config_from_json("{"); }, {"cannot read the text"});
  check_error([&] { gpt_config_from_json(old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"full"}})"); },
              {"cannot read attention.seed"});
  check_error([&] {
    gpt_config_from_json(old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"linear","seed":0,"chunk":"big"}})");
  }, {"cannot read attention.chunk"});
}

TEST_CASE("MultiheadAttention::forward_step with every causal kind and rotary positions equals the causal forward") {
  for (const std::string& kind : causal_kinds()) {
    SUBCASE(kind.c_str()) {
      Generator gen(6);
      nn::MultiheadAttention mha(8, 2, {.rotary = true, .attention = ladder::testing::small_attention(kind, {{"block", 2}})},
                                 gen);
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

TEST_CASE("GPT::forward_with_heads: forward's logits, and per block the q, k, v a forward rebuilt by hand gives") {
  for (const std::string& kind : causal_kinds()) {
    SUBCASE(kind.c_str()) {
      Generator gen(14);
      GPTConfig config = tiny_config();
      config.attention = ladder::testing::small_attention(kind, {{"block", 2}, {"random_blocks", 1}});
      GPT model(config, gen);
      sharpen(model);
      model.eval();  // vq: reading the weights records nothing
      const Tensor seq = tensor({1, 4, 2, 8, 5, 7, 3, 10, 0, 9, 6, 2, 2, 5, 1, 4}, {2, 8});
      const GPTForward seen = model.forward_with_heads(seq);
      CHECK(max_abs(seen.logits - model.forward(seq)) == 0);  // asking changes nothing
      REQUIRE(seen.heads.size() == 2);

      // By hand: the embeddings, then at each block its ln_1, the attention asked for its weights,
      // and the key rows of the input projection, split into 2 heads of 4.
      GPTTransformer& t = *model.transformer;
      Tensor x = t.wte->forward(seq) + t.wpe->forward(arange(8.0f));  // (2,8,8)
      for (size_t layer = 0; layer < 2; ++layer) {
        INFO("layer ", layer);
        nn::MultiheadAttention& attn = *t.h[layer]->attn;
        const nn::AttentionHeads& heads = seen.heads[layer];
        CHECK(heads.q.shape() == Shape{2, 2, 8, 4});
        const Tensor h = t.h[layer]->ln_1->forward(x);
        const Tensor weights = attn.forward(h, h, h, {.causal = true, .weights = nn::AttentionWeights::per_head}).weights;
        check_close(attn.attention_kind->implied_weights(heads.q, heads.k, {.causal = true}), weights, 1e-6f);
        const Tensor k = linear(h, narrow(attn.in_proj_weight, 0, 8, 8), narrow(attn.in_proj_bias, 0, 8, 8));  // (2,8,8)
        check_close(heads.k, permute(reshape(k, {2, 8, 2, 4}), {0, 2, 1, 3}), 1e-5f);
        x = t.h[layer]->forward(x);
      }
    }
  }
}

TEST_CASE("GPT::loss(batch) is the cross-entropy of forward(x) against y, and makes the GPT trainable by train_step") {
  static_assert(optim::Trainable<GPT, data::Batch>);
  Generator gen(15);
  GPT model(tiny_config(), gen), twin(tiny_config());
  twin.load_state_dict(model.state_dict());
  const data::Batch batch{.x = tensor({1, 4, 0, 2, 3, 3, 10, 9}, {2, 4}), .y = tensor({4, 0, 2, 3, 3, 10, 9, 1}, {2, 4})};
  const Tensor loss = model.loss(batch);
  const Tensor by_hand = cross_entropy(twin.forward(batch.x), batch.y);
  CHECK(loss.shape() == Shape{});
  CHECK(loss.item() == by_hand.item());
  loss.backward();
  by_hand.backward();
  check_close(model.transformer->wte->weight.grad(), twin.transformer->wte->weight.grad(), 0);
  check_close(model.transformer->h[1]->attn->in_proj_weight.grad(), twin.transformer->h[1]->attn->in_proj_weight.grad(), 0);
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
  GPT model(tiny_config(), init);  // vocabulary 11, block_size 8: 60 tokens restart the cache several times
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
  GPT model(tiny_config(), gen);
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
  GPTConfig config = tiny_config();
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
  GPTConfig config = tiny_config();
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
  GPT model(tiny_config(), gen);  // block_size 8
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

TEST_CASE("GPT: gradient check of every parameter and tied weights (a tiny model)") {
  Generator gen(10);
  const GPTConfig config{.vocab_size = 5, .block_size = 4, .n_layer = 2, .n_head = 2, .n_embd = 8, .dropout = 0,
                         .bias = true, .tie_weights = true};
  GPT model(config, gen);
  // The members forward reads, in named_parameters() order: gradcheck perturbs copies of the
  // parameters, and pointing the members at them differentiates the model's own forward.
  std::vector<Tensor*> members = {&model.transformer->wte->weight, &model.transformer->wpe->weight};
  for (const auto& block : model.transformer->h)
    for (Tensor* t : {&block->ln_1->weight, &block->ln_1->bias, &block->attn->in_proj_weight, &block->attn->in_proj_bias,
                      &block->attn->out_proj->weight, &block->attn->out_proj->bias, &block->ln_2->weight,
                      &block->ln_2->bias, &block->mlp->c_fc->weight, &block->mlp->c_fc->bias,
                      &block->mlp->c_proj->weight, &block->mlp->c_proj->bias})
      members.push_back(t);
  members.push_back(&model.transformer->ln_f->weight);
  members.push_back(&model.transformer->ln_f->bias);
  const auto params = model.named_parameters();
  REQUIRE(params.size() == members.size());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < members.size(); ++i) {
    CHECK_MESSAGE(members[i]->is_same(params[i].tensor), params[i].name);
    // Larger values than GPT-2's 0.02 so that every path moves the logits measurably.
    inputs.push_back((params[i].tensor.detach() * (params[i].kind == nn::ParamKind::norm ? 1.0f : 20.0f)).requires_grad_());
  }
  const Tensor idx = tensor({1, 4, 0, 2, 3, 3, 1, 0}, {2, 4});
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& v) {
        for (size_t i = 0; i < members.size(); ++i) *members[i] = v[i];
        model.lm_head->weight = v[0];  // tied: the head reads the embedding's table
        return model.forward(idx);
      },
      inputs);
  CHECK_MESSAGE(r.ok, r.worst);
  REQUIRE(r.analytic.size() == inputs.size());
  for (const Tensor& g : r.analytic) CHECK(g.defined());
}

TEST_CASE("GPT: tie_weights lists wte once, and its gradient is the sum of its two uses") {
  Generator gen(11);
  GPTConfig config = tiny_config();
  GPT tied(config, gen);
  CHECK(tied.lm_head->weight.is_same(tied.transformer->wte->weight));
  CHECK(tied.summary().find("tied to transformer.wte.weight") != std::string::npos);
  config.tie_weights = false;
  GPT untied(config, gen);
  std::map<std::string, Tensor> state = tied.state_dict();
  CHECK(state.count("lm_head.weight") == 0);
  state["lm_head.weight"] = tied.transformer->wte->weight.detach().clone();
  untied.load_state_dict(state);

  const Tensor idx = tensor({1, 4, 0, 2, 3, 3, 10, 9}, {2, 4});
  const Tensor targets = tensor({4, 0, 2, 3, 3, 10, 9, 1}, {2, 4});
  cross_entropy(tied.forward(idx), targets).backward();
  cross_entropy(untied.forward(idx), targets).backward();
  check_close(tied.transformer->wte->weight.grad(),
              untied.transformer->wte->weight.grad() + untied.lm_head->weight.grad(), 1e-6f, 1e-5f);
  CHECK(sum(abs(untied.transformer->wte->weight.grad())).item() > 0);
  CHECK(sum(abs(untied.lm_head->weight.grad())).item() > 0);
}

TEST_CASE("GPT: errors name GPT, the values and the fix") {
  GPTConfig config = tiny_config();
  config.n_head = 3;
  check_error([&] { GPT{config}; }, {"GPT", "n_embd 8", "n_head 3", "divisible"});
  config = tiny_config();
  config.dropout = 1.0f;
  check_error([&] { GPT{config}; }, {"GPT", "dropout", "[0, 1)"});
  GPT model(tiny_config());
  check_error([&] { model.forward(zeros({1, 9})); }, {"GPT", "9 tokens", "block_size 8"});
  check_error([&] { model.forward(tensor({1, 11}, {1, 2})); }, {"GPT", "token id 11", "(0,1)", "[0, 11)"});
  check_error([&] { model.forward(tensor({1, -1}, {1, 2})); }, {"GPT", "token id -1"});
  check_error([&] { model.forward(tensor({1.5f}, {1, 1})); }, {"GPT", "token id 1.5"});
  check_error([&] { model.forward(zeros({4})); }, {"GPT", "(B,T)", "(4)"});
  Generator gen(0);
  const Tensor prompt = tensor({1, 2}, {1, 2});
  check_error([&] { model.generate(prompt, 3, {.temperature = 0}, gen); }, {"GPT::generate", "temperature", "> 0", "got 0"});
  check_error([&] { model.generate(prompt, 3, {.temperature = -1}, gen); }, {"GPT::generate", "temperature", "got -1"});
  check_error([&] { model.generate(prompt, 3, {.top_k = -2}, gen); }, {"GPT::generate", "top_k", ">= 0", "got -2"});
  check_error([&] { model.generate(prompt, 3, {.top_p = 0}, gen); }, {"GPT::generate", "top_p", "(0, 1]", "got 0"});
  check_error([&] { model.generate(prompt, 3, {.top_p = 1.5f}, gen); }, {"GPT::generate", "top_p", "got 1.5"});
  check_error([&] { model.generate(prompt, -1, {}, gen); }, {"GPT::generate", "max_new_tokens", "-1"});
  check_error([&] { model.generate(tensor({12}, {1, 1}), 3, {}, gen); }, {"GPT", "token id 12"});
}
