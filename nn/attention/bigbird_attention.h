// BigBird's block-sparse attention as an attention kind (Zaheer et al. 2020): softmax attention in
// which each query block sees only the key blocks of its pattern (nn/attention/bigbird_pattern.h:
// global, window and random blocks), computed by core's fused attention visiting those blocks alone
// (SdpaOptions::block_sparsity): time and memory grow as T * (listed blocks) * b, not T * T. Each
// head draws its own random blocks (per_head, the default), so a layer's heads see different blocks
// far away; the fused op then runs once per head, each with its pattern.
// Self attention only (the pattern is over one sequence: T = S). A sequence of few blocks has
// fewer random blocks to draw from and becomes full attention (documented, not an error).
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "core/ops.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_pattern.h"

namespace ladder::nn {

class BigBirdAttention : public AttentionKind {
 public:
  static constexpr const char* kName = "bigbird";
  struct Settings {
    int64_t block = 64;         // b, positions per block
    int64_t random_blocks = 3;  // r per query block
    bool global_blocks = true;  // false: no global first and last blocks
    bool per_head = true;       // false: the heads share one draw
  };
  // settings.seed and settings.layer (with the head) draw the random blocks.
  explicit BigBirdAttention(const AttentionSettings& settings, Generator& gen = default_generator());
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;  // a KeyValueState
  // Each new position attends to the keys of the blocks its causal pattern lists, gathered from the
  // cache: the work per token is bounded by the pattern, the memory grows with the context.
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

  // The pattern head `head` of this layer uses for a sequence of `length` positions.
  BlockPattern pattern(int64_t length, bool causal, int64_t head = 0) const;

 protected:
  std::string describe() const override;

 private:
  // The fused op's options for each head (one for all when the heads share their draw).
  std::vector<SdpaOptions> sdpa_options(const Tensor& q, const Tensor& k, const AttendMasks& masks);
  // op(q, k, [v,] options) for each head's slice of q, k and v, concatenated over the heads.
  template <class Op>
  Tensor per_head(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks, Op op);
  BigBirdSettings settings_;  // the causal flag is set per call
  float dropout_;
  Generator gen_;  // draws the dropout masks
  // Each head's blocks, by (length, causal, heads).
  std::map<std::tuple<int64_t, bool, int64_t>, std::vector<std::shared_ptr<const BlockSparsity>>> patterns_;
};

KindDescription bigbird_attention_kind();  // its line in the registry
// The settings of BigBird with this pattern (its causal flag is set per call), and back.
AttentionSettings bigbird_attention_settings(const BigBirdSettings& pattern);
BigBirdSettings bigbird_pattern_settings(const AttentionSettings& settings, bool causal = false);

}  // namespace ladder::nn
