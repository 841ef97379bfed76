// Transformer-VQ attention (Lingle 2023) on raw buffers: causal softmax attention over vector-quantised
// keys, computed block by block in linear time, a step for generation, and the naive twin.
//
// Every key khat_j is a code of the head's codebook: khat_j = c_{z_j}. Query i of block n (positions
// [nL, nL+L)) meets
//   - the keys of its own block (j <= i) and of block n-1 exactly: scale * q_i . khat_j;
//   - the keys of blocks 0..n-2 through a cache that holds, per code s, how many of them took it
//     (count_s) and the sum of their values (U_s): one score scale * q_i . c_s + log count_s per code
//     with count_s > 0, whose weight multiplies their mean value U_s / count_s.
// Since the count_s keys of code s share one score, exp(scale q.c_s + log count_s) is their summed
// weight and the result is exactly the quadratic softmax(scale * Q Khat^T + causal mask) V, in
// O(L (L + S) D) per block instead of O(T L D).
//
// Gradients (the semantics of the paper and its official code):
//   dq, dv: exactly the quadratic reference's;
//   dkhat_j: only from the queries of key j's own block (i >= j) and of the next block, the window
//     where khat_j is read. Older queries see key j only through its code c_{z_j}, and the codebook
//     gets no gradient (it learns by EMA), so nothing reaches khat_j from them. This is the exact
//     derivative of the computed function when the codebook is held constant;
//   the codebook and the code indices: none.
#pragma once

#include <cstdint>
#include <vector>

namespace ladder {

// One call: B*H independent heads, T positions each, D values per vector, S codes per codebook.
//   q, khat, v, out (B,H,T,D); codes (B,H,T) (khat's code indices, each in [0, S)); lse (B,H,T);
//   codebook (H,S,D), one per head; all contiguous.
struct VQAttentionProblem {
  int64_t batch = 1, heads = 1, length = 0, dim = 0, codes = 0;
  int64_t block = 512;  // L, positions per block; T need not be a multiple of it
  float scale = 1;
};

// Query rows are worked on 64 at a time inside a block: a tile sees the keys up to its last row only.
constexpr int64_t kVQRowTile = 64;

// out (B,H,T,D) and lse (B,H,T) = log sum_j exp(scale q_i . khat_j) over j <= i, block by block as
// above. Memory beyond the outputs: per thread, one head's cache (S counts, (S,D) sums) and one row
// tile's scores ((64, 2L + S)). Threads share out the heads, each head on one thread.
void vq_attention_forward(const VQAttentionProblem& p, const float* q, const float* khat, const int64_t* codes,
                          const float* codebook, const float* v, float* out, float* lse);
// dq, dkhat, dv (B,H,T,D), all overwritten, from dout and the saved out and lse, with the gradient
// semantics above. One scan from the last block to the first: it starts from the cache of the last
// block and takes each block out of it as it passes (the sums are kept in double, so taking out
// undoes adding to well below float precision), while G (S,D) = sum over the queries passed of
// (their weight per key of code s) * dout collects what the cache owes the values: dv_j += G[z_j]
// once every query that reads block(j) through the cache has been passed. Nothing of size T*T or
// (T/L)*S*D is kept.
void vq_attention_backward(const VQAttentionProblem& p, const float* q, const float* khat, const int64_t* codes,
                           const float* codebook, const float* v, const float* out, const float* lse,
                           const float* dout, float* dq, float* dkhat, float* dv);

// Naive twins in double precision: out_i = softmax over j <= i of scale * q_i . khat_j, times v (the
// quadratic reference; the codes and the codebook play no part), and its gradients with the
// semantics above (dkhat from the two-block window only).
void vq_attention_forward_naive(const VQAttentionProblem& p, const float* q, const float* khat, const float* v,
                                float* out);
void vq_attention_backward_naive(const VQAttentionProblem& p, const float* q, const float* khat, const float* v,
                                 const float* dout, float* dq, float* dkhat, float* dv);

// What generation carries from token to token, for B*H heads: the keys, values and codes of the
// current block and the one before (exact, the slot of position t is t mod 2L), and the older
// positions folded into per-code counts and value sums. Memory O(L D + S D) per head, whatever the
// context. Sized by the first step.
struct VQAttentionCache {
  int64_t position = 0;               // how many positions have been seen
  std::vector<float> keys, values;    // (B*H, 2L, D)
  std::vector<int64_t> codes;         // (B*H, 2L)
  std::vector<int64_t> code_counts;   // (B*H, S)
  std::vector<double> code_sums;      // (B*H, S, D): the sums of the values of the folded keys
};

// Attends the next T = p.length positions of every head (q, khat, v (B,H,T,D), codes (B,H,T)) to
// themselves and everything seen before, and adds them to the cache, one position at a time:
// O((2L + S) D) work per position per head. out (B,H,T,D) equals the rows vq_attention_forward gives
// these positions when it runs over the whole sequence.
void vq_attention_step_forward(const VQAttentionProblem& p, VQAttentionCache& cache, const float* q,
                               const float* khat, const int64_t* codes, const float* codebook, const float* v,
                               float* out);

}  // namespace ladder
