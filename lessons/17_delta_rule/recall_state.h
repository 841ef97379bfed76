// Lesson 17's part 3, recall against the size of the state (Zoology's figure, Arora et al. 2023):
// each attention kind trained on multi-query recall at several head widths, the pairs growing. A
// head of width D holds a (D,D) state for the delta rule, D (D + 1) for elu+1, (1 + D + D^2)(D + 1)
// for the Taylor map and two rows of D per position for full attention's KV cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run.h"

namespace ladder::lessons {

struct RecallPoint {
  std::string kind;  // "delta"
  int64_t head_dim = 0, pairs = 0;
  int64_t state = 0;  // numbers per head the queries read
  double accuracy = 0;
  int64_t answers = 0;  // the test queries the accuracy counts
};

// The table (a row per kind and width, a column per count of pairs, accuracy with its standard
// error and the state), recall_state.csv, the chart recall_state (accuracy against the state at the
// most pairs, a line per kind) and recall_acc_<kind>_<D>_<pairs> in `summary`.
void report_recall_state(harness::Run& run, const std::vector<RecallPoint>& points, double chance, harness::Summary& summary);

}  // namespace ladder::lessons
