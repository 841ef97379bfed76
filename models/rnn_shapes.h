// Lesson 05's small recurrent models for the two shapes of problem beside N-vs-N language modelling:
//   ManyToOne (N-vs-1): an RNN reads a whole sequence, and only its final state decides the class
//                       (it trains as a models::Classifier);
//   OneToMany (1-vs-N): a class becomes the RNN's first state, from which it writes a sequence.
#pragma once

#include <memory>
#include <vector>

#include "data/batcher.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/recurrent.h"

namespace ladder::models {

class ManyToOne : public nn::Module {
 public:
  ManyToOne(int64_t vocab, int64_t embed_size, int64_t hidden, int64_t classes, Generator& gen = default_generator());
  // ids (B,T) -> logits (B,classes) from the last state h_T alone.
  Tensor forward(const Tensor& ids) override;

  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::RNN> rnn;
  std::shared_ptr<nn::Linear> head;
};

class OneToMany : public nn::Module {
 public:
  OneToMany(int64_t classes, int64_t vocab, int64_t embed_size, int64_t hidden, Generator& gen = default_generator());
  // classes (B), tokens (B,T) read with teacher forcing -> logits (B,T,V) of each next token.
  Tensor forward(const Tensor& classes, const Tensor& tokens);
  // Pairs (class, sequence): batch.src (B,1) the classes, batch.tgt_in (B,T) <bos> + sequence, and
  // the mean cross entropy against batch.tgt_out (B,T) (sequence + <eos>), padding ignored.
  Tensor loss(const data::Seq2SeqBatch& batch);
  // Greedy writing: feeds back the most likely token until <eos> or max_length tokens; without <eos>.
  std::vector<int> write(int cls, int max_length);

  std::shared_ptr<nn::Embedding> start;  // each class's first state h0, through tanh: (classes, hidden)
  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::RNN> rnn;
  std::shared_ptr<nn::Linear> head;

 private:
  Tensor first_state(const Tensor& classes);  // classes (B) -> h0 (1,B,H)
};

}  // namespace ladder::models
