#include "models/transformer.h"

#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "nn/attention/full_attention.h"

namespace ladder::models {

namespace {

constexpr size_t kPerLayer = 4;  // state tensors per decoder layer: cross keys, cross values, self keys, self values

// A stack's output through its final LayerNorm, when it has one (pre-LN).
template <class Stack>
Tensor final_norm(Stack& stack, const Tensor& x) {
  return stack.norm ? stack.norm->forward(x) : x;
}

}  // namespace

void check_config(const char* model, const TransformerConfig& config) {
  if (config.src_vocab <= 0 || config.tgt_vocab <= 0 || config.d_model <= 0 || config.nhead <= 0 ||
      config.encoder_layers <= 0 || config.decoder_layers <= 0 || config.dim_feedforward <= 0 || config.max_len <= 0)
    fail(model, "vocabularies, sizes and layer counts must be positive, got src_vocab=", config.src_vocab,
         " tgt_vocab=", config.tgt_vocab, " d_model=", config.d_model, " nhead=", config.nhead,
         " encoder_layers=", config.encoder_layers, " decoder_layers=", config.decoder_layers,
         " dim_feedforward=", config.dim_feedforward, " max_len=", config.max_len);
  if (config.d_model % config.nhead != 0)
    fail(model, "nhead ", config.nhead, " does not divide d_model ", config.d_model,
         "; each head takes d_model / nhead features, so choose nhead dividing d_model");
  if (!(config.dropout >= 0 && config.dropout < 1)) fail(model, "dropout must be in [0, 1), got ", config.dropout);
}

Transformer::Transformer(const TransformerConfig& config, Generator& gen) : EncoderDecoder("Transformer"), config_(config) {
  check_config("Transformer", config);
  const int64_t E = config.d_model;
  // Embeddings start at std 1/sqrt(E), so that sqrt(E) * embedding has unit scale, as the positions.
  const float embed_std = 1.0f / std::sqrt(static_cast<float>(E));
  src_embedding = register_module("src_embedding", std::make_shared<nn::Embedding>(config.src_vocab, E, embed_std, gen));
  tgt_embedding = register_module("tgt_embedding", std::make_shared<nn::Embedding>(config.tgt_vocab, E, embed_std, gen));
  positions = register_module("positions",
                              std::make_shared<nn::SinusoidalPositionalEncoding>(E, config.max_len, config.dropout, gen));
  const nn::TransformerLayerOptions layer{.dim_feedforward = config.dim_feedforward, .dropout = config.dropout,
                                          .activation = config.activation, .norm_first = config.norm_first};
  nn::TransformerLayerOptions encoder_layer = layer;
  encoder_layer.attention = config.encoder_attention;
  encoder_layer.attention.max_length = config.max_len;  // the longest source (Linformer sizes its projections by it)
  encoder = register_module("encoder", std::make_shared<nn::TransformerEncoder>(
                                           E, config.nhead, encoder_layer,
                                           nn::TransformerStackOptions{.num_layers = config.encoder_layers,
                                                                       .final_norm = config.norm_first},
                                           gen));
  decoder = register_module("decoder", std::make_shared<nn::TransformerDecoder>(
                                           E, config.nhead, layer,
                                           nn::TransformerStackOptions{.num_layers = config.decoder_layers,
                                                                       .final_norm = config.norm_first},
                                           gen));
  head = register_module("head", std::make_shared<nn::Linear>(E, config.tgt_vocab, nn::LinearOptions{}, gen));
}

void Transformer::check_source(const Tensor& src, const Tensor& src_valid) const {
  if (src.dim() != 2 || src_valid.shape() != src.shape())
    fail("Transformer", "encode needs src (B,S) and src_valid of the same shape, got ", shape_str(src.shape()), " and ",
         shape_str(src_valid.shape()));
}

Tensor Transformer::embed(nn::Embedding& embedding, const Tensor& ids, int64_t offset) {
  const float scale = std::sqrt(static_cast<float>(config_.d_model));
  return positions->forward(embedding.forward(ids) * scale, offset);  // (B,T,E)
}

Tensor Transformer::encode_memory(const Tensor& src, const Tensor& src_valid, std::vector<Tensor>* weights) {
  check_source(src, src_valid);
  Tensor x = embed(*src_embedding, src, 0);  // (B,S,E)
  for (const auto& layer : encoder->layers) {
    Tensor w;
    x = layer->forward(x, {.src_key_padding_mask = src_valid}, weights ? &w : nullptr);
    if (weights) weights->push_back(w.detach());
  }
  return final_norm(*encoder, x);
}

Tensor Transformer::decode_all(const Tensor& tgt_in, const Tensor& memory, const Tensor& src_valid,
                               TransformerAttentionMaps* maps) {
  if (tgt_in.dim() != 2 || tgt_in.size(0) != memory.size(0))
    fail("Transformer", "tgt_in must be (B,T) with the batch of src (", memory.size(0), " rows), got ",
         shape_str(tgt_in.shape()));
  // Target padding comes after the real tokens, and the causal mask keeps every real position from
  // seeing it: the target needs no padding mask.
  Tensor y = embed(*tgt_embedding, tgt_in, 0);  // (B,T,E)
  for (const auto& layer : decoder->layers) {
    nn::DecoderLayerWeights w;
    y = layer->forward(y, memory, {.memory_key_padding_mask = src_valid, .causal = true}, maps ? &w : nullptr);
    if (maps) maps->decoder_self.push_back(w.self.detach()), maps->cross.push_back(w.cross.detach());
  }
  return final_norm(*decoder, y);
}

Tensor Transformer::forward(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) {
  const Tensor memory = encode_memory(src, src_valid, nullptr);
  return head->forward(decode_all(tgt_in, memory, src_valid, nullptr));  // (B,T,V)
}

DecoderState Transformer::encode(const Tensor& src, const Tensor& src_valid) {
  const Tensor memory = encode_memory(src, src_valid, nullptr);  // (B,S,E)
  DecoderState state{.tensors = {src_valid}, .batch_dims = {0}};
  for (const auto& layer : decoder->layers) {
    const nn::ProjectedMemory cross = layer->multihead_attn->project_memory(memory);  // (B,H,S,D) each
    state.tensors.insert(state.tensors.end(), {cross.keys, cross.values, Tensor(), Tensor()});
    state.batch_dims.insert(state.batch_dims.end(), {0, 0, 0, 0});
  }
  return state;
}

Tensor Transformer::decode_step(DecoderState& state, const Tensor& tokens) {
  const size_t layers = decoder->layers.size();
  if (state.tensors.size() != 1 + kPerLayer * layers)
    fail("Transformer", "decode_step needs the state encode() made (", 1 + kPerLayer * layers, " tensors for ", layers,
         " decoder layers), got ", state.tensors.size(), " tensors");
  const int64_t B = tokens.numel();
  std::vector<Tensor>& s = state.tensors;
  const Tensor& src_valid = s[0];
  const int64_t offset = s[3].defined() ? s[3].size(2) : 0;  // the target positions cached so far
  Tensor y = embed(*tgt_embedding, reshape(tokens, {B, 1}), offset);  // (B,1,E)
  for (size_t l = 0; l < layers; ++l) {
    Tensor* at = &s[1 + kPerLayer * l];
    // The layer's KV cache, its two tensors kept in the state so that select() reorders them.
    nn::KeyValueState self;
    self.keys = at[2], self.values = at[3];
    y = decoder->layers[l]->forward_step(y, self, {.keys = at[0], .values = at[1]}, src_valid);
    at[2] = self.keys, at[3] = self.values;  // (B,H,L+1,D)
  }
  return reshape(head->forward(final_norm(*decoder, y)), {B, config_.tgt_vocab});
}

TransformerAttentionMaps Transformer::attention_maps(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) {
  NoGradGuard no_grad;
  TransformerAttentionMaps maps;
  const Tensor memory = encode_memory(src, src_valid, &maps.encoder);
  decode_all(tgt_in, memory, src_valid, &maps);
  return maps;
}

std::string Transformer::describe() const {
  return cat("src_vocab=", config_.src_vocab, ", tgt_vocab=", config_.tgt_vocab, ", d_model=", config_.d_model,
             ", nhead=", config_.nhead, ", encoder_layers=", config_.encoder_layers,
             ", decoder_layers=", config_.decoder_layers, ", dim_feedforward=", config_.dim_feedforward,
             ", dropout=", config_.dropout, ", norm_first=", config_.norm_first ? "true" : "false");
}

}  // namespace ladder::models
