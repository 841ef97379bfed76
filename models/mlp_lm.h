// The MLP language model of Bengio et al. (2003): embed each of the last n tokens, concatenate,
// one tanh hidden layer, and a softmax over the vocabulary for the next token.
#pragma once

#include <memory>
#include <vector>

#include "data/batcher.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace ladder::models {

class MLPLanguageModel : public nn::Module {
 public:
  MLPLanguageModel(int64_t vocab, int64_t context, int64_t embed, int64_t hidden, Generator& gen = default_generator());
  // contexts (B, context) token ids -> logits (B, vocab) for the token that follows each.
  Tensor forward(const Tensor& contexts) override;
  // The mean cross entropy of the next token: batch.x (B, context) -> forward -> against batch.y (B).
  Tensor loss(const data::Batch& batch);
  int64_t context() const { return context_; }

  // Draws tokens after `context` <bos> until <eos> (or max_length); returns them without <eos>.
  std::vector<int> sample(Generator& gen, int max_length = 60, float temperature = 1.0f);

  std::shared_ptr<nn::Embedding> embedding;  // C: (vocab, embed)
  std::shared_ptr<nn::Linear> hidden;        // (context * embed) -> hidden, then tanh
  std::shared_ptr<nn::Linear> output;        // hidden -> vocab

 private:
  int64_t context_;
};

}  // namespace ladder::models
