// The encoder-decoder with Bahdanau attention of lesson 09 (d2l's design): the same GRU encoder as
// Seq2Seq, but the decoder no longer squeezes the source into one vector. Before every step it
// asks which source positions matter now: its previous top-layer state is the query, the encoder's
// outputs are the keys and values, additive attention gives the context, and the decoder reads
// that context beside the previous token. Every step's weights are kept for the attention maps.
#pragma once

#include <memory>

#include "models/seq2seq.h"
#include "nn/attention/scoring_modules.h"

namespace ladder::models {

class Seq2SeqAttention : public EncoderDecoder {
 public:
  explicit Seq2SeqAttention(const Seq2SeqConfig& config, Generator& gen = default_generator());

  // src (B,S), src_valid (B,S) -> state {outputs (B,S,H), valid (B,S), h (layers,B,H), the keys
  // projected for the attention (B,S,H)}; the source is read with its padding in front
  // (pad_on_the_left), and `valid` says where it is.
  DecoderState encode(const Tensor& src, const Tensor& src_valid) override;
  // tokens (B) -> logits (B,V); h moves on one step; last_weights() holds this step's weights.
  Tensor decode_step(DecoderState& state, const Tensor& tokens) override;
  // tgt_in (B,T) -> logits (B,T,V), step by step (each step's query is the previous step's state).
  Tensor forward(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) override;

  // The weights of the last decode_step, (B,S) over the left-aligned source; forward() keeps all
  // of them: (B,T,S).
  const Tensor& last_weights() const { return last_weights_; }
  const Tensor& forward_weights() const { return forward_weights_; }
  const Seq2SeqConfig& config() const { return config_; }

  std::shared_ptr<nn::Embedding> src_embedding, tgt_embedding;
  std::shared_ptr<nn::GRU> encoder, decoder;
  std::shared_ptr<nn::AdditiveAttention> attention;
  std::shared_ptr<nn::Linear> head;

 protected:
  std::string describe() const override;

 private:
  Seq2SeqConfig config_;
  Tensor last_weights_, forward_weights_;
};

}  // namespace ladder::models
