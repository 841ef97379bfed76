// The patterns lesson 13 trains on its retrieval task: full attention, and BigBird's pattern with
// parts of it taken away (the window alone, window + global, all three). Each BigBird row can also
// run with the question moved off the global blocks: a block of padding after the question makes
// the question's block an ordinary one, so in one layer it reaches a far key only through a random
// block (or a path through a global block, which needs a second layer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/batcher.h"
#include "nn/attention/attention_kind.h"

namespace ladder::lessons {

struct PatternVariant {
  std::string name, label;  // the name goes into file, metric and --patterns names, the label into tables
  bool bigbird = false, global = false, random = false;
  bool question_inside = false;  // a block of padding after the question: its block is not the last, global one
};

// full, window, window_global, bigbird, window_global_mid, bigbird_mid, in the order of the table.
const std::vector<PatternVariant>& pattern_variants();
std::vector<std::string> pattern_variant_names();
const PatternVariant& pattern_variant(const std::string& name);  // one of pattern_variant_names()

// The attention the variant trains with, blocks of `block`, `random` random blocks when it has them.
nn::AttentionSettings pattern_attention(const PatternVariant& v, int64_t block, int64_t random, uint64_t seed);

// Padding positions to add after the question so that it no longer sits in the last block: the
// rest of its block and one whole block more. 0 when the variant keeps the question last.
int64_t padding_after_question(const PatternVariant& v, int64_t length, int64_t block);

// examples (inputs (N,T), labels (N)) with `padding` positions of padding after each row: inputs
// (N,T+padding) with id 0 there and valid 0 there, 1 on the T real positions; padding 0: the
// examples as they are.
data::LabelledBatch pad_after(const data::LabelledBatch& examples, int64_t padding);

}  // namespace ladder::lessons
