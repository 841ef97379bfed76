// The long-range tasks of lessons 15 and 17, drawn and printed before any training (lesson 15's
// part 1). ListOps (data/listops.h):
// the rules on a short expression, a test expression, how deep the operators nest, the lengths and
// the answers of the training set. Multi-query associative recall (data/mqar.h): a sequence, and
// where the answers are asked.
#pragma once

#include <cstdint>
#include <string>

#include "data/batcher.h"
#include "data/listops.h"
#include "data/mqar.h"

namespace ladder::lessons {

struct LongRangeTask {
  std::string name, title;  // "listops", "ListOps"
  data::LabelledBatch train, val, test;
  int64_t vocabulary = 0, classes = 0, length = 0;
  bool tagged = false;  // answered at every asked position (recall) rather than once per sequence (ListOps)
  double chance = 0;    // guessing uniformly
  double majority = 0;  // always answering the training set's most common answer, on the test set
};

// ListOps drawn, with its chance and majority share; printed when `describe`.
LongRangeTask listops_task(const data::ListOpsOptions& options, bool describe);
// Multi-query recall drawn (printed by print_mqar), with its chance and majority share per query.
LongRangeTask recall_task(const data::MqarOptions& options, const std::string& name, const std::string& title);
// Sequence 0 of `task` (drawn by recall_task from `options`) and its answers.
void print_mqar(const std::string& heading, const data::MqarOptions& options, const LongRangeTask& task);

}  // namespace ladder::lessons
