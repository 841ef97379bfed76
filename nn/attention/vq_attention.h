// Transformer-VQ attention as an attention kind (Lingle 2023): each key is rounded to the nearest
// code of its head's codebook (a VectorQuantizer child, learned by EMA), so that every key older
// than the previous block can be summarised per code (how many keys took it, the sum of their
// values), and causal softmax attention costs O(T (L + S) D) instead of O(T^2 D): core's
// vq_attention op, block by block (block L = settings.block, S = settings.codes codes per head).
// Generation carries that summary from token to token: O(L + S) per token whatever the context.
//
// Causal only (Transformer-VQ is a decoder): the cache of old blocks is read by later queries
// only. The keys learn through the straight-through estimator and the commitment loss, which
// the quantizer records as the model's auxiliary_loss(); the codebook moves in
// after_optimizer_step() (nn/module.h, nn/vector_quantizer.h).
#pragma once

#include <memory>

#include "core/ops.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"
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
  // Settings: block (L, positions per block) and codes (S, per head).
  // Needs settings.heads and settings.head_dim (MultiheadAttention fills them in) for the codebook
  // (H,S,D); its initial codes and revival draws come from gen.
  explicit VQAttention(const AttentionSettings& settings, Generator& gen = default_generator());
  // Causal self attention (T = S) only; a key padding mask only when each row's padding comes after
  // all its real keys (a causal query at a real position never reaches it). The padding keys take
  // no part in the commitment loss or the codebook's EMA.
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) override;
  std::unique_ptr<AttentionState> start() const override;
  Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) override;  // records nothing
  // In training mode it records as attend() does: MultiheadAttention calls it for a forward that
  // returns its weights. Measure and draw in eval mode.
  Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) override;

  std::shared_ptr<VectorQuantizer> quantizer;  // the codebook (H,S,D), a child: its buffers are checkpointed

 protected:
  std::string describe() const override;

 private:
  VQAttentionOptions options() const { return {.block = block_}; }
  int64_t block_;
};

KindDescription vq_attention_kind();  // its line in the registry
// The settings of Transformer-VQ with blocks of L positions and S codes per head.
AttentionSettings vq_attention_settings(int64_t block, int64_t codes);

}  // namespace ladder::nn
