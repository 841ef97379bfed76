// Lesson 15's part 4, how many key-value pairs fit a state (Zoology's figure, Arora et al. 2023):
// each attention kind's test accuracy on multi-query recall against the number of pairs, and against
// the size of the state its queries read, in numbers per head (Based's figure, Arora et al. 2024).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run.h"

namespace ladder::lessons {

struct CapacityPoint {
  int64_t pairs = 0, length = 0, state = 0;  // state: the kind's state_numbers at that length
  double accuracy = 0;
  int64_t answers = 0;  // the test queries the accuracy counts
};

struct KindCapacity {
  std::string name;  // "linear_elu"
  std::vector<CapacityPoint> points;  // by pairs, increasing
};

// The table (accuracy with its standard error, a row per kind, a column per count of pairs),
// capacity.csv, the charts recall_pairs (accuracy against pairs, a line per kind, chance dashed) and
// recall_state (accuracy against the state, a dot per kind and count), and recall_acc_<kind>_<pairs>
// in `summary`.
void report_capacity(harness::Run& run, const std::vector<KindCapacity>& kinds, double chance, harness::Summary& summary);

}  // namespace ladder::lessons
