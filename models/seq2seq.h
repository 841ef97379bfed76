// The RNN encoder-decoder of lesson 07 (d2l's design): an embedding and a multi-layer GRU read the
// source; the decoder GRU starts from the encoder's final states and reads, at every step, the
// previous target token together with the context, the encoder's last top-layer state. Everything
// the decoder knows about the source passes through that one fixed-size vector: the bottleneck
// that attention (lesson 09) removes.
#pragma once

#include <memory>

#include "models/encoder_decoder.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/recurrent.h"

namespace ladder::models {

struct Seq2SeqConfig {
  int64_t src_vocab = 0, tgt_vocab = 0;
  int64_t embed = 32;
  int64_t hidden = 64;
  int64_t layers = 2;
  float dropout = 0;  // between the GRU layers, in training
};

class Seq2Seq : public EncoderDecoder {
 public:
  explicit Seq2Seq(const Seq2SeqConfig& config, Generator& gen = default_generator());

  // src (B,S), src_valid (B,S) 1 real / 0 padding -> state {h (layers,B,H), context (B,H)}.
  DecoderState encode(const Tensor& src, const Tensor& src_valid) override;
  // tokens (B) -> logits (B,V); h moves on one step.
  Tensor decode_step(DecoderState& state, const Tensor& tokens) override;
  // tgt_in (B,T) -> logits (B,T,V), every step reading the true previous token (teacher forcing).
  Tensor forward(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) override;

  const Seq2SeqConfig& config() const { return config_; }

  std::shared_ptr<nn::Embedding> src_embedding, tgt_embedding;
  std::shared_ptr<nn::GRU> encoder, decoder;
  std::shared_ptr<nn::Linear> head;

 protected:
  std::string describe() const override;

 private:
  // The decoder over tgt (B,T) from states h (layers,B,H) with the context (B,H) beside every input.
  nn::RecurrentOutput decode(const Tensor& tgt, const Tensor& h, const Tensor& context);
  Seq2SeqConfig config_;
};

// The source with every row's padding moved to the front: src (B,S), src_valid (B,S) -> ids (B,S)
// and their valid mask (B,S). A recurrent encoder then reads its real tokens last, so its final
// state is not washed out by padding (the recurrent layers have no mask).
// Throws naming `model` unless every vocabulary and size of `config` is positive.
void check_config(const char* model, const Seq2SeqConfig& config);

struct LeftAligned {
  Tensor ids, valid;
};
LeftAligned pad_on_the_left(const Tensor& src, const Tensor& src_valid);

}  // namespace ladder::models
