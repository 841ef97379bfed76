// BigBird's block pattern (Zaheer et al. 2020, the ITC variant): which key blocks each query block
// attends to. The sequence is cut into blocks of b positions; query block i sees
//   global blocks  the first and the last block, and every block when i itself is one of them;
//   the window     blocks i-1, i, i+1;
//   random blocks  r more, drawn per (seed, layer, head, query block) from the blocks not already
//                  listed: each head of a layer draws its own, as the Hugging Face implementation does.
// Causal: only blocks <= i; block 0 is the one global block, the window is i-1 and i, the random
// blocks come from the past, and inside block i positions see only earlier ones (the kernel's job).
// When fewer than r blocks are left to draw from, a query block gets as many as there are (short
// sequences then become full attention: every block listed).
// The variants the lesson compares are settings of the same pattern: random_blocks = 0 is
// window + global, and global_blocks = false as well is the sliding window alone (then the first and
// last blocks are ordinary query blocks with a window like any other).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace ladder::nn {

struct BigBirdSettings {
  int64_t block = 64;         // b, positions per block
  int64_t random_blocks = 3;  // r per query block
  bool global_blocks = true;  // false: no global blocks, only the window (and the random blocks)
  bool causal = false;
  uint64_t seed = 0;  // with the layer and the head: the same three give the same random blocks
  int64_t layer = 0;
  // true: every head of a layer draws its own random blocks; false: the heads share head 0's.
  bool per_head = true;
  int64_t head = 0;  // the head whose pattern bigbird_pattern draws
};

enum class BlockRole { global, window, random };

struct BlockPattern {
  int64_t block = 0, blocks = 0;  // b, and how many blocks cover the sequence (the last may be short)
  bool causal = false;            // inside a block, query i sees keys j <= i only
  // keys[i]: the key blocks query block i sees, in increasing order, each once; roles[i][n] says why
  // keys[i][n] is there (global first, then window, then random, when a block has several reasons).
  std::vector<std::vector<int64_t>> keys;
  std::vector<std::vector<BlockRole>> roles;
  int64_t visible_blocks() const;  // the sum of keys[i].size(): the work, in (b,b) tiles
};

// The pattern of a sequence of `length` positions (length >= 1), for the head settings.head.
BlockPattern bigbird_pattern(int64_t length, const BigBirdSettings& settings);
// One pattern per head of a layer of `heads` heads: head h's own draw, or head 0's for all when
// the heads share (per_head false).
std::vector<BlockPattern> bigbird_head_patterns(int64_t length, int64_t heads, const BigBirdSettings& settings);

// The (T,T) matrix of 0 and 1 the pattern means, position by position (1: query i sees key j),
// including the causal mask inside blocks: for tests and for drawing.
Tensor pattern_mask(const BlockPattern& pattern, int64_t length);

}  // namespace ladder::nn
