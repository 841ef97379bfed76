// A Transformer encoder that answers a class at every position: lesson 15's multi-query associative
// recall (data/mqar.h), where each query is answered where it stands. It is the encoder classifier
// (models/encoder_classifier.h, the same embedding, positions, encoder with any attention kind and
// head) with its head applied to every position instead of one pooled vector:
//   x      = encoder(token_embedding(ids) + positions(0..T-1), padding, causal)    (B,T,E)
//   logits = head(x)                                                                (B,T,num_classes)
// It trains on a data::LabelledBatch whose labels are (B,T): the class asked at each position, or
// data::kNoAnswer where nothing is asked (those positions add nothing to the loss).
#pragma once

#include <memory>
#include <vector>

#include "data/batcher.h"
#include "models/encoder_classifier.h"
#include "nn/module.h"

namespace ladder::models {

class EncoderTagger : public nn::Module {
 public:
  // The config of the classifier it extends; `pooling` is not used.
  explicit EncoderTagger(const EncoderClassifierConfig& config, Generator& gen = default_generator());
  // ids (B,T) token ids, valid (B,T) 1 for real tokens and 0 for padding (undefined: all real)
  // -> logits (B,T,num_classes). With `maps`, also each layer's self-attention weights per head,
  // (B,H,T,T) in layer order (the kinds' implied weights: for drawing, not for training).
  Tensor forward(const Tensor& ids, const Tensor& valid, std::vector<Tensor>* maps = nullptr);
  Tensor forward(const Tensor& ids) override { return forward(ids, Tensor()); }
  // The mean cross entropy over the positions asked (labels (B,T), kNoAnswer elsewhere).
  Tensor loss(const data::LabelledBatch& batch);
  const EncoderClassifierConfig& config() const { return body->config(); }

  std::shared_ptr<EncoderClassifier> body;  // its embedding, positions, encoder and head
};

}  // namespace ladder::models
