#include "nn/attention/bigbird_pattern.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/random.h"
#include "nn/attention/layer_seed.h"

namespace ladder::nn {

int64_t BlockPattern::visible_blocks() const {
  int64_t n = 0;
  for (const auto& row : keys) n += static_cast<int64_t>(row.size());
  return n;
}

BlockPattern bigbird_pattern(int64_t length, const BigBirdSettings& s) {
  const char* op = "bigbird_pattern";
  if (length < 1) fail(op, "the sequence must have at least one position, got ", length);
  if (s.block < 1) fail(op, "the block size must be >= 1, got ", s.block);
  if (s.random_blocks < 0) fail(op, "the number of random blocks must be >= 0, got ", s.random_blocks);
  if (s.head < 0) fail(op, "the head must be >= 0, got ", s.head);
  BlockPattern p;
  p.block = s.block;
  p.causal = s.causal;
  p.blocks = (length + s.block - 1) / s.block;
  const int64_t n = p.blocks, last = n - 1;
  for (int64_t i = 0; i < n; ++i) {
    std::map<int64_t, BlockRole> seen;  // key block -> its first reason
    const auto add = [&](int64_t j, BlockRole role) {
      if (j >= 0 && j < n && (!s.causal || j <= i)) seen.try_emplace(j, role);
    };
    const bool global_query = s.global_blocks && (s.causal ? i == 0 : (i == 0 || i == last));
    if (global_query) {
      for (int64_t j = 0; j < n; ++j) add(j, BlockRole::global);
    } else {
      if (s.global_blocks) {
        add(0, BlockRole::global);
        if (!s.causal) add(last, BlockRole::global);
      }
      for (int64_t j = i - 1; j <= i + 1; ++j) add(j, BlockRole::window);
      std::vector<int64_t> candidates;
      for (int64_t j = 0; j < n; ++j)
        if (!seen.count(j) && (!s.causal || j < i)) candidates.push_back(j);
      // One generator per (seed, layer, head, query block): changing one block's draw moves no other.
      Generator gen(layer_seed(s.seed, s.layer, (static_cast<uint64_t>(s.head) << 32) + static_cast<uint64_t>(i)));
      shuffle(candidates, gen);
      for (int64_t r = 0; r < std::min<int64_t>(s.random_blocks, candidates.size()); ++r)
        add(candidates[r], BlockRole::random);
    }
    std::vector<int64_t> keys;
    std::vector<BlockRole> roles;
    for (const auto& [j, role] : seen) {
      keys.push_back(j);
      roles.push_back(role);
    }
    p.keys.push_back(std::move(keys));
    p.roles.push_back(std::move(roles));
  }
  return p;
}

std::vector<BlockPattern> bigbird_head_patterns(int64_t length, int64_t heads, const BigBirdSettings& settings) {
  if (heads < 1) fail("bigbird_head_patterns", "heads must be >= 1, got ", heads);
  std::vector<BlockPattern> patterns;
  for (int64_t h = 0; h < heads; ++h) {
    BigBirdSettings head = settings;
    head.head = settings.per_head ? h : 0;
    patterns.push_back(bigbird_pattern(length, head));
  }
  return patterns;
}

Tensor pattern_mask(const BlockPattern& p, int64_t length) {
  if ((length + p.block - 1) / p.block != p.blocks)
    fail("pattern_mask", "the pattern covers ", p.blocks, " blocks of ", p.block, " positions, not a sequence of ",
         length);
  Tensor mask = zeros({length, length});
  for (int64_t i = 0; i < length; ++i)
    for (const int64_t kb : p.keys[i / p.block])
      for (int64_t j = kb * p.block; j < std::min(length, (kb + 1) * p.block); ++j)
        if (!p.causal || j <= i) mask.data()[i * length + j] = 1;
  return mask;
}

}  // namespace ladder::nn
