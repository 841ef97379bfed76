// Lesson 05's N-vs-1 task: which symbol occurs most often in a sequence? A model must read the
// whole sequence before it can answer, and answers once.
#pragma once

#include <cstdint>

#include "core/random.h"
#include "data/batcher.h"

namespace ladder::data {

// n sequences of `length` symbols drawn uniformly from 0..symbols-1, inputs (n, length), each
// labelled with its most frequent symbol (n). A sequence in which two symbols occur equally often
// is drawn again, so that every answer is clear.
LabelledBatch most_frequent_symbol(int64_t n, int64_t length, int64_t symbols, Generator& gen);

}  // namespace ladder::data
