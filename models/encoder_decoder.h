// The encoder-decoder interface that lessons 07, 09 and 10 share: encode the source once, then run
// the decoder step by step (decoding: greedy, beam search) or over a whole target at once
// (training with teacher forcing). Seq2Seq, Seq2SeqAttention and the Transformer implement it, so
// decoding (models/decoding.h), BLEU, the loss they train on and the lessons' tables work for all
// three unchanged.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "data/batcher.h"
#include "nn/module.h"

namespace ladder::models {

// What the decoder carries from step to step for a batch of B sequences: the encoder's outputs
// and mask, recurrent hidden states, a key/value cache, ... Each tensor has its batch dim at
// batch_dims[i], so that beam search can reorder and repeat the rows of every one alike.
struct DecoderState {
  std::vector<Tensor> tensors;
  std::vector<int64_t> batch_dims;

  // The same state for the rows `rows` (B' indices into the current batch, repeats allowed):
  // beam search keeps the rows of the surviving hypotheses this way.
  DecoderState select(const std::vector<int64_t>& rows) const;
};

// What the decoder reads in training at each step: the true previous token (teacher forcing), or
// the token it predicted itself at the step before (what it will have when translating).
enum class Feeding { teacher_forcing, own_predictions };

class EncoderDecoder : public nn::Module {
 public:
  // src (B,S) token ids, src_valid (B,S) 1 for real tokens and 0 for padding -> the state the
  // decoder starts from.
  virtual DecoderState encode(const Tensor& src, const Tensor& src_valid) = 0;
  // One decoder step for every row: tokens (B) are the previous outputs (<bos> first) ->
  // logits (B,V) of the next token; `state` moves on by one step.
  virtual Tensor decode_step(DecoderState& state, const Tensor& tokens) = 0;
  // Teacher forcing: the decoder reads the whole target input tgt_in (B,T) (<bos> then the target
  // shifted right) -> logits (B,T,V) of every next token.
  virtual Tensor forward(const Tensor& src, const Tensor& src_valid, const Tensor& tgt_in) = 0;

  // What a model trains on: the mean cross entropy over the target tokens of a batch of pairs
  // (batch.tgt_out (B,T), padding ignored), the decoder fed as `feeding` says.
  Tensor loss(const data::Seq2SeqBatch& batch);
  // The same over a batch given in groups (data::SourceLengthBuckets: one group per source length):
  // the mean over the target tokens of all of them, as if they were one batch.
  Tensor loss(const std::vector<data::Seq2SeqBatch>& groups);
  Feeding feeding = Feeding::teacher_forcing;

 protected:
  using Module::Module;

 private:
  // The decoder reads its own previous prediction at every step (greedy, no gradient through the
  // choice) instead of the true previous token: logits (B,T,V) for the T steps of batch.tgt_in.
  Tensor own_prediction_logits(const data::Seq2SeqBatch& batch);
};

}  // namespace ladder::models
