// The long-range lessons' baseline without attention: an embedding, one LSTM layer over the
// sequence (nn/recurrent.h), its outputs pooled (models/sequence_classifier.h) and a linear head.
//   h      = LSTM(token_embedding(ids))     (B,T,width), left to right
//   logits = head(pool(h, valid))           (B,num_classes)
// The LSTM reads the padding too (it has no mask), but a padding position comes after every real
// one, so no real position's state depends on it, and pooling leaves it out.
#pragma once

#include <cstdint>
#include <memory>

#include "core/random.h"
#include "models/sequence_classifier.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/recurrent.h"

namespace ladder::models {

struct LstmClassifierConfig {
  int64_t vocab_size = 0, num_classes = 0;
  int64_t width = 64;  // the embedding and the LSTM's hidden state
  Pooling pooling = Pooling::mean;
};

class LstmClassifier : public SequenceClassifier {
 public:
  explicit LstmClassifier(const LstmClassifierConfig& config, Generator& gen = default_generator());
  // ids (B,T) token ids, valid (B,T) 1 for real tokens and 0 for padding after them (undefined:
  // all real) -> logits (B,num_classes).
  Tensor forward(const Tensor& ids, const Tensor& valid) override;
  using SequenceClassifier::forward;

  std::shared_ptr<nn::Embedding> token_embedding;
  std::shared_ptr<nn::LSTM> lstm;
  std::shared_ptr<nn::Linear> head;

 protected:
  std::string describe() const override;

 private:
  LstmClassifierConfig config_;
};

}  // namespace ladder::models
