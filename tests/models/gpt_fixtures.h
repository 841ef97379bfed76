// What the GPT's test files share: a tiny configuration, the causal kinds, and weights sharpened so
// that the next token depends on the whole context.
#pragma once

#include <string>
#include <vector>

#include "models/gpt.h"
#include "nn/attention/attention_registry.h"

namespace ladder::testing {

inline models::GPTConfig tiny_gpt_config() {
  return {.vocab_size = 11, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8, .dropout = 0, .bias = true,
          .tie_weights = true};
}

// The kinds a GPT can take: those that attend causally.
inline std::vector<std::string> causal_kinds() {
  std::vector<std::string> kinds;
  for (const nn::KindDescription& kind : nn::attention_kinds())
    if (kind.attends(true)) kinds.push_back(kind.name);
  return kinds;
}

// Weights 20x GPT-2's initial scale, so that the next token depends on the whole context and not
// mostly on the last token, as it does in a freshly initialised model.
inline void sharpen(models::GPT& model) {
  for (const auto& p : model.named_parameters())
    if (p.kind != nn::ParamKind::norm)
      for (int64_t i = 0; i < p.tensor.numel(); ++i) p.tensor.data()[i] *= 20.0f;
}

inline std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); }

}  // namespace ladder::testing
