// A character-level recurrent language model: embedding -> RNN/GRU/LSTM -> linear head.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "data/batcher.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/recurrent.h"

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

  // Truncated backpropagation through time: a token stream read window after window
  // (data::ContiguousBatcher), the mean cross entropy of the next token at every position,
  // batch.x (B,T) -> logits (B,T,V) against batch.y (B,T). The recurrent state starts where the
  // previous window's loss left it, and this window's final state is kept, detached, for the next:
  // the gradient stops at the window's start (the "truncated").
  Tensor loss(const data::Batch& batch);
  // The next loss() starts from zeros: for the first window of a pass over the stream.
  void reset_state();
  // The state the next loss() starts from (h, and c for an LSTM; undefined: zeros), taken and put
  // back by a checkpoint so that a resumed run continues mid-stream.
  std::pair<Tensor, Tensor> carried_state() const { return {carried_h_, carried_c_}; }
  void set_carried_state(const Tensor& h, const Tensor& c) { carried_h_ = h, carried_c_ = c; }

  // Feeds `prompt` (ids), then draws `length` tokens one at a time, carrying the state; in eval mode.
  std::vector<int> sample(const std::vector<int>& prompt, int length, Generator& gen, float temperature = 1.0f);

  // Language modelling (sample, loss, stream_nll) needs a model that reads forwards only.
  void check_unidirectional(const char* op) const;

  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::Recurrent> rnn;
  std::shared_ptr<nn::Linear> head;

 private:
  Tensor carried_h_, carried_c_;  // the state the last loss() ended in, detached; undefined: zeros
};

// The mean negative log-likelihood per token over one pass of a stream, state carried across windows;
// measured in eval mode (no dropout), after which the model is back in the mode it was in.
double stream_nll(CharRNN& model, const std::vector<int>& ids, int64_t block);

}  // namespace ladder::models
