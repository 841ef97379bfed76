#include "nn/attention/bigbird_attention.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/full_attention.h"

namespace ladder::nn {

namespace {

constexpr const char* kBlockFlag = "--attention-block";
constexpr const char* kRandomBlocksFlag = "--random-blocks";

// Whether the pattern over `length` positions lists every key block a query block may see.
bool pattern_is_full(const AttentionSettings& s, int64_t length, bool causal) {
  const BlockPattern p = bigbird_pattern(length, bigbird_pattern_settings(s, causal));
  return p.visible_blocks() == (causal ? p.blocks * (p.blocks + 1) / 2 : p.blocks * p.blocks);
}

// The keys every query reads, summed over the queries: the positions of the blocks its block lists
// (causal: those not after it).
int64_t keys_read(const AttentionSettings& s, int64_t length, bool causal) {
  const BlockPattern p = bigbird_pattern(length, bigbird_pattern_settings(s));
  int64_t keys = 0;
  for (int64_t i = 0; i < length; ++i)
    for (const int64_t block : p.keys[static_cast<size_t>(i / p.block)]) {
      const int64_t end = std::min(causal ? i + 1 : length, (block + 1) * p.block);
      keys += std::max<int64_t>(0, end - block * p.block);
    }
  return keys;
}

// A full pattern: why, and the largest block that leaves key blocks out (no fix when none does).
WastedPattern wasted_over(const AttentionSettings& s, int64_t length, bool causal) {
  if (!pattern_is_full(s, length, causal)) return {};
  const int64_t block = s.kind.as<BigBirdAttention::Settings>().block, blocks = (length + block - 1) / block;
  AttentionSettings smaller = s;
  int64_t& smaller_block = smaller.kind.as<BigBirdAttention::Settings>().block;
  while (smaller_block > 1 && pattern_is_full(smaller, length, causal)) --smaller_block;
  return {.why = cat("in ", blocks, blocks == 1 ? " block" : " blocks", " lets every query block see every key block"),
          .fix = pattern_is_full(smaller, length, causal)
                     ? ""
                     : cat("give ", kBlockFlag, " ", smaller_block, " (the largest that leaves key blocks out) or fewer ",
                           kRandomBlocksFlag)};
}

}  // namespace

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
  using Settings = BigBirdAttention::Settings;
  return {.name = BigBirdAttention::kName,
          .defaults = Settings{},
          .self_attention_only = true,
          .settings = {kind_setting(&Settings::block, {.key = "block",
                                                       .flag = kBlockFlag,
                                                       .help = "positions per block of the pattern",
                                                       .min = 1,
                                                       .max = 65536}),
                       kind_setting(&Settings::random_blocks, {.key = "random_blocks",
                                                               .flag = kRandomBlocksFlag,
                                                               .help = "random key blocks per query block",
                                                               .max = 1024}),
                       kind_setting(&Settings::global_blocks,
                                    {.key = "global_blocks", .help = "the first and last blocks global"}),
                       kind_setting(&Settings::per_head,
                                    {.key = "per_head", .help = "each head draws its own random blocks"})},
          .make = [](const AttentionSettings& s, Generator& gen) { return std::make_shared<BigBirdAttention>(s, gen); },
          .describe = [](const AttentionSettings& s, bool) {
            const Settings& own = s.kind.as<Settings>();
            return cat("bigbird (blocks of ", own.block, ", ", own.random_blocks, " random per query block)");
          },
          .kept_scores = [](const AttentionSettings&, int64_t) -> int64_t { return 0; },  // the fused op keeps none
          // the keys and values of the positions it reads, on average over the queries
          .state_numbers = [](const AttentionSettings& s, int64_t length, int64_t head_dim, bool causal) {
            return 2 * head_dim * keys_read(s, length, causal) / length;
          },
          .wasted_over = wasted_over};
}

AttentionSettings bigbird_attention_settings(const BigBirdSettings& pattern) {
  return {.kind = BigBirdAttention::Settings{.block = pattern.block,
                                             .random_blocks = pattern.random_blocks,
                                             .global_blocks = pattern.global_blocks,
                                             .per_head = pattern.per_head},
          .seed = pattern.seed,
          .layer = pattern.layer};
}

BigBirdSettings bigbird_pattern_settings(const AttentionSettings& s, bool causal) {
  const BigBirdAttention::Settings& own = checked_settings<BigBirdAttention::Settings>(s);
  return {.block = own.block,
          .random_blocks = own.random_blocks,
          .global_blocks = own.global_blocks,
          .causal = causal,
          .seed = s.seed,
          .layer = s.layer,
          .per_head = own.per_head};
}

}  // namespace ladder::nn
