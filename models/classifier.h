// A classifier of labelled examples: any network from an example to class scores (an MLP on points
// or pixels, the CNN, an RNN that reads a sequence), trained on a data::LabelledBatch by the cross
// entropy of those scores against the labels.
#pragma once

#include <memory>

#include "data/batcher.h"
#include "nn/module.h"

namespace ladder::models {

class Classifier : public nn::Module {
 public:
  // net: examples (N, ...) -> logits (N, classes): nn::mlp, glyph_cnn, ManyToOne, ...
  explicit Classifier(std::shared_ptr<nn::Module> net);
  Tensor forward(const Tensor& inputs) override;  // (N, ...) -> logits (N, classes)
  // The mean cross entropy of forward(batch.inputs) against batch.labels (N).
  Tensor loss(const data::LabelledBatch& batch);

  std::shared_ptr<nn::Module> net;
};

}  // namespace ladder::models
