// A character-level recurrent language model: embedding -> RNN/GRU/LSTM -> linear head.
#pragma once

#include <memory>
#include <vector>

#include "data/batcher.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/recurrent.h"
#include "optim/optimizer.h"

namespace ladder::models {

class CharRNN : public nn::Module {
 public:
  CharRNN(int64_t vocab, int64_t embed, int64_t hidden, nn::CellKind cell, nn::RecurrentOptions options = {},
          Generator& gen = default_generator());

  struct Output {
    Tensor logits;               // (B,T,V): the scores of the token after each position
    nn::RecurrentOutput states;  // h_n (and c_n) to carry into the next window
  };
  // ids (B,T); h0/c0 as for nn::Recurrent (undefined: zeros).
  Output forward(const Tensor& ids, const Tensor& h0 = {}, const Tensor& c0 = {});

  // Feeds `prompt` (ids), then draws `length` tokens one at a time, carrying the state; in eval mode.
  std::vector<int> sample(const std::vector<int>& prompt, int length, Generator& gen, float temperature = 1.0f);

  // Language modelling (sample, TBPTT, stream_nll) needs a model that reads forwards only.
  void check_unidirectional(const char* op) const;

  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::Recurrent> rnn;
  std::shared_ptr<nn::Linear> head;
};

// Truncated backpropagation through time over one token stream: `batch` contiguous parts read in
// windows of `block`, the state carried (detached) from each window to the next.
class TBPTT {
 public:
  TBPTT(const std::vector<int>& ids, int64_t batch, int64_t block) : batcher_(ids, batch, block) {}
  struct Result {
    double loss, grad_norm;  // the norm before clipping
  };
  // One window: forward, cross entropy, backward, clip to `clip` (0: no clipping), step.
  Result step(CharRNN& model, optim::Optimizer& optimizer, float clip);

 private:
  data::ContiguousBatcher batcher_;
  Tensor h_, c_;
};

// The mean negative log-likelihood per token over one pass of a stream, state carried across windows;
// measured in eval mode (no dropout), after which the model is back in the mode it was in.
double stream_nll(CharRNN& model, const std::vector<int>& ids, int64_t block);

}  // namespace ladder::models
