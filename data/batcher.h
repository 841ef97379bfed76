// Batches for training, one type per task family, which a model's loss(batch) reads: a token
// stream (Batch: random windows, contiguous windows for truncated BPTT, fixed contexts for MLP
// language models), labelled examples (LabelledBatch: points, images, sequences) and padded
// source/target pairs (Seq2SeqBatch).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace ladder::data {

struct Batch {
  Tensor x;  // inputs
  Tensor y;  // targets
  Tensor key_padding_mask;  // (B,T) of x, 1 = a real position, 0 = padding; undefined when every position is real
};

// Random windows from one long stream of ids: x (B,T) = stream[i : i+T], y = stream[i+1 : i+T+1].
class StreamBatcher {
 public:
  StreamBatcher(std::vector<int> ids, int64_t block);
  Batch sample(int64_t batch, Generator& gen) const;
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }

 private:
  std::vector<int> ids_;
  int64_t block_;
};

// Truncated backpropagation through time: the stream cut into `batch` contiguous parts, read
// side by side in consecutive windows of `block` tokens, so that the hidden state at the end of
// one window is the right start for the next (carry it, detached). At the end it starts over
// and says so, so that the state can be reset.
class ContiguousBatcher {
 public:
  ContiguousBatcher(const std::vector<int>& ids, int64_t batch, int64_t block);
  Batch next();                                    // x, y (batch, block), y shifted by one
  bool restarted() const { return restarted_; }    // this batch started the stream again
  int64_t windows() const { return windows_; }     // windows in one pass over the stream
  // The window next() reads next, and moving to one: a resumed run continues where it stopped.
  int64_t position() const { return position_; }
  void seek(int64_t position);

 private:
  std::vector<std::vector<int>> rows_;  // one contiguous part per batch row
  int64_t block_, windows_, position_ = 0;
  bool restarted_ = true;
};

// For an MLP language model: from each sequence (e.g. a word) with its ids, every context of
// `context` ids (padded on the left with <bos>) and the id that follows it (ending with <eos>).
// x (N, context), y (N).
Batch context_windows(const std::vector<std::vector<int>>& sequences, int64_t context);
// A random subset of rows of a Batch.
Batch sample_rows(const Batch& all, int64_t batch, Generator& gen);

// The label of a position where nothing is asked: cross_entropy's default ignore_index, so it adds nothing.
inline constexpr int64_t kNoAnswer = -100;
// The targets of y that are not kNoAnswer: what a loss averages over.
int64_t count_targets(const Tensor& y);

// Labelled examples, one class each: points (N,2), images (N,1,H,W), or sequences of token ids
// (N,T) with a mask of their real positions (and a class per sequence, or per position). What a
// classifier's loss(batch) reads.
struct LabelledBatch {
  Tensor inputs;  // (N, ...)
  Tensor labels;  // (N) class ids, one per example; or (N,T), one per position (data::kNoAnswer where none is asked)
  Tensor valid;   // sequences: (N,T) 1 on real positions, 0 on padding; undefined: every position is real
};
// `batch` examples drawn at random (with replacement), their rows of inputs, labels and valid.
LabelledBatch sample_examples(const LabelledBatch& all, int64_t batch, Generator& gen);

// A source and its target as token ids, without <bos> or <eos>.
using IdPair = std::pair<std::vector<int>, std::vector<int>>;

// Source/target pairs padded to the longest in the batch with <pad> (id 0), at the end of each row.
// S is the longest source (or source_width, when that is longer), T the longest target + 1. A
// fixed source_width for every batch keeps a recurrent encoder, which reads the padding too, from
// encoding a source differently in different batches. The loss skips padding through
// cross_entropy's ignore_index = Tokenizer::kPad: <pad> is never a real target.
struct Seq2SeqBatch {
  Tensor src;       // (B,S) source ids
  Tensor src_mask;  // (B,S) 1 for real tokens, 0 for padding: the key padding mask of attention
  Tensor src_len;   // (B) the number of real source tokens (valid lengths)
  Tensor tgt_in;    // (B,T) <bos> + target: what the decoder reads (teacher forcing)
  Tensor tgt_out;   // (B,T) target + <eos>: what it should predict
  Tensor tgt_mask;  // (B,T) 1 where tgt_out is real (the <eos> included), 0 for padding
};
Seq2SeqBatch pad_pairs(const std::vector<IdPair>& pairs, int64_t source_width = 0);
// `batch` pairs drawn at random (with replacement), padded.
Seq2SeqBatch sample_pairs(const std::vector<IdPair>& pairs, int64_t batch, Generator& gen, int64_t source_width = 0);

// Bucketing: batches whose sources all have one length, so that no source is padded and no step of
// the encoder goes to padding. A recurrent encoder reads padding as input, so padding would make a
// source's encoding depend on what else is in its batch; without it a source is encoded the same
// in any batch. (Targets of one batch still differ in length and are padded at their end, which
// the decoder's loss ignores.)
class SourceLengthBuckets {
 public:
  // Throws ladder::Error when there are no pairs, or a source is empty.
  explicit SourceLengthBuckets(std::vector<IdPair> pairs);
  // `batch` pairs drawn at random (with replacement) as sample_pairs draws them, then split by
  // source length: one batch per length met, shortest first, none padded. Together they are one
  // random batch, of every length and kind of pair (a training step reads them as one:
  // EncoderDecoder::loss), not a batch of one length, whose pairs are all alike.
  std::vector<Seq2SeqBatch> sample(int64_t batch, Generator& gen) const;

 private:
  std::vector<IdPair> pairs_;
};

// The indices of `pairs` in batches of at most `batch` pairs of one source length: every length in
// turn from the shortest, the pairs of a length in their order. For scoring without a graph, where
// every pair is read once.
std::vector<std::vector<size_t>> batches_by_source_length(const std::vector<IdPair>& pairs, size_t batch);

}  // namespace ladder::data
