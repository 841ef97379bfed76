// Scaled dot-product attention: the fused op (core/kernels/attention.cpp does the work) and its
// naive twin written with plain ops.
#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/attention.h"
#include "core/ops.h"

namespace ladder {

namespace {

// One list of key blocks per query block, each increasing, within the keys' blocks.
void check_block_sparsity(const char* op, const BlockSparsity& sparsity, int64_t T, int64_t S) {
  const int64_t b = sparsity.block;
  if (b < 1) fail(op, "block_sparsity.block must be >= 1, got ", b);
  const int64_t query_blocks = (T + b - 1) / b, key_blocks = (S + b - 1) / b;
  if (static_cast<int64_t>(sparsity.key_blocks.size()) != query_blocks)
    fail(op, "block_sparsity lists key blocks for ", sparsity.key_blocks.size(), " query blocks, but T = ", T,
         " queries make ", query_blocks, " blocks of ", b, "; build the pattern for this length");
  for (size_t t = 0; t < sparsity.key_blocks.size(); ++t) {
    int64_t previous = -1;
    for (const int64_t kb : sparsity.key_blocks[t]) {
      if (kb <= previous || kb >= key_blocks)
        fail(op, "block_sparsity.key_blocks[", t, "] must increase and stay below the ", key_blocks,
             " key blocks; it holds ", kb, " after ", previous);
      previous = kb;
    }
  }
}

// Checks the shapes and options and turns them into the kernels' description. v may be undefined
// (attention_weights has none). Draws the dropout seed when dropout applies.
AttentionProblem problem_of(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                            const SdpaOptions& options) {
  if (q.dim() != 4)
    fail(op, "q must be (B,H,T,D) (batch, heads, queries, head dim), got ", shape_str(q.shape()),
         "; split (B,T,H*D) into heads with reshape to (B,T,H,D) and transpose(1, 2)");
  if (k.dim() != 4) fail(op, "k must be (B,H,S,D) (batch, heads, keys, head dim), got ", shape_str(k.shape()));
  if (k.size(0) != q.size(0) || k.size(1) != q.size(1) || k.size(3) != q.size(3))
    fail(op, "q ", shape_str(q.shape()), " and k ", shape_str(k.shape()),
         " must agree in batch, heads and head dim: (B,H,T,D) and (B,H,S,D)");
  if (v.defined() && v.shape() != k.shape())
    fail(op, "v must have k's shape ", shape_str(k.shape()), " (one value vector per key), got ",
         shape_str(v.shape()));
  const int64_t B = q.size(0), S = k.size(2);
  const Tensor& padding = options.key_padding_mask;
  if (padding.defined() && padding.shape() != Shape{B, S})
    fail(op, "key_padding_mask must be (B,S) = (", B, ",", S, "), 1 for a real key and 0 for padding, got ",
         shape_str(padding.shape()));
  if (!(options.dropout >= 0 && options.dropout <= 1)) fail(op, "dropout must be in [0, 1], got ", options.dropout);
  if (options.scale && !std::isfinite(*options.scale)) fail(op, "scale must be a finite number, got ", *options.scale);

  AttentionProblem p;
  p.batch = B;
  p.heads = q.size(1);
  p.queries = q.size(2);
  p.keys = S;
  p.dim = q.size(3);
  p.scale = options.scale ? *options.scale : 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(p.dim, 1)));
  p.causal = options.causal;
  p.causal_offset = options.causal_offset;
  p.key_padding = padding.defined() ? padding.data() : nullptr;
  if (options.training && options.dropout > 0) {
    p.dropout = options.dropout;
    p.dropout_seed = (options.generator ? *options.generator : default_generator()).next_u64();
  }
  if (options.block_sparsity) {
    check_block_sparsity(op, *options.block_sparsity, p.queries, S);
    p.key_blocks = &options.block_sparsity->key_blocks;
    p.block = options.block_sparsity->block;
  }
  return p;
}

// The pattern as a (T,S) matrix of 0 and 1, for the naive twin.
Tensor block_sparsity_mask(const AttentionProblem& p) {
  Tensor visible = zeros({p.queries, p.keys});
  for (int64_t i = 0; i < p.queries; ++i)
    for (const int64_t kb : (*p.key_blocks)[i / p.block])
      std::fill(visible.data() + i * p.keys + kb * p.block,
                visible.data() + i * p.keys + std::min(p.keys, (kb + 1) * p.block), 1.0f);
  return visible;
}

// The weights of the naive version: (B,H,T,S).
Tensor naive_weights(const AttentionProblem& p, const Tensor& q, const Tensor& k, const Tensor& key_padding_mask) {
  const Tensor scores = matmul(q, k, {.transpose_b = true}) * p.scale;  // (B,H,T,S)
  Tensor weights;
  if (!p.causal && !p.key_padding && !p.key_blocks) {
    weights = softmax(scores, -1);
  } else {
    // visible (B or 1, 1, T, S): 1 where query i may look at key j.
    Tensor visible = p.causal ? tril_mask(p.queries, p.keys, p.causal_offset) : ones({p.queries, p.keys});
    if (p.key_blocks) visible = visible * block_sparsity_mask(p);
    if (p.key_padding) visible = visible * reshape(key_padding_mask.detach(), {p.batch, 1, 1, p.keys});
    // A row with no visible key is all -inf, and its softmax NaN; the outer where puts 0 there
    // instead, and where sends exactly 0 back, never 0 * NaN.
    const Tensor hidden_scores = where(visible, scores, scalar(-INFINITY));
    weights = where(visible, softmax(hidden_scores, -1), scalar(0));
  }
  if (p.dropout > 0) {
    Tensor keep = empty({p.batch, p.heads, p.queries, p.keys});
    attention_dropout_mask(p, keep.data());
    weights = weights * keep;
  }
  return weights;
}

}  // namespace

// q (B,H,T,D), k v (B,H,S,D) -> (B,H,T,D). The forward keeps out and the row log-sum-exp lse
// (B,H,T); the backward recomputes the weights tile by tile from them.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& options) {
  const char* op = "scaled_dot_product_attention";
  const AttentionProblem p = problem_of(op, q, k, v, options);
  Tensor out = empty(q.shape()), lse = empty({p.batch, p.heads, p.queries});
  attention_forward(p, q.data(), k.data(), v.data(), out.data(), lse.data());
  const Tensor padding = options.key_padding_mask.defined() ? options.key_padding_mask.detach() : Tensor();
  Saved saved{q, k, v, out};
  if (padding.defined()) saved.push_back(padding);
  return record(op, out, {q, k, v}, saved,
                [p, q = q.detach(), k = k.detach(), v = v.detach(), out = out.detach(), lse, padding,
                 sparsity = options.block_sparsity](const Tensor& gout, NeedsGrad) -> Grads {
                  AttentionProblem problem = p;  // the masks, kept alive by `padding` and `sparsity`
                  problem.key_padding = padding.defined() ? padding.data() : nullptr;
                  problem.key_blocks = sparsity ? &sparsity->key_blocks : nullptr;
                  Tensor dq = empty(q.shape()), dk = empty(k.shape()), dv = empty(v.shape());
                  attention_backward(problem, q.data(), k.data(), v.data(), out.data(), lse.data(), gout.data(),
                                     dq.data(), dk.data(), dv.data());
                  return {dq, dk, dv};
                });
}

Tensor scaled_dot_product_attention_naive(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const SdpaOptions& options) {
  const AttentionProblem p = problem_of("scaled_dot_product_attention_naive", q, k, v, options);
  return matmul(naive_weights(p, q, k, options.key_padding_mask), v);
}

Tensor attention_weights(const Tensor& q, const Tensor& k, const SdpaOptions& options) {
  return naive_weights(problem_of("attention_weights", q, k, Tensor(), options), q, k, options.key_padding_mask);
}

}  // namespace ladder
