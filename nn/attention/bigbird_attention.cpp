#include "nn/attention/bigbird_attention.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/full_attention.h"

namespace ladder::nn {

BigBirdAttention::BigBirdAttention(const AttentionSettings& s, Generator& gen)
    : AttentionKind("BigBirdAttention"), settings_(bigbird_pattern_settings(s)), dropout_(s.dropout), gen_(gen.child()) {
  if (!(dropout_ >= 0 && dropout_ < 1)) fail("BigBirdAttention", "dropout must be in [0, 1), got ", dropout_);
  register_generator(gen_);
}

BlockPattern BigBirdAttention::pattern(int64_t length, bool causal, int64_t head) const {
  BigBirdSettings s = settings_;
  s.causal = causal;
  s.head = settings_.per_head ? head : 0;
  return bigbird_pattern(length, s);
}

std::vector<SdpaOptions> BigBirdAttention::sdpa_options(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  if (q.dim() != 4 || k.dim() != 4 || q.size(2) != k.size(2))
    fail("BigBirdAttention", "BigBird attends within one sequence: q (B,H,T,D) and k (B,H,S,D) need T = S, got ",
         shape_str(q.shape()), " and ", shape_str(k.shape()), "; use full attention for cross attention");
  if (masks.causal_offset != 0)
    fail("BigBirdAttention", "causal_offset ", masks.causal_offset,
         " is not supported; to continue a sequence use start() and step()");
  const int64_t heads = settings_.per_head ? q.size(1) : 1;
  std::vector<std::shared_ptr<const BlockSparsity>>& sparsity = patterns_[{q.size(2), masks.causal, heads}];
  if (sparsity.empty())
    for (int64_t h = 0; h < heads; ++h)
      sparsity.push_back(std::make_shared<BlockSparsity>(BlockSparsity{settings_.block, pattern(q.size(2), masks.causal, h).keys}));
  std::vector<SdpaOptions> options;
  for (const auto& blocks : sparsity)
    options.push_back({.causal = masks.causal,
                       .key_padding_mask = masks.key_padding_mask,
                       .dropout = dropout_,
                       .training = is_training(),
                       .generator = &gen_,
                       .block_sparsity = blocks});
  return options;
}

template <class Op>
Tensor BigBirdAttention::per_head(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks, Op op) {
  const std::vector<SdpaOptions> options = sdpa_options(q, k, masks);
  if (options.size() == 1) return op(q, k, v, options[0]);  // one pattern for every head: one call
  std::vector<Tensor> heads;  // each (B,1,T,*)
  for (int64_t h = 0; h < q.size(1); ++h)
    heads.push_back(op(narrow(q, 1, h, 1), narrow(k, 1, h, 1), v.defined() ? narrow(v, 1, h, 1) : v, options[h]));
  return concat(heads, 1);
}

Tensor BigBirdAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  return per_head(q, k, v, masks, [](const Tensor& a, const Tensor& b, const Tensor& c, const SdpaOptions& o) {
    return scaled_dot_product_attention(a, b, c, o);
  });
}

Tensor BigBirdAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  return per_head(q, k, Tensor(), masks, [](const Tensor& a, const Tensor& b, const Tensor&, const SdpaOptions& o) {
    return attention_weights(a, b, o);
  });
}

std::unique_ptr<AttentionState> BigBirdAttention::start() const { return std::make_unique<KeyValueState>(); }

Tensor BigBirdAttention::step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) {
  auto& cache = state_of<KeyValueState>(state, "BigBirdAttention::step");
  const int64_t earlier = cache.length(), b = settings_.block, H = q.size(1);
  cache.keys = earlier ? concat({cache.keys, k}, 2) : k;
  cache.values = earlier ? concat({cache.values, v}, 2) : v;
  std::vector<BlockPattern> patterns;
  for (int64_t h = 0; h < H; ++h) patterns.push_back(pattern(earlier + q.size(2), /*causal=*/true, h));
  std::vector<Tensor> outputs;
  for (int64_t t = 0; t < q.size(2); ++t) {
    const int64_t i = earlier + t;  // the position of this query
    std::vector<Tensor> heads;
    for (int64_t h = 0; h < H; ++h) {
      std::vector<float> positions;  // the keys its block lists in this head, up to itself
      for (const int64_t key_block : patterns[h].keys[i / b])
        for (int64_t j = key_block * b; j < std::min(i + 1, (key_block + 1) * b); ++j)
          positions.push_back(static_cast<float>(j));
      const Tensor ids = tensor(positions);
      heads.push_back(scaled_dot_product_attention(narrow(narrow(q, 2, t, 1), 1, h, 1),
                                                   index_select(narrow(cache.keys, 1, h, 1), 2, ids),
                                                   index_select(narrow(cache.values, 1, h, 1), 2, ids)));
    }
    outputs.push_back(concat(heads, 1));
  }
  return concat(outputs, 2);
}

std::string BigBirdAttention::describe() const {
  return cat("block=", settings_.block, ", random_blocks=", settings_.random_blocks,
             settings_.global_blocks ? "" : ", no global blocks", settings_.per_head ? "" : ", one draw for all heads",
             ", layer=", settings_.layer);
}

KindDescription bigbird_attention_kind() {
  return {.name = BigBirdAttention::kName,
          .self_attention_only = true,
          .settings = {{.name = "block",
                        .flag = "--attention-block",
                        .help = "positions per block of the pattern",
                        .default_value = int64_t{64},
                        .min = 1,
                        .max = 65536},
                       {.name = "random_blocks",
                        .flag = "--random-blocks",
                        .help = "random key blocks per query block",
                        .default_value = int64_t{3},
                        .max = 1024},
                       {.name = "global_blocks", .help = "the first and last blocks global", .default_value = true},
                       {.name = "per_head", .help = "each head draws its own random blocks", .default_value = true}},
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
                     {"global_blocks", pattern.global_blocks},
                     {"per_head", pattern.per_head}}};
}

BigBirdSettings bigbird_pattern_settings(const AttentionSettings& s, bool causal) {
  return {.block = s.number("block"),
          .random_blocks = s.number("random_blocks"),
          .global_blocks = s.boolean("global_blocks"),
          .causal = causal,
          .seed = s.seed,
          .layer = s.layer,
          .per_head = s.boolean("per_head")};
}

}  // namespace ladder::nn
