// Settings of an attention kind for small tests, chosen among settings of several kinds: every kind
// of the registry takes its own struct from `small` when it holds one, else its defaults.
#pragma once

#include <string>
#include <vector>

#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/vq_attention.h"

namespace ladder::testing {

inline nn::AttentionSettings small_attention(const std::string& kind, const std::vector<nn::KindSettings>& small) {
  const nn::KindDescription& description = nn::registered_kind(kind);
  for (const nn::KindSettings& own : small)
    if (description.describes(own)) return {.kind = own};
  return {.kind = description.defaults};
}

// BigBird and Transformer-VQ in blocks of `block` positions, BigBird with `random_blocks` random ones.
inline std::vector<nn::KindSettings> blocks_of(int64_t block, int64_t random_blocks = 1) {
  return {nn::BigBirdAttention::Settings{.block = block, .random_blocks = random_blocks},
          nn::VQAttention::Settings{.block = block}};
}

}  // namespace ladder::testing
