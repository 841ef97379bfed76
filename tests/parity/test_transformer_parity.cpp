// nn::MultiheadAttention, TransformerEncoderLayer and TransformerDecoderLayer against torch.nn's on
// the same weights (loaded by name: the state dicts map one to one), dropout 0: outputs, attention
// weights and the gradients of every input and parameter, within 1e-5. Golden values:
// tests/parity/golden/transformer.json (bench/pytorch/golden_transformer.py).
#include "helpers.h"
#include "parity/golden.h"

#include "nn/attention/multihead_attention.h"
#include "nn/attention/transformer_layer.h"

using namespace ladder;
using namespace ladder::testing;

namespace {

constexpr float kTolerance = 1e-5f;

// The golden input `name` as a tensor of its recorded shape, a leaf that requires grad when
// PyTorch recorded its gradient.
Tensor golden_input(const nlohmann::json& c, const char* name) {
  const nlohmann::json& input = c["inputs"][name];
  Tensor t = tensor(golden_values(input["values"]), input["shape"].get<Shape>());
  if (c["grads"].contains(name)) t.requires_grad_();
  return t;
}

void load_golden_state(nn::Module& module, const nlohmann::json& c) {
  std::map<std::string, Tensor> state;
  for (const auto& [name, value] : module.state_dict())
    state[name] = tensor(golden_values(c["state"][name]), value.shape());
  module.load_state_dict(state);
}

// Checks the output, then backward from PyTorch's upstream gradient and checks every gradient of
// the inputs named and of every parameter.
void check_output_and_gradients(nn::Module& module, const nlohmann::json& c, const Tensor& output,
                                const std::vector<std::pair<std::string, Tensor>>& inputs) {
  check_golden(output, c["output"], "output", kTolerance);
  sum(output * tensor(golden_values(c["upstream"]), output.shape())).backward();
  for (const auto& [name, t] : inputs) check_golden(t.grad(), c["grads"][name], "dL/d" + name, kTolerance);
  for (const nn::NamedParameter& p : module.named_parameters()) {
    REQUIRE_MESSAGE(c["grads"].contains(p.name), "PyTorch has no parameter ", p.name);
    check_golden(p.tensor.grad(), c["grads"][p.name], "dL/d" + p.name, kTolerance);
  }
}

struct Sizes {
  int64_t E, H, F;
};

Sizes golden_sizes(const nlohmann::json& g) { return {g["sizes"]["E"], g["sizes"]["H"], g["sizes"]["F"]}; }

nn::TransformerLayerOptions layer_options(const nlohmann::json& c, int64_t F) {
  return {.dim_feedforward = F,
          .dropout = 0,
          .activation = c["settings"]["activation"] == "gelu" ? nn::FeedForwardActivation::gelu
                                                               : nn::FeedForwardActivation::relu,
          .norm_first = c["settings"]["norm_first"].get<bool>()};
}

}  // namespace

TEST_CASE("MultiheadAttention, self attention with causal and key padding masks, matches PyTorch") {
  const nlohmann::json g = read_golden("transformer.json");
  const nlohmann::json& c = g["cases"]["mha_self_causal_padded"];
  const Sizes s = golden_sizes(g);
  // With the weights asked for, the naive path runs; without them, the fused op.
  for (const nn::AttentionWeights weights : {nn::AttentionWeights::averaged, nn::AttentionWeights::none}) {
    CAPTURE(static_cast<int>(weights));
    nn::MultiheadAttention mha(s.E, s.H);
    load_golden_state(mha, c);
    const Tensor x = golden_input(c, "x");
    const nn::MultiheadAttentionOutput out = mha.forward(
        x, x, x, {.key_padding_mask = golden_input(c, "key_padding_mask"), .causal = true, .weights = weights});
    if (weights == nn::AttentionWeights::averaged) check_golden(out.weights, c["weights"], "weights averaged over heads", kTolerance);
    else CHECK_FALSE(out.weights.defined());
    check_output_and_gradients(mha, c, out.output, {{"x", x}});
  }
}

TEST_CASE("MultiheadAttention, cross attention with a key padding mask, matches PyTorch (weights per head)") {
  const nlohmann::json g = read_golden("transformer.json");
  const nlohmann::json& c = g["cases"]["mha_cross_padded"];
  const Sizes s = golden_sizes(g);
  nn::MultiheadAttention mha(s.E, s.H);
  load_golden_state(mha, c);
  const Tensor query = golden_input(c, "query"), memory = golden_input(c, "memory");
  const nn::MultiheadAttentionOutput out = mha.forward(
      query, memory, memory,
      {.key_padding_mask = golden_input(c, "key_padding_mask"), .weights = nn::AttentionWeights::per_head});
  CHECK(out.weights.shape() == Shape{query.size(0), s.H, query.size(1), memory.size(1)});
  check_golden(out.weights, c["weights"], "weights per head", kTolerance);
  check_output_and_gradients(mha, c, out.output, {{"query", query}, {"memory", memory}});
}

TEST_CASE("TransformerEncoderLayer matches PyTorch: post-LN and pre-LN, relu and gelu, key padding") {
  const nlohmann::json g = read_golden("transformer.json");
  const Sizes s = golden_sizes(g);
  for (const char* name : {"encoder_post_relu", "encoder_post_gelu", "encoder_pre_relu", "encoder_pre_gelu"}) {
    CAPTURE(name);
    const nlohmann::json& c = g["cases"][name];
    nn::TransformerEncoderLayer layer(s.E, s.H, layer_options(c, s.F));
    load_golden_state(layer, c);
    const Tensor src = golden_input(c, "src");
    const Tensor out = layer.forward(src, {.src_key_padding_mask = golden_input(c, "src_key_padding_mask")});
    check_output_and_gradients(layer, c, out, {{"src", src}});
  }
}

TEST_CASE("TransformerDecoderLayer matches PyTorch: post-LN and pre-LN, causal, memory key padding") {
  const nlohmann::json g = read_golden("transformer.json");
  const Sizes s = golden_sizes(g);
  for (const char* name : {"decoder_post_relu", "decoder_post_gelu", "decoder_pre_relu", "decoder_pre_gelu"}) {
    CAPTURE(name);
    const nlohmann::json& c = g["cases"][name];
    nn::TransformerDecoderLayer layer(s.E, s.H, layer_options(c, s.F));
    load_golden_state(layer, c);
    const Tensor tgt = golden_input(c, "tgt"), memory = golden_input(c, "memory");
    const Tensor out =
        layer.forward(tgt, memory, {.memory_key_padding_mask = golden_input(c, "memory_key_padding_mask")});
    check_output_and_gradients(layer, c, out, {{"tgt", tgt}, {"memory", memory}});
  }
}
