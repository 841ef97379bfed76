// A translation task as lessons 07, 09 and 10 train on it: source/target pairs (the generated date
// task, the generated number task or a pairs file) split into training, validation and test parts,
// tokenized, with the widths decoding needs, and batches padded the way the task pads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/batcher.h"
#include "data/pairs.h"

namespace ladder::data {

struct TranslationTask {
  std::string description;
  PairTokenizers tokenizers;
  std::vector<TextPair> test_text;     // the test pairs as written, for the example table
  std::vector<IdPair> train, val, test;  // as token ids
  int64_t longest_target = 0;          // tokens, over every part: how long decoding may run
  int64_t source_width = 0;            // the longest source, in tokens, over every part
  // How batches pad their sources. The recurrent encoders read padding as input, so a source must
  // be padded alike in every batch for its encoding (and its translation) not to depend on the
  // other sources of its batch. The generated tasks pad every source to source_width (short
  // sources: little is wasted); pairs files are bucketed, each batch holding sources of one length
  // (SourceLengthBuckets: a random batch, split by source length), so that no source is padded at
  // all. Either way beam search of width 1 chooses what greedy decoding chooses.
  bool bucketed = false;
  // Translate with the weights of the lowest validation loss, not the last: a pairs file is small
  // enough to overfit. The generated tasks draw 20,000 fresh pairs and do not.
  bool keep_best = false;
  int64_t dropped = 0;  // pairs longer than the length limit, left out
  std::optional<SourceLengthBuckets> buckets;  // the training pairs, when bucketed

  // `batch` training pairs drawn at random, padded as the task pads: one group, or bucketed one
  // group per source length (a model's loss reads the groups as one batch).
  std::vector<Seq2SeqBatch> training_batch(int64_t batch, Generator& gen) const;
  // Pairs padded as the task pads (bucketed: all sources of one length).
  Seq2SeqBatch padded(const std::vector<IdPair>& pairs) const;
};

// The split pairs as a task: tokenizers from the training part (each side at its level; words seen
// fewer than `min_freq` times in training read as <unk>), every part as ids, the widths. Fails when
// the validation or test part is empty.
struct TaskShape {
  PairLevel source_level = PairLevel::chars, target_level = PairLevel::chars;
  int64_t min_freq = 1;
  bool bucketed = false;
  bool keep_best = false;
};
TranslationTask make_translation_task(PairSplits splits, const TaskShape& shape);

}  // namespace ladder::data
