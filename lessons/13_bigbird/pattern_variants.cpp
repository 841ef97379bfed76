#include "lessons/13_bigbird/pattern_variants.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/full_attention.h"

namespace ladder::lessons {

const std::vector<PatternVariant>& pattern_variants() {
  static const std::vector<PatternVariant> variants{
      {nn::FullAttention::kName, nn::FullAttention::kName, false, false, false, false},
      {"window", "window only", true, false, false, false},
      {"window_global", "window + global", true, true, false, false},
      {nn::BigBirdAttention::kName, "BigBird", true, true, true, false},
      {"window_global_mid", "window + global, mid", true, true, false, true},
      {"bigbird_mid", "BigBird, mid", true, true, true, true}};
  return variants;
}

std::vector<std::string> pattern_variant_names() {
  std::vector<std::string> names;
  for (const PatternVariant& v : pattern_variants()) names.push_back(v.name);
  return names;
}

const PatternVariant& pattern_variant(const std::string& name) {
  const auto& variants = pattern_variants();
  const auto found = std::find_if(variants.begin(), variants.end(), [&](const PatternVariant& v) { return v.name == name; });
  if (found == variants.end()) throw Error(cat("pattern_variant: no pattern named '", name, "'"));
  return *found;
}

nn::AttentionSettings pattern_attention(const PatternVariant& v, int64_t block, int64_t random, uint64_t seed) {
  if (!v.bigbird) return nn::full_attention();
  return nn::bigbird_attention_settings(
      {.block = block, .random_blocks = v.random ? random : 0, .global_blocks = v.global, .seed = seed});
}

int64_t padding_after_question(const PatternVariant& v, int64_t length, int64_t block) {
  if (!v.question_inside) return 0;
  const int64_t blocks = (length + block - 1) / block;
  return (blocks + 1) * block - length;
}

data::LabelledBatch pad_after(const data::LabelledBatch& examples, int64_t padding) {
  if (padding == 0) return examples;  // every position real, as before
  const int64_t rows = examples.inputs.size(0), length = examples.inputs.size(1), padded = length + padding;
  Tensor inputs = zeros({rows, padded}), valid = zeros({rows, padded});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < length; ++t) {
      inputs.data()[r * padded + t] = examples.inputs.data()[r * length + t];
      valid.data()[r * padded + t] = 1;
    }
  return {inputs, examples.labels, valid};
}

}  // namespace ladder::lessons
