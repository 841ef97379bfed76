// What the long-range lessons train (13 and 15): a model that reads a sequence of token ids, with a
// mask of its real positions, and answers one class for the whole sequence. The encoder classifier
// (models/encoder_classifier.h) and the LSTM baseline (models/lstm_classifier.h) are two; the
// lessons' training loops take either through loss(batch). Both turn their (B,T,E) states
// into one vector per sequence by the same pooling:
//   mean   the mean over the real positions
//   first  the state at position 0 (a [CLS] token put first)
//   last   the state at the last real position (a question put last)
#pragma once

#include "core/tensor.h"
#include "data/batcher.h"
#include "nn/module.h"

namespace ladder::models {

enum class Pooling { mean, first, last };
const char* pooling_name(Pooling pooling);  // "mean", "first", "last"

// x (B,T,E), valid (B,T) 1 for real positions and 0 for padding (undefined: all real) -> (B,E).
// Padding is never pooled.
Tensor pool(const Tensor& x, const Tensor& valid, Pooling pooling);

class SequenceClassifier : public nn::Module {
 public:
  // ids (B,T) token ids, valid (B,T) as for pool -> logits (B,num_classes).
  virtual Tensor forward(const Tensor& ids, const Tensor& valid) = 0;
  Tensor forward(const Tensor& ids) override { return forward(ids, Tensor()); }
  // What it trains on: the mean cross entropy of forward(batch.inputs (B,T), batch.valid) against
  // batch.labels (B), one class per sequence.
  Tensor loss(const data::LabelledBatch& batch);

 protected:
  using nn::Module::Module;
  // Fails, naming the model `type_name()`, unless ids is (B,T) and valid undefined or of its shape.
  void check_inputs(const Tensor& ids, const Tensor& valid) const;
};

}  // namespace ladder::models
