// Block-sparse attention patterns drawn as the BigBird paper draws them (lesson 13): a square of
// tiles, one per (query block, key block), query block 0 at the top and key block 0 on the left,
// each tile the pattern lists coloured by why (global orange, window blue, random green) and the
// others left white; several patterns side by side under one title, a legend along the bottom.
#pragma once

#include <string>
#include <vector>

#include "nn/attention/bigbird_pattern.h"

namespace ladder::lessons {

struct PatternPanel {
  nn::BlockPattern pattern;
  std::string title;  // above its square: "causal"
};

// Writes <stem>.png and <stem>.svg and returns their paths; an empty list throws.
std::vector<std::string> save_block_patterns(const std::string& stem, const std::string& title,
                                             const std::vector<PatternPanel>& panels);

}  // namespace ladder::lessons
