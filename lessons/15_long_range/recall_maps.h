// Lesson 15's part 5, the circuit that solves multi-query recall: each layer's attention weights on
// one test sequence, its heads side by side, rows the queries and columns the keys, each labelled
// with its token. Two tokens per pair, the first layer's weights sit one position back of the
// diagonal at the values (each value reads its key) and the second's at the queries' own keys' values.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"
#include "harness/run.h"

namespace ladder::lessons {

// maps: a (B,H,T,T) tensor per layer (models::EncoderTagger::forward's); words: sequence 0's T
// tokens as text; kind: the attention kind's name. Writes recall_maps_<kind>_layer<L> for each layer,
// heads left to right.
void save_recall_maps(harness::Run& run, const std::vector<Tensor>& maps, const std::vector<std::string>& words,
                      const std::string& kind);

}  // namespace ladder::lessons
