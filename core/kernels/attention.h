// Scaled dot-product attention on raw buffers, fused and tiled in the FlashAttention way, and the
// naive twin it is tested against.
#pragma once

#include <cstdint>
#include <vector>

namespace ladder {

// The tiles both passes work on: 64 queries against 64 keys. The scores (16 KiB) and the query,
// key and value rows (16 KiB each at D = 64) stay in a core's own caches while a tile is worked on.
// Block-sparse attention works on tiles of its block size instead.
constexpr int64_t kAttentionRowTile = 64;
constexpr int64_t kAttentionKeyTile = 64;

// One attention call: B*H independent heads, T queries and S keys each, D values per vector.
//   q (B,H,T,D), k and v (B,H,S,D), out (B,H,T,D), lse (B,H,T); all contiguous.
// Query i of batch b sees key j when
//   (!causal || j <= i + causal_offset) && (key_padding == nullptr || key_padding[b*S + j] != 0).
// A query that sees no key gets out = 0 and lse = -inf, and passes no gradient.
struct AttentionProblem {
  int64_t batch = 1, heads = 1, queries = 0, keys = 0, dim = 0;
  float scale = 1;
  bool causal = false;
  int64_t causal_offset = 0;
  const float* key_padding = nullptr;  // (B,S): 1 real key, 0 padding; null: every key is real
  float dropout = 0;                   // probability of dropping a weight; 0: no dropout
  uint64_t dropout_seed = 0;           // picks the mask: the same seed gives the same mask
  // Block-sparse attention (BigBird): queries and keys cut into blocks of `block` positions, and
  // query block t sees only the key blocks (*key_blocks)[t] (increasing, each once; ceil(T/block)
  // lists), besides the rules above. Null: every key block; the tiles are then 64 by 64.
  const std::vector<std::vector<int64_t>>* key_blocks = nullptr;
  int64_t block = 0;
};

// out_i = sum_j softmax_j(scale * q_i . k_j) * keep_ij * v_j; lse_i = log sum_j exp(scale * q_i . k_j)
// over the keys query i sees (keep_ij is 0 or 1/(1-dropout), see attention_dropout_mask).
// Tiled: one tile of query rows against one tile of keys at a time, with the online softmax, so
// memory beyond the outputs is a few tiles per thread, never (T,S). Threads share out the
// B*H*ceil(T/kAttentionRowTile) row tiles, each worth about min(kAttentionRowTile, T)*S*D of work
// (block-sparse: tiles of `block` rows, each against the key blocks it lists).
void attention_forward(const AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                       float* lse);
// The gradients dq (B,H,T,D), dk and dv (B,H,S,D), all overwritten, from dout and the saved out
// and lse: each tile's weights are recomputed from lse, and D_i = dout_i . out_i stands in for the
// row sums of the softmax's backward.
void attention_backward(const AttentionProblem& p, const float* q, const float* k, const float* v,
                        const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv);

// The dropout mask as a dense (B,H,T,S) buffer: keep_ij = 0 (dropped) or 1/(1-dropout). The fused
// kernels compute the same values tile by tile from the seed instead of storing them.
void attention_dropout_mask(const AttentionProblem& p, float* mask);

// Naive twins: every query's whole row of scores at once, std::exp and double sums.
void attention_forward_naive(const AttentionProblem& p, const float* q, const float* k, const float* v, float* out,
                             float* lse);
void attention_backward_naive(const AttentionProblem& p, const float* q, const float* k, const float* v,
                              const float* dout, float* dq, float* dk, float* dv);

}  // namespace ladder
