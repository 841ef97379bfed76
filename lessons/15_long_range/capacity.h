// Lesson 15's part 4, how many key-value pairs fit a state (Zoology's figure, Arora et al. 2023):
// each attention kind's test accuracy on multi-query recall against the number of pairs, and against
// the size of the state its queries read, in numbers per head (Based's figure, Arora et al. 2024).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run.h"
#include "nn/attention/attention_kind.h"

namespace ladder::lessons {

// What a query of `attention` reads, per head of width D, in a sequence of `length` positions,
// attending both ways or `causal`ly:
//   full       every key and value, 2 T D (grows with the sequence)
//   linear     the (M,D) sum and the M-wide normaliser, M (D + 1) (M the feature map's features)
//   bigbird    the keys and values of the blocks its block lists (causal: those not after it), on
//              average over the queries
//   linformer  the k projected keys and values, 2 k D
//   vq         the keys and values of the blocks it reads exactly (its own and the one before, and
//              both ways the one after too), and per code its row, its value sum and its count, S (2 D + 1)
// 0 for a kind it does not know.
int64_t state_numbers(const nn::AttentionSettings& attention, int64_t length, int64_t head_dim, bool causal);

struct CapacityPoint {
  int64_t pairs = 0, length = 0, state = 0;  // state: state_numbers at that length
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
