// Transformer-VQ attention as an attention kind (Lingle 2023): each key is rounded to the nearest
// code of its head's codebook (a VectorQuantizer child, learned by EMA), so that every key outside a
// query's window can be summarised per code (how many keys took it, the sum of their values), and
// softmax attention costs O(T (L + S) D) instead of O(T^2 D): core's vq_attention op, block by block
// (block L = settings.block, S = settings.codes codes per head). Causal (a decoder: a block reads
// itself and the block before exactly, older blocks through the codes) or both ways (an encoder:
// the block before, its own and the one after exactly, every other block through the codes).
// Causal generation carries the summary from token to token: O(L + S) per token whatever the context.
//
// As the paper's code builds it, each setting on by default:
//   normalise: q and k normalised per head (an RMS norm without gain) and scaled by D^-1/4 before
//     the keys are rounded, so every key lies near a sphere that the codebook covers evenly (the
//     op's scale is then 1);
//   position_bias: Transformer-XL's relative position term inside the window (RelativePositions:
//     u and v added to the queries, a learned projection of a sinusoid per offset);
//   cache_gradient: exact (every query's gradient reaches the keys and values it reads) or stopped
//     (keys and values learn from their own block's queries only: the paper's grad_thru_cache = 0).
// The keys learn through the straight-through estimator and the commitment loss, which the quantizer
// records as the model's auxiliary_loss(); the codebook moves in after_optimizer_step() (nn/module.h,
// nn/vector_quantizer.h).
#pragma once

#include <memory>
#include <string>

#include "core/ops.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/relative_positions.h"
#include "nn/vector_quantizer.h"

namespace ladder::nn {

// The compressed past of a batch of sequences: the last two blocks exactly, older ones per code.
struct VQState : AttentionState {
  VQAttentionCache cache;
  int64_t block = 0, codes = 0;  // the L and S of the layer that started it
  int64_t length() const override { return cache.position; }
  std::unique_ptr<AttentionState> clone() const override { return std::make_unique<VQState>(*this); }
};

class VQAttention : public AttentionKind {
 public:
  static constexpr const char* kName = "vq";
  static constexpr const char* kExact = "exact";
  static constexpr const char* kStopped = "stopped";
  struct Settings {  // each described above
    int64_t block = 64;  // L
    int64_t codes = 64;  // S, per head
    bool normalise = true;
    bool position_bias = true;
    std::string cache_gradient = kExact;  // or kStopped
  };
  // Needs settings.heads and settings.head_dim (MultiheadAttention fills them in) for the codebook
  // (H,S,D) and the positions; its initial codes, the offsets' projection and revival draws come from gen.
  explicit VQAttention(const AttentionSettings& settings, Generator& gen = default_generator());
  // Self attention (T = S), causal or both ways. A key padding mask hides its keys from every query
  // (their code becomes -1); they take no part in the commitment loss or the codebook's EMA.
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;  // records nothing
  // In training mode it records as attend() does: MultiheadAttention calls it for a forward that
  // returns its weights. Measure and draw in eval mode.
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

  std::shared_ptr<VectorQuantizer> quantizer;    // the codebook (H,S,D), a child: its buffers are checkpointed
  std::shared_ptr<RelativePositions> positions;  // with position_bias, a child; else null

  // What the op reads for queries q and keys k (B,H,T,D): q and k normalised and scaled (normalise),
  // the queries with u (the content term) and the band's queries and offsets (position_bias).
  struct Prepared {
    Tensor queries, keys;  // what meets khat and the codes; what is rounded
    VQPositionBias bias;
  };
  Prepared prepare(const Tensor& q, const Tensor& k, bool causal);
  VQAttentionOptions options(bool causal) const;

 protected:
  std::string describe() const override;

 private:
  float score_root(int64_t head_dim) const;  // D^-1/4 when normalised, else 1: what q, k and the positions carry
  int64_t block_;
  bool normalise_, stop_cache_gradient_;
};

KindDescription vq_attention_kind();  // its line in the registry
// The settings of Transformer-VQ with blocks of L positions and S codes per head (the others: their defaults).
AttentionSettings vq_attention_settings(int64_t block, int64_t codes);

}  // namespace ladder::nn
