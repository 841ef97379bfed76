// Lesson 17's part 1, the state as a memory, with no training: random key-value pairs written into
// one (D,D) state by linear attention's additive rule and by the delta rule, then each key read back.
//   additive:  S <- S + k v^T                       (every pair lands on top of the others)
//   delta:     S <- S + k (v - S^T k)^T             (read what S holds for k, write the difference)
//   gated:     S <- alpha S, then the delta rule    (every older pair fades by alpha per write)
// Keys are unit vectors, so S^T k is what the state answers for key k. The error of a read is
// |S^T k - v| / |v|, its root mean square over the pairs (0: every value back; 1: nothing useful).
#pragma once

#include <cstdint>

#include "core/random.h"
#include "harness/run.h"

namespace ladder::lessons {

struct MemorySettings {
  int64_t dim = 64;         // D: numbers per key and per value; the state holds D*D
  int64_t most_pairs = 128;  // the curve runs from 4 pairs to this, in steps of 4
  int64_t draws = 4;        // random sets of pairs averaged at each count
  int64_t sweeps = 16;      // the delta rule run over the same pairs this many times (Kaczmarz's method)
};

// The curves (memory_error: error against the pairs written; memory_age: the gated rule's error
// against a pair's age), the overwrite table, and their figures in `summary`.
void state_as_memory(harness::Run& run, const MemorySettings& settings, Generator& gen, harness::Summary& summary);

}  // namespace ladder::lessons
