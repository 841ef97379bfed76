// Keys of N(0, 1) entries and queries that are noisy copies of some of them (lesson 08's scoring
// functions side by side): the key most like each query is known, so a score can be right or wrong.
#pragma once

#include <cstdint>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace ladder::data {

struct CopiedKeys {
  Tensor keys;                  // (1,S,D)
  Tensor queries;               // (1,Q,D): query i is key copied[i] plus N(0, noise^2) on each entry
  std::vector<int64_t> copied;  // (Q): distinct keys, in a random order
};

CopiedKeys copied_keys(int64_t keys, int64_t queries, int64_t dim, float noise, Generator& gen);

}  // namespace ladder::data
