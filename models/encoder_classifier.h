// A Transformer encoder that reads a whole sequence and answers with one class: the model of the
// long-range lessons (13's retrieval task, 15's ListOps and associative recall), with any attention
// kind (AttentionSettings), so that kinds compare on the same model and budget.
//   x      = token_embedding(ids) + positions(0..T-1)      learned positions
//   x      = encoder(x, padding, causal)                   pre-LN blocks and a final LayerNorm
//   pooled = pool(x, padding)                              mean, first or last (models/sequence_classifier.h)
//   logits = head(pooled)                                  (B, num_classes)
// Causal (each position sees only those before it, as in a decoder) is for the kinds that attend
// no other way (vq); read such a model at its last real position (Pooling::last), the only one that
// has seen the whole sequence.
#pragma once

#include <cstdint>
#include <memory>

#include "nn/attention/attention_kind.h"
#include "nn/attention/positional_encoding.h"
#include "nn/attention/transformer_stack.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "models/sequence_classifier.h"

namespace ladder::models {

struct EncoderClassifierConfig {
  int64_t vocab_size = 0, num_classes = 0;
  int64_t max_len = 512;  // the longest sequence: positions has this many rows
  int64_t d_model = 64, nhead = 4, num_layers = 2, dim_feedforward = 128;
  float dropout = 0;
  Pooling pooling = Pooling::mean;
  nn::AttentionSettings attention;  // every layer's self attention (layer i gets layer index i)
  bool causal = false;              // every self attention causal: position i sees positions j <= i
};

class EncoderClassifier : public SequenceClassifier {
 public:
  explicit EncoderClassifier(const EncoderClassifierConfig& config, Generator& gen = default_generator());
  // ids (B,T) token ids, valid (B,T) 1 for real tokens and 0 for padding (undefined: all real)
  // -> logits (B,num_classes). Padding is neither attended to nor pooled.
  Tensor forward(const Tensor& ids, const Tensor& valid) override;
  using SequenceClassifier::forward;
  const EncoderClassifierConfig& config() const { return config_; }

  std::shared_ptr<nn::Embedding> token_embedding;
  std::shared_ptr<nn::LearnedPositionalEncoding> positions;
  std::shared_ptr<nn::TransformerEncoder> encoder;
  std::shared_ptr<nn::Linear> head;

 protected:
  std::string describe() const override;

 private:
  EncoderClassifierConfig config_;
};

}  // namespace ladder::models
