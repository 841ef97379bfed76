// Attention in three steps (lessons 08-09): score every key against every query, turn the scores
// into weights with a (masked) softmax over the keys, and return the weighted sum of the values.
// The four scoring functions differ only in the first step.
//
// Shapes: queries (B,Q,Dq), keys (B,S,Dk), values (B,S,Dv) -> context (B,Q,Dv), weights (B,Q,S).
// Dims between B and Q (heads: (B,H,Q,D)) are allowed when queries, keys and values agree on them.
#pragma once

#include "core/random.h"
#include "nn/attention/masked_softmax.h"

namespace ladder::nn {

struct AttentionOutput {
  Tensor context;  // (B,Q,Dv): per query, the weighted sum of the values
  Tensor weights;  // (B,Q,S): before dropout, so each row sums to 1 over its visible keys (or is all 0)
};

struct AttentionOptions {
  KeyMask mask;                    // which keys each query may see; none: all
  float dropout = 0;               // drops weights with this probability whenever > 0, as PyTorch's
                                   // functional form; the modules pass it in training mode only
  Generator* generator = nullptr;  // draws the dropout mask; nullptr: default_generator()
};

// The step after scoring, shared by all: weights = masked_softmax(scores) (B,Q,S),
// context = dropout(weights) @ values (B,Q,Dv).
AttentionOutput attend(const Tensor& scores, const Tensor& values, const AttentionOptions& options = {});

// ---- scores: queries (B,Q,Dq), keys (B,S,Dk) -> (B,Q,S) ----
// score(q, k) = q . k  (Dq = Dk = D)
Tensor dot_scores(const Tensor& queries, const Tensor& keys);
// score(q, k) = q . k / sqrt(D): keeps the scores' variance near 1 whatever D, so that the softmax
// does not saturate (for q and k of unit-variance entries, q . k has variance D)
Tensor scaled_dot_scores(const Tensor& queries, const Tensor& keys);
// Bahdanau: score(q, k) = w_v . tanh(W_q q + W_k k), an MLP with one hidden layer of H units.
// W_q (H,Dq), W_k (H,Dk), w_v (1,H): Linear layouts. Holds (B,Q,S,H) values: every query-key pair's
// hidden layer. After the projections, the fused op additive_scores_projected (core/ops.h) does
// the rest; a decoder that asks new queries of the same keys at every step calls it itself, with
// the keys projected once (AdditiveAttention::project_keys).
Tensor additive_scores(const Tensor& queries, const Tensor& keys, const Tensor& W_q, const Tensor& W_k,
                       const Tensor& w_v);
// Luong's "general" (bilinear): score(q, k) = q^T W k, W (Dq,Dk).
Tensor general_scores(const Tensor& queries, const Tensor& keys, const Tensor& W);

// ---- whole attention: the scores above, then attend() ----
AttentionOutput dot_attention(const Tensor& queries, const Tensor& keys, const Tensor& values,
                              const AttentionOptions& options = {});
AttentionOutput scaled_dot_attention(const Tensor& queries, const Tensor& keys, const Tensor& values,
                                     const AttentionOptions& options = {});
AttentionOutput additive_attention(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& W_q,
                                   const Tensor& W_k, const Tensor& w_v, const AttentionOptions& options = {});
AttentionOutput general_attention(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& W,
                                  const AttentionOptions& options = {});

}  // namespace ladder::nn
