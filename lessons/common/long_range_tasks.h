// Lesson 15's part 1: what its tasks look like, printed before any training. ListOps
// (data/listops.h): the rules on a short expression, a test expression, how deep the operators
// nest, the lengths and the answers of the training set. Multi-query associative recall
// (data/mqar.h): a sequence with its two tokens per pair, the same pairs one token each, and where
// the answers are asked.
#pragma once

#include "data/listops.h"
#include "data/mqar.h"

namespace ladder::lessons {

void print_listops(const data::ListOpsOptions& options, const data::ListOpsSplits& splits);
// `two_tokens` and `one_token` hold the same draws (data::make_mqar with one_hop false and true).
void print_mqar(const data::MqarOptions& options, const data::LabelledBatch& two_tokens,
                const data::LabelledBatch& one_token);

}  // namespace ladder::lessons
