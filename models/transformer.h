// The encoder-decoder Transformer of "Attention Is All You Need" (lesson 10) on lesson 07's
// EncoderDecoder interface, so greedy and beam search, BLEU and the date task work unchanged:
//   source:  x = sqrt(d_model) * src_embedding(src) + P[0..S-1]     (P: the sinusoidal table)
//            memory = encoder(x)   (self attention over the real source tokens)
//   target:  y = sqrt(d_model) * tgt_embedding(tgt_in) + P[0..T-1]
//            logits = head(decoder(y, memory))   (causal self attention, then cross attention to memory)
// Pre-LN stacks (norm_first) end with a LayerNorm (encoder.norm, decoder.norm); post-LN stacks end
// normalised already. Submodule names follow torch.nn.Transformer's (encoder.layers.0.self_attn, ...).
//
// decode_step is incremental: each decoder layer's self attention keeps the keys and values of the
// target positions so far (a KV cache, nn::KeyValueState, extended by forward_step as the GPT's),
// and the cross attention's keys and values of the source are projected once, in encode. All of it
// lives in the DecoderState as tensors, batch first, so beam search's select() reorders it with the
// hypotheses.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/encoder_decoder.h"
#include "nn/attention/positional_encoding.h"
#include "nn/attention/transformer_stack.h"
#include "nn/embedding.h"
#include "nn/linear.h"

namespace ladder::models {

struct TransformerConfig {
  int64_t src_vocab = 0, tgt_vocab = 0;
  int64_t d_model = 64;  // the width of every position's vector
  int64_t nhead = 4;     // must divide d_model: each head attends with d_model / nhead features
  int64_t encoder_layers = 2, decoder_layers = 2;
  int64_t dim_feedforward = 256;
  float dropout = 0.1f;  // on the embeddings, the attention weights and every sublayer's output
  bool norm_first = false;  // pre-LN; false: the original post-LN
  nn::FeedForwardActivation activation = nn::FeedForwardActivation::relu;
  int64_t max_len = 256;  // the longest source and target: rows of the sinusoidal table
  // The encoder's self attention (nn/attention/attention_kind.h): full by default, or linear, bigbird, ...
  // The decoder stays full: its causal self attention keeps a KV cache, its cross attention reads the source.
  nn::AttentionSettings encoder_attention;
};

// Throws naming `model` unless every size is positive, nhead divides d_model and dropout is in [0, 1).
void check_config(const char* model, const TransformerConfig& config);

// Every attention's weights per head for one teacher-forced pass, one tensor per layer.
struct TransformerAttentionMaps {
  std::vector<Tensor> encoder;       // (B,H,S,S): encoder self attention
  std::vector<Tensor> decoder_self;  // (B,H,T,T): decoder masked self attention
  std::vector<Tensor> cross;         // (B,H,T,S): decoder cross attention over the source
};

class Transformer : public EncoderDecoder {
 public:
  explicit Transformer(const TransformerConfig& config, Generator& gen = default_generator());

  // src (B,S), src_valid (B,S) 1 real / 0 padding -> state {src_valid (B,S), then per decoder layer:
  // cross keys, cross values (B,H,S,D), self keys, self values (B,H,L,D), empty until the first step}.
  DecoderState encode(const Tensor& src, const Tensor& src_valid) override;
  // tokens (B) -> logits (B,V): one position more, at position L = the cached length.
  Tensor decode_step(DecoderState& state, const Tensor& tokens) override;
  // tgt_in (B,T) -> logits (B,T,V), every position at once under the causal mask.
  Tensor forward(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) override;

  // The weights of every attention while reading tgt_in (the naive path, without a graph).
  TransformerAttentionMaps attention_maps(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in);

  const TransformerConfig& config() const { return config_; }

  std::shared_ptr<nn::Embedding> src_embedding, tgt_embedding;
  std::shared_ptr<nn::SinusoidalPositionalEncoding> positions;
  std::shared_ptr<nn::TransformerEncoder> encoder;
  std::shared_ptr<nn::TransformerDecoder> decoder;
  std::shared_ptr<nn::Linear> head;

 protected:
  std::string describe() const override;

 private:
  // ids (B,T) at positions offset.. -> sqrt(d_model) * embedding(ids) + P[offset..] (B,T,E)
  Tensor embed(nn::Embedding& embedding, const Tensor& ids, int64_t offset);
  // The encoder's output (B,S,E); with `weights`, each layer's self-attention weights appended.
  Tensor encode_memory(const Tensor& src, const Tensor& src_valid, std::vector<Tensor>* weights);
  // The decoder's normalised output (B,T,E) over tgt_in; with `maps`, its weights appended.
  Tensor decode_all(const Tensor& tgt_in, const Tensor& memory, const Tensor& src_valid, TransformerAttentionMaps* maps);
  void check_source(const Tensor& src, const Tensor& src_valid) const;
  TransformerConfig config_;
};

}  // namespace ladder::models
