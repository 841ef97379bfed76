#include "models/seq2seq_attention.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

Seq2SeqAttention::Seq2SeqAttention(const Seq2SeqConfig& config, Generator& gen)
    : EncoderDecoder("Seq2SeqAttention"), config_(config) {
  check_config("Seq2SeqAttention", config);
  const nn::RecurrentOptions rnn{.num_layers = config.layers, .dropout = config.layers > 1 ? config.dropout : 0,
                                 .batch_first = true};
  const int64_t H = config.hidden;
  src_embedding = register_module("src_embedding", std::make_shared<nn::Embedding>(config.src_vocab, config.embed, 1.0f, gen));
  encoder = register_module("encoder", std::make_shared<nn::GRU>(config.embed, H, rnn, GRUVariant::classic, gen));
  attention = register_module("attention", std::make_shared<nn::AdditiveAttention>(H, H, H, config.dropout, gen));
  tgt_embedding = register_module("tgt_embedding", std::make_shared<nn::Embedding>(config.tgt_vocab, config.embed, 1.0f, gen));
  decoder = register_module("decoder", std::make_shared<nn::GRU>(config.embed + H, H, rnn, GRUVariant::classic, gen));
  head = register_module("head", std::make_shared<nn::Linear>(H, config.tgt_vocab, nn::LinearOptions{}, gen));
}

DecoderState Seq2SeqAttention::encode(const Tensor& src, const Tensor& src_valid) {
  if (src.dim() != 2 || src_valid.shape() != src.shape())
    fail("Seq2SeqAttention", "encode needs src (B,S) and src_valid of the same shape, got ", shape_str(src.shape()),
         " and ", shape_str(src_valid.shape()));
  const LeftAligned left = pad_on_the_left(src, src_valid);
  const nn::RecurrentOutput enc = encoder->forward((*src_embedding)(left.ids));
  // The keys stay the encoder's outputs at every step: their half of the scores is computed once here.
  return {.tensors = {enc.output, left.valid, enc.h_n, attention->project_keys(enc.output)}, .batch_dims = {0, 0, 1, 0}};
}

Tensor Seq2SeqAttention::decode_step(DecoderState& state, const Tensor& tokens) {
  const Tensor &outputs = state.tensors[0], &valid = state.tensors[1], &h = state.tensors[2], &keys = state.tensors[3];
  const int64_t B = tokens.numel();
  // query: the top layer's state after the previous step (B,1,H)
  const Tensor query = unsqueeze(squeeze(narrow(h, 0, config_.layers - 1, 1), 0), 1);
  const nn::AttentionOutput attended = attention->forward_projected(query, keys, outputs, {.key_padding = valid});
  const Tensor x = concat({(*tgt_embedding)(reshape(tokens, {B, 1})), attended.context}, -1);  // (B,1,E+H)
  const nn::RecurrentOutput step = decoder->forward(x, h);
  state.tensors[2] = step.h_n;
  last_weights_ = reshape(attended.weights, {B, -1}).detach();
  return reshape((*head)(step.output), {B, config_.tgt_vocab});
}

Tensor Seq2SeqAttention::forward(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) {
  if (tgt_in.dim() != 2 || tgt_in.size(0) != src.size(0))
    fail("Seq2SeqAttention", "tgt_in must be (B,T) with the batch of src ", shape_str(src.shape()), ", got ",
         shape_str(tgt_in.shape()));
  DecoderState state = encode(src, src_valid);
  std::vector<Tensor> logits, weights;
  for (int64_t t = 0; t < tgt_in.size(1); ++t) {
    logits.push_back(decode_step(state, squeeze(narrow(tgt_in, 1, t, 1), 1)));
    weights.push_back(last_weights_);
  }
  forward_weights_ = stack(weights, 1);  // (B,T,S)
  return stack(logits, 1);                // (B,T,V)
}

std::string Seq2SeqAttention::describe() const {
  return cat("src_vocab=", config_.src_vocab, ", tgt_vocab=", config_.tgt_vocab, ", embed=", config_.embed,
             ", hidden=", config_.hidden, ", layers=", config_.layers);
}

}  // namespace ladder::models
