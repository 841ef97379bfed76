// GPT (models/gpt.h), the model: names and sizes, causality, its configuration through JSON, the heads
// forward_with_heads hands back, loss(batch) (on framed lines too), gradients, weight tying, errors. Generation and sampling
// are in test_gpt_generation.cpp.
#include "gpt_fixtures.h"
#include "helpers.h"
#include "small_attention.h"

#include <algorithm>
#include <type_traits>

#include "core/autograd.h"
#include "core/gradcheck.h"
#include "data/line_batch.h"
#include "data/tokenizer.h"
#include "models/gpt.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/feature_map.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/vq_attention.h"
#include "optim/train_step.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::causal_kinds;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::max_abs;
using ladder::testing::sharpen;
using ladder::testing::tiny_gpt_config;

namespace {

std::vector<std::string> parameter_names(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& p : m.named_parameters()) names.push_back(p.name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST_CASE("GPT: nanoGPT's names, the parameter count, logits (B,T,V)") {
  Generator gen(1);
  GPTConfig config = tiny_gpt_config();
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
  GPT model(tiny_gpt_config(), gen);
  const Tensor a = model.forward(tensor({1, 2, 3, 4, 5, 6}, {1, 6}));
  const Tensor b = model.forward(tensor({1, 2, 3, 9, 0, 7}, {1, 6}));
  check_close(narrow(a, 1, 0, 3), narrow(b, 1, 0, 3), 0);
  CHECK(sum(abs(narrow(a, 1, 3, 3) - narrow(b, 1, 3, 3))).item() > 1e-4f);
}

TEST_CASE("GPT config through JSON: every field and the attention's settings rebuild the same model") {
  for (const std::string& kind : causal_kinds()) {
    SUBCASE(kind.c_str()) {
      GPTConfig config = tiny_gpt_config();
      config.dropout = 0.25f, config.bias = false, config.tie_weights = false;
      // BigBird: 8 blocks of 1, so that the seed's random blocks matter.
      config.attention = ladder::testing::small_attention(
          kind, {nn::LinearAttention::Settings{.feature_map = "cos", .chunk = 3},
                 nn::BigBirdAttention::Settings{.block = 1, .random_blocks = 2, .global_blocks = false},
                 nn::VQAttention::Settings{.block = 1, .codes = 5}});
      config.attention.seed = 77;
      // Every setting of the kind away from its default, so that each must travel.
      const nn::KindDescription& description = nn::registered_kind(kind);
      for (const nn::KindSetting& setting : description.settings) {
        const nn::SettingValue default_value = setting.get(description.defaults);
        if (setting.get(config.attention.kind) == default_value)
          setting.set(config.attention.kind, std::visit(
                                                 [&](const auto& d) -> nn::SettingValue {
                                                   using T = std::decay_t<decltype(d)>;
                                                   if constexpr (std::is_same_v<T, bool>) return !d;
                                                   else if constexpr (std::is_same_v<T, int64_t>) return d + 1;
                                                   else return setting.choices.back() != d ? setting.choices.back()
                                                                                          : setting.choices.front();
                                                 },
                                                 default_value));
      }
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
      CHECK(a.kind_name() == kind);
      CHECK(a.seed == 77);
      for (const nn::KindSetting& setting : description.settings) {
        INFO(setting.key);
        CHECK(setting.get(a.kind) == setting.get(config.attention.kind));
        CHECK(setting.get(a.kind) != setting.get(description.defaults));
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
  CHECK(gpt_config_from_json(old).attention.kind_name() == "full");
  // Saved with an attention but before vq: no codes, the default.
  const std::string before_vq = old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"linear","feature_map":"elu",)" +
                                R"("chunk":64,"block":64,"random_blocks":3,"global_blocks":true,"seed":0}})";
  const nn::AttentionSettings linear_attention = gpt_config_from_json(before_vq).attention;
  const nn::LinearAttention::Settings& linear = linear_attention.kind.as<nn::LinearAttention::Settings>();
  CHECK(linear.feature_map == "elu");
  CHECK(linear.chunk == 64);
  CHECK(linear.random_features == 0);
  // Saved before the registry: every kind's fields, each read by its kind only; a missing one has its default.
  const std::string every_field = old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"vq","feature_map":"cos",)" +
                                  R"("chunk":8,"block":16,"random_blocks":3,"global_blocks":true,"seed":4}})";
  const nn::AttentionSettings vq = gpt_config_from_json(every_field).attention;
  const nn::VQAttention::Settings& own = vq.kind.as<nn::VQAttention::Settings>();
  CHECK(own.block == 16);
  CHECK(own.codes == 64);
  CHECK(own.normalise);
  CHECK(own.cache_gradient == nn::VQAttention::kExact);
  CHECK(vq.seed == 4);
  check_error([] { gpt_config_from_json(R"({"vocab_size":5})"); }, {"gpt_config_from_json", "cannot read block_size"});
  check_error([&] { gpt_config_from_json(old.substr(0, old.size() - 1) + R"(,"attention":{"kind":3}})"); },
              {"cannot read attention.kind", "gpt_config_to_json"});
  check_error([] { gpt_config_from_json("{"); }, {"cannot read the text"});
  // Sizes no checkpoint of ladder holds are refused before a model is built (n_layer 100000 built for 38 s).
  const auto with = [&](const std::string& field, const std::string& value) {
    std::string text = old;
    const size_t at = text.find("\"" + field + "\":") + field.size() + 3;
    return text.replace(at, text.find_first_of(",}", at) - at, value);
  };
  check_error([&] { gpt_config_from_json(with("n_layer", "100000")); }, {"gpt_config_from_json", "n_layer is 100000", "1 to 1024"});
  check_error([&] { gpt_config_from_json(with("block_size", "200000000")); }, {"block_size is 200000000"});
  check_error([&] { gpt_config_from_json(with("n_embd", "0")); }, {"n_embd is 0"});
  CHECK(gpt_config_from_json(with("n_layer", "1024")).n_layer == 1024);
  check_error([&] { gpt_config_from_json(old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"full"}})"); },
              {"cannot read attention.seed"});
  check_error([&] {
    gpt_config_from_json(old.substr(0, old.size() - 1) + R"(,"attention":{"kind":"linear","seed":0,"chunk":"big"}})");
  }, {"cannot read attention.chunk"});
}

TEST_CASE("GPT::forward_with_heads: forward's logits, and per block the q, k, v a forward rebuilt by hand gives") {
  for (const std::string& kind : causal_kinds()) {
    SUBCASE(kind.c_str()) {
      Generator gen(14);
      GPTConfig config = tiny_gpt_config();
      config.attention = ladder::testing::small_attention(kind, ladder::testing::blocks_of(2));
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
  GPT model(tiny_gpt_config(), gen), twin(tiny_gpt_config());
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

TEST_CASE("GPT on framed lines: a padded position changes no gradient and no codebook, with every causal kind") {
  // The padding sits after each line's end: causal attention lets no real position read it, and
  // its targets are no answer; vq attention, whose codebook reads every key, is handed the padding
  // mask. What a pad holds must then change nothing the step computes.
  const data::Batch framed = data::frame_lines({{4, 5, 6}, {7}, {8, 9, 10, 4, 5}}, 8, {.bos = 1, .eos = 2});
  // The gradients of one step on x, then the buffers (vq: the codebook) after its EMA step.
  const auto step_on = [&](const nn::AttentionSettings& attention, const Tensor& x) {
    GPTConfig config = tiny_gpt_config();
    config.attention = attention;
    Generator gen(21);
    GPT model(config, gen);
    sharpen(model);
    // as train_step: the kinds' own losses too
    nn::with_auxiliary_loss(model, model.loss({x, framed.y, framed.key_padding_mask})).backward();
    std::vector<Tensor> state;
    for (const auto& p : model.named_parameters()) state.push_back(p.tensor.grad().clone());
    model.after_optimizer_step();
    for (const auto& b : model.named_buffers()) state.push_back(b.second.clone());
    return state;
  };
  Tensor other_pads = framed.x.clone(), other_real = framed.x.clone();
  for (int64_t i = 0; i < framed.x.numel(); ++i) {
    const bool pad = framed.y.data()[i] == data::kNoAnswer;  // after its line's end, no answer
    CHECK(framed.key_padding_mask.data()[i] == (pad ? 0.0f : 1.0f));
    if (pad) other_pads.data()[i] = 9;
  }
  other_real.data()[1] = 10;  // the first line's first character
  std::vector<nn::AttentionSettings> attentions;
  for (const std::string& kind : causal_kinds())
    attentions.push_back(ladder::testing::small_attention(kind, {nn::BigBirdAttention::Settings{.block = 2, .random_blocks = 1},
                                                                 nn::VQAttention::Settings{.block = 2, .codes = 4}}));
  for (const std::string& map : nn::feature_map_names())  // lesson 12 trains linear attention with each
    attentions.push_back({.kind = nn::LinearAttention::Settings{.feature_map = map}});
  for (const nn::AttentionSettings& attention : attentions) {
    const nn::LinearAttention::Settings* linear = attention.kind.find<nn::LinearAttention::Settings>();
    CAPTURE(attention.kind_name());
    CAPTURE(linear ? linear->feature_map : "");
    const std::vector<Tensor> padded = step_on(attention, framed.x), repadded = step_on(attention, other_pads),
                              changed = step_on(attention, other_real);
    float pad_change = 0, real_change = 0;
    for (size_t p = 0; p < padded.size(); ++p) {
      pad_change = std::max(pad_change, max_abs(sub(repadded[p], padded[p])));
      real_change = std::max(real_change, max_abs(sub(changed[p], padded[p])));
    }
    CHECK(real_change > 1e-4f);  // a real character does change it: the comparison can fail
    if (linear && nn::make_feature_map(linear->feature_map)->keys_over_positions()) {
      // double softmax shifts each key feature by its largest over the positions, the pads' too: the shift
      // cancels in its ratios, so a pad changes the gradient by rounding only.
      CHECK(pad_change < 1e-5f * real_change);
    } else {
      CHECK(pad_change == 0);
    }
  }
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
  GPTConfig config = tiny_gpt_config();
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
  GPTConfig config = tiny_gpt_config();
  config.n_head = 3;
  check_error([&] { GPT{config}; }, {"GPT", "n_embd 8", "n_head 3", "divisible"});
  config = tiny_gpt_config();
  config.dropout = 1.0f;
  check_error([&] { GPT{config}; }, {"GPT", "dropout", "[0, 1)"});
  GPT model(tiny_gpt_config());
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