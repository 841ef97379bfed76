#include "nn/attention/bigbird_attention.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/full_attention.h"

namespace ladder::nn {

BigBirdAttention::BigBirdAttention(const AttentionSettings& s, Generator& gen)
    : AttentionKind("BigBirdAttention"), settings_(bigbird_pattern_settings(s)), dropout_(s.dropout), gen_(gen.child()) {
  if (!(dropout_ >= 0 && dropout_ < 1)) fail("BigBirdAttention", "dropout must be in [0, 1), got ", dropout_);
}

BlockPattern BigBirdAttention::pattern(int64_t length, bool causal) const {
  BigBirdSettings s = settings_;
  s.causal = causal;
  return bigbird_pattern(length, s);
}

SdpaOptions BigBirdAttention::sdpa_options(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  if (q.dim() != 4 || k.dim() != 4 || q.size(2) != k.size(2))
    fail("BigBirdAttention", "BigBird attends within one sequence: q (B,H,T,D) and k (B,H,S,D) need T = S, got ",
         shape_str(q.shape()), " and ", shape_str(k.shape()), "; use full attention for cross attention");
  if (masks.causal_offset != 0)
    fail("BigBirdAttention", "causal_offset ", masks.causal_offset,
         " is not supported; to continue a sequence use start() and step()");
  std::shared_ptr<const BlockSparsity>& sparsity = patterns_[{q.size(2), masks.causal}];
  if (!sparsity)
    sparsity = std::make_shared<BlockSparsity>(BlockSparsity{settings_.block, pattern(q.size(2), masks.causal).keys});
  return {.causal = masks.causal,
          .key_padding_mask = masks.key_padding_mask,
          .dropout = dropout_,
          .training = is_training(),
          .generator = &gen_,
          .block_sparsity = sparsity};
}

Tensor BigBirdAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  return scaled_dot_product_attention(q, k, v, sdpa_options(q, k, masks));
}

Tensor BigBirdAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  return attention_weights(q, k, sdpa_options(q, k, masks));
}

std::unique_ptr<AttentionState> BigBirdAttention::start() const { return std::make_unique<KeyValueState>(); }

Tensor BigBirdAttention::step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) {
  auto& cache = state_of<KeyValueState>(state, "BigBirdAttention::step");
  const int64_t earlier = cache.length(), b = settings_.block;
  cache.keys = earlier ? concat({cache.keys, k}, 2) : k;
  cache.values = earlier ? concat({cache.values, v}, 2) : v;
  const BlockPattern p = pattern(earlier + q.size(2), /*causal=*/true);
  std::vector<Tensor> outputs;
  for (int64_t t = 0; t < q.size(2); ++t) {
    const int64_t i = earlier + t;  // the position of this query
    std::vector<float> positions;   // the keys its block lists, up to itself
    for (const int64_t key_block : p.keys[i / b])
      for (int64_t j = key_block * b; j < std::min(i + 1, (key_block + 1) * b); ++j)
        positions.push_back(static_cast<float>(j));
    const Tensor ids = tensor(positions);
    outputs.push_back(scaled_dot_product_attention(narrow(q, 2, t, 1), index_select(cache.keys, 2, ids),
                                                   index_select(cache.values, 2, ids)));
  }
  return concat(outputs, 2);
}

std::string BigBirdAttention::describe() const {
  return cat("block=", settings_.block, ", random_blocks=", settings_.random_blocks,
             settings_.global_blocks ? "" : ", no global blocks", ", layer=", settings_.layer);
}

KindDescription bigbird_attention_kind() {
  return {.name = BigBirdAttention::kName,
          .self_attention_only = true,
          .settings = {{.name = "block",
                        .flag = "--attention-block",
                        .help = "positions per block of the pattern",
                        .default_value = int64_t{64},
                        .min = 1},
                       {.name = "random_blocks",
                        .flag = "--random-blocks",
                        .help = "random key blocks per query block",
                        .default_value = int64_t{3}},
                       {.name = "global_blocks", .help = "the first and last blocks global", .default_value = true}},
          .make = [](const AttentionSettings& s, Generator& gen) { return std::make_shared<BigBirdAttention>(s, gen); },
          .describe = [](const AttentionSettings& s, bool) {
            return cat("bigbird (blocks of ", s.number("block"), ", ", s.number("random_blocks"), " random per query block)");
          }};
}

AttentionSettings bigbird_attention_settings(const BigBirdSettings& pattern) {
  return {.kind = BigBirdAttention::kName,
          .seed = pattern.seed,
          .layer = pattern.layer,
          .values = {{"block", pattern.block},
                     {"random_blocks", pattern.random_blocks},
                     {"global_blocks", pattern.global_blocks}}};
}

BigBirdSettings bigbird_pattern_settings(const AttentionSettings& s, bool causal) {
  return {.block = s.number("block"),
          .random_blocks = s.number("random_blocks"),
          .global_blocks = s.boolean("global_blocks"),
          .causal = causal,
          .seed = s.seed,
          .layer = s.layer};
}

}  // namespace ladder::nn
