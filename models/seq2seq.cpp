#include "models/seq2seq.h"

#include "core/error.h"
#include "core/ops.h"
#include "data/tokenizer.h"

namespace ladder::models {

void check_config(const char* model, const Seq2SeqConfig& config) {
  if (config.src_vocab <= 0 || config.tgt_vocab <= 0 || config.embed <= 0 || config.hidden <= 0 || config.layers <= 0)
    fail(model, "vocabularies and sizes must be positive, got src_vocab=", config.src_vocab,
         " tgt_vocab=", config.tgt_vocab, " embed=", config.embed, " hidden=", config.hidden, " layers=", config.layers);
}

Seq2Seq::Seq2Seq(const Seq2SeqConfig& config, Generator& gen) : EncoderDecoder("Seq2Seq"), config_(config) {
  check_config("Seq2Seq", config);
  const nn::RecurrentOptions rnn{.num_layers = config.layers, .dropout = config.layers > 1 ? config.dropout : 0,
                                 .batch_first = true};
  src_embedding = register_module("src_embedding", std::make_shared<nn::Embedding>(config.src_vocab, config.embed, 1.0f, gen));
  encoder = register_module("encoder", std::make_shared<nn::GRU>(config.embed, config.hidden, rnn, GRUVariant::classic, gen));
  tgt_embedding = register_module("tgt_embedding", std::make_shared<nn::Embedding>(config.tgt_vocab, config.embed, 1.0f, gen));
  decoder = register_module("decoder",
                            std::make_shared<nn::GRU>(config.embed + config.hidden, config.hidden, rnn, GRUVariant::classic, gen));
  head = register_module("head", std::make_shared<nn::Linear>(config.hidden, config.tgt_vocab, nn::LinearOptions{}, gen));
}

LeftAligned pad_on_the_left(const Tensor& src, const Tensor& src_valid) {
  const int64_t B = src.size(0), S = src.size(1);
  LeftAligned out{full({B, S}, static_cast<float>(data::Tokenizer::kPad)), zeros({B, S})};
  for (int64_t b = 0; b < B; ++b) {
    int64_t length = 0;
    for (int64_t s = 0; s < S; ++s) length += src_valid.data()[b * S + s] != 0;
    int64_t at = S - length;
    for (int64_t s = 0; s < S; ++s)
      if (src_valid.data()[b * S + s] != 0) {
        out.valid.data()[b * S + at] = 1;
        out.ids.data()[b * S + at++] = src.data()[b * S + s];
      }
  }
  return out;
}

DecoderState Seq2Seq::encode(const Tensor& src, const Tensor& src_valid) {
  if (src.dim() != 2 || src_valid.shape() != src.shape())
    fail("Seq2Seq", "encode needs src (B,S) and src_valid of the same shape, got ", shape_str(src.shape()), " and ",
         shape_str(src_valid.shape()));
  const nn::RecurrentOutput enc = encoder->forward((*src_embedding)(pad_on_the_left(src, src_valid).ids));
  const Tensor context = squeeze(narrow(enc.h_n, 0, config_.layers - 1, 1), 0);  // the top layer's last state
  return {.tensors = {enc.h_n, context}, .batch_dims = {1, 0}};
}

nn::RecurrentOutput Seq2Seq::decode(const Tensor& tgt, const Tensor& h, const Tensor& context) {
  const int64_t B = tgt.size(0), T = tgt.size(1);
  const Tensor embedded = (*tgt_embedding)(tgt);                                       // (B,T,E)
  const Tensor repeated = expand(unsqueeze(context, 1), {B, T, config_.hidden});       // (B,T,H)
  return decoder->forward(concat({embedded, repeated}, -1), h);                        // output (B,T,H)
}

Tensor Seq2Seq::decode_step(DecoderState& state, const Tensor& tokens) {
  const nn::RecurrentOutput step = decode(reshape(tokens, {-1, 1}), state.tensors[0], state.tensors[1]);
  state.tensors[0] = step.h_n;
  return reshape((*head)(step.output), {tokens.numel(), config_.tgt_vocab});
}

Tensor Seq2Seq::forward(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) {
  if (tgt_in.dim() != 2 || tgt_in.size(0) != src.size(0))
    fail("Seq2Seq", "tgt_in must be (B,T) with the batch of src ", shape_str(src.shape()), ", got ",
         shape_str(tgt_in.shape()));
  const DecoderState state = encode(src, src_valid);
  return (*head)(decode(tgt_in, state.tensors[0], state.tensors[1]).output);
}

std::string Seq2Seq::describe() const {
  return cat("src_vocab=", config_.src_vocab, ", tgt_vocab=", config_.tgt_vocab, ", embed=", config_.embed,
             ", hidden=", config_.hidden, ", layers=", config_.layers);
}

}  // namespace ladder::models
