#include "nn/attention/transformer_layer.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

TransformerLayer::TransformerLayer(const char* type_name, int64_t d_model, int64_t nhead,
                                   const TransformerLayerOptions& options)
    : Module(type_name), options_(options), d_model_(d_model), nhead_(nhead) {
  if (d_model <= 0 || nhead <= 0 || options.dim_feedforward <= 0)
    fail(type_name, "d_model, nhead and dim_feedforward must be positive, got ", d_model, ", ", nhead, ", ",
         options.dim_feedforward);
  if (!(options.dropout >= 0 && options.dropout < 1))
    fail(type_name, "dropout must be in [0, 1), got ", options.dropout);
}

void TransformerLayer::add_feed_forward(Generator& gen) {
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model_, options_.dim_feedforward, LinearOptions{}, gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(options_.dropout, gen));
  linear2 = register_module("linear2", std::make_shared<Linear>(options_.dim_feedforward, d_model_, LinearOptions{}, gen));
}

Tensor TransformerLayer::feed_forward(const Tensor& x) {
  const Tensor hidden = linear1->forward(x);  // (B,T,F)
  const Tensor active = options_.activation == FeedForwardActivation::relu ? relu(hidden) : gelu(hidden);
  return linear2->forward(dropout->forward(active));
}

Tensor TransformerLayer::sublayer_input(const Tensor& x, LayerNorm& norm) const {
  return options_.norm_first ? norm.forward(x) : x;
}

Tensor TransformerLayer::residual_output(const Tensor& x, const Tensor& f_out, LayerNorm& norm, Dropout& drop) const {
  const Tensor sum = x + drop.forward(f_out);
  return options_.norm_first ? sum : norm.forward(sum);
}

Tensor TransformerLayer::feed_forward_step(const Tensor& x, LayerNorm& norm, Dropout& drop) {
  return residual_output(x, feed_forward(sublayer_input(x, norm)), norm, drop);
}

std::string TransformerLayer::describe() const {
  return cat("d_model=", d_model_, ", nhead=", nhead_, ", dim_feedforward=", options_.dim_feedforward,
             ", dropout=", options_.dropout, ", activation=",
             options_.activation == FeedForwardActivation::relu ? "relu" : "gelu",
             ", norm_first=", options_.norm_first ? "true" : "false");
}

namespace {

// Self attention takes the options' rotary and attention kind; cross attention (queries and keys
// from different sequences) is full attention without rotary.
std::shared_ptr<MultiheadAttention> attention(int64_t d_model, int64_t nhead, const TransformerLayerOptions& options,
                                              bool self_attention, Generator& gen) {
  return std::make_shared<MultiheadAttention>(
      d_model, nhead,
      MultiheadAttentionOptions{.dropout = options.dropout,
                                .rotary = self_attention && options.rotary,
                                .attention = self_attention ? options.attention : AttentionSettings{}},
      gen);
}

}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerLayerOptions options,
                                                 Generator& gen)
    : TransformerLayer("TransformerEncoderLayer", d_model, nhead, options) {
  self_attn = register_module("self_attn", attention(d_model, nhead, options, /*self_attention=*/true, gen));
  add_feed_forward(gen);
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(Shape{d_model}, options.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(Shape{d_model}, options.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(options.dropout, gen));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(options.dropout, gen));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const EncoderMasks& masks, Tensor* weights) {
  const MultiheadAttentionCall call{.key_padding_mask = masks.src_key_padding_mask, .causal = masks.causal,
                                    .weights = weights ? AttentionWeights::per_head : AttentionWeights::none};
  const Tensor h = sublayer_input(src, *norm1);
  const MultiheadAttentionOutput attended = self_attn->forward(h, h, h, call);
  if (weights) *weights = attended.weights;
  const Tensor x = residual_output(src, attended.output, *norm1, *dropout1);
  return feed_forward_step(x, *norm2, *dropout2);
}

TransformerDecoderLayer::TransformerDecoderLayer(int64_t d_model, int64_t nhead, TransformerLayerOptions options,
                                                 Generator& gen)
    : TransformerLayer("TransformerDecoderLayer", d_model, nhead, options) {
  self_attn = register_module("self_attn", attention(d_model, nhead, options, /*self_attention=*/true, gen));
  multihead_attn = register_module("multihead_attn", attention(d_model, nhead, options, /*self_attention=*/false, gen));
  add_feed_forward(gen);
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(Shape{d_model}, options.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(Shape{d_model}, options.layer_norm_eps));
  norm3 = register_module("norm3", std::make_shared<LayerNorm>(Shape{d_model}, options.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(options.dropout, gen));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(options.dropout, gen));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(options.dropout, gen));
}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory, const DecoderMasks& masks,
                                        DecoderLayerWeights* weights) {
  const AttentionWeights asked = weights ? AttentionWeights::per_head : AttentionWeights::none;
  const MultiheadAttentionCall self{.key_padding_mask = masks.tgt_key_padding_mask, .causal = masks.causal, .weights = asked};
  const MultiheadAttentionCall cross{.key_padding_mask = masks.memory_key_padding_mask, .weights = asked};
  const Tensor h = sublayer_input(tgt, *norm1);
  const MultiheadAttentionOutput attended = self_attn->forward(h, h, h, self);
  const Tensor x = residual_output(tgt, attended.output, *norm1, *dropout1);
  const Tensor hx = sublayer_input(x, *norm2);
  const MultiheadAttentionOutput crossed = multihead_attn->forward(hx, memory, memory, cross);
  const Tensor y = residual_output(x, crossed.output, *norm2, *dropout2);
  if (weights) *weights = {.self = attended.weights, .cross = crossed.weights};
  return feed_forward_step(y, *norm3, *dropout3);
}

Tensor TransformerDecoderLayer::forward_step(const Tensor& x, AttentionState& self_state, const ProjectedMemory& memory,
                                             const Tensor& memory_key_padding_mask) {
  const Tensor attended = self_attn->forward_step(sublayer_input(x, *norm1), self_state);
  const Tensor y = residual_output(x, attended, *norm1, *dropout1);
  const Tensor crossed =
      multihead_attn->forward_memory(sublayer_input(y, *norm2), memory, {.key_padding_mask = memory_key_padding_mask}).output;
  const Tensor z = residual_output(y, crossed, *norm2, *dropout2);
  return feed_forward_step(z, *norm3, *dropout3);
}

}  // namespace ladder::nn
