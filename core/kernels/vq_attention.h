// Transformer-VQ attention (Lingle 2023) on raw buffers: softmax attention over vector-quantised
// keys, computed block by block in linear time, causal (a decoder) or both ways (an encoder), a step
// for generation, and the naive twins.
//
// Every key khat_j is a code of the head's codebook: khat_j = c_{z_j}. Cut the positions into blocks
// of L. Query i of block n reads
//   - the keys of its window exactly: causal, its own block (j <= i) and block n-1; the encoder form,
//     blocks n-1, n and n+1: score scale * q_i . khat_j, plus, with the position bias, scale *
//     qp_i . r_{i-j} for |i - j| <= L (Transformer-XL's relative term: qp_i the position query, r one
//     row per offset; zero beyond the band);
//   - every other key it sees (causal: blocks 0..n-2; the encoder form: all blocks outside the
//     window) through a cache that holds, per code s, how many of them took it (count_s) and the sum
//     of their values (U_s): one score scale * q_i . c_s + log count_s per code with count_s > 0,
//     whose weight multiplies their mean value U_s / count_s.
// Since the count_s keys of code s share one score, exp(scale q.c_s + log count_s) is their summed
// weight and the result is exactly the quadratic softmax(scale * (Q Khat^T + band) + mask) V, in
// O(L (L + S) D) per block instead of O(T L D). Because khat_j = c_{z_j}, a window score q_i . khat_j
// is entry z_j of q_i's scores against the codebook, q_i C^T, which the cache needs anyway: the
// fast kernels compute q_i C^T once and read both from it (and dq = scale (dS per code) C), so they
// read each key as its code and never khat; the naive twins read khat.
//
// Gradients (the semantics of the paper and its official code):
//   dq, dv, dqp, dr: exactly the quadratic reference's;
//   dkhat_j: only from the queries whose window holds key j (those that read it as itself). Other
//     queries see key j only through its code c_{z_j}, and the codebook gets no gradient (it learns
//     by EMA), so nothing reaches khat_j from them. This is the exact derivative of the computed
//     function when the codebook is held constant;
//   with stop_cache_gradient (the paper's grad_thru_cache = 0, Transformer-XL's stopped memory): the
//     keys and values of block m get gradient from the queries of block m only; what other blocks'
//     queries read of them (the block before exactly, the older ones per code) is a constant. dq,
//     dqp and dr are unchanged;
//   the codebook and the code indices: none.
#pragma once

#include <cstdint>
#include <vector>

namespace ladder {

// One call: B*H independent heads, T positions each, D values per vector, S codes per codebook.
struct VQAttentionProblem {
  int64_t batch = 1, heads = 1, length = 0, dim = 0, codes = 0;
  int64_t block = 512;  // L, positions per block; T need not be a multiple of it
  float scale = 1;
  bool causal = true;               // false: the encoder form (window: the block before, its own, the one after)
  bool stop_cache_gradient = false;  // keys and values learn from their own block's queries only
  bool position_bias = false;        // the band's relative term (position_queries and offsets are given)
};

// The rows of r: one per key of the band, in the order of the keys: row m is key j = i - L + m, the
// offset i - j = L - m, so that the rows run from offset L down to 0 (causal: L + 1 rows) or to -L
// (both ways: 2L + 1 rows), as the paper's code flips its sinusoids; a query's band is then one run
// of consecutive keys and consecutive rows.
int64_t vq_offset_rows(const VQAttentionProblem& p);

// The inputs, all contiguous.
struct VQAttentionInputs {
  const float *q, *khat, *v;  // (B,H,T,D); khat = the codes, read by the naive twins only
  // (B,H,T): khat's code indices, each in [0, S); -1 marks a key no query reads (padding): it is
  // neither scored in a window nor counted in a cache.
  const int64_t* codes;
  const float* codebook;                     // (H,S,D), one per head
  const float* position_queries = nullptr;   // (B,H,T,D): qp, with position_bias
  const float* offsets = nullptr;            // (H, vq_offset_rows, D): r, with position_bias
};

// The gradients the backward writes (all overwritten); the last two only with position_bias.
struct VQAttentionGrads {
  float *dq, *dkhat, *dv;  // (B,H,T,D)
  float* dposition_queries = nullptr;  // (B,H,T,D)
  float* doffsets = nullptr;           // (H, vq_offset_rows, D), summed over the batch
};

// Query rows are worked on 64 at a time inside a block: a causal tile sees the keys up to its last row only.
constexpr int64_t kVQRowTile = 64;

// out (B,H,T,D) and lse (B,H,T) = log of the row's softmax sum, block by block as above. Memory
// beyond the outputs: per thread, one head's cache (S counts, (S,D) sums) and one row tile's
// scores ((64, 3L + S)). Threads share out the heads, each head on one thread.
void vq_attention_forward(const VQAttentionProblem& p, const VQAttentionInputs& in, float* out, float* lse);
// The gradients from dout and the saved out and lse, with the semantics above. Causal: one scan
// from the last block to the first that starts from the cache of the last block and takes each
// block out of it as it passes (the sums are kept in double, so taking out undoes adding to well
// below float precision), while G (S,D) = sum over the queries passed of (their weight per key of
// code s) * dout collects what the cache owes the values: dv_j += G[z_j] once every query that
// reads block(j) through the cache has been passed. The encoder form scans forwards: block n's
// queries owe the values of every block outside their window, so G sums every block's share C_n
// and each block's values get G minus the shares of the three blocks around it. Nothing of size
// T*T or (T/L)*S*D is kept.
void vq_attention_backward(const VQAttentionProblem& p, const VQAttentionInputs& in, const float* out,
                           const float* lse, const float* dout, const VQAttentionGrads& grads);

// Naive twins in double precision: the quadratic softmax over every key query i sees (its codes and
// the codebook play no part; a key with code -1 is hidden), with the band's term, times v; and its
// gradients with the semantics above.
void vq_attention_forward_naive(const VQAttentionProblem& p, const VQAttentionInputs& in, float* out);
void vq_attention_backward_naive(const VQAttentionProblem& p, const VQAttentionInputs& in, const float* dout,
                                 const VQAttentionGrads& grads);

// What causal generation carries from token to token, for B*H heads: the values and codes of the
// current block and the one before (exact, the slot of position t is t mod 2L; a key is its code, so
// the codes say all of the keys), and the older positions folded into per-code counts and running
// means of their values (the paper's code keeps the same "upper divided by lower"), with log count_s
// refreshed whenever a block is folded. Memory O(L D + S D) per head, whatever the context. Sized by
// the first step.
struct VQAttentionCache {
  int64_t position = 0;              // how many positions have been seen
  std::vector<float> values;         // (B*H, 2L, D)
  std::vector<int64_t> codes;        // (B*H, 2L)
  std::vector<int64_t> code_counts;  // (B*H, S)
  std::vector<float> code_bias;      // (B*H, S): log count_s, -inf for a code no folded key took
  std::vector<float> code_means;     // (B*H, S, D): the mean value of the folded keys of code s, 0 if none
};

// Attends the next T = p.length positions of every head (in: q, v (B,H,T,D), codes (B,H,T), and with
// position_bias qp (B,H,T,D) and r; khat is not read: each key is the code its index names) to
// themselves and everything seen before, and adds them to the cache, one position at a time: S dot
// products and O((2L + S) D) more work per position per head. out (B,H,T,D) equals the rows
// vq_attention_forward gives these positions over the whole sequence. Causal only.
void vq_attention_step_forward(const VQAttentionProblem& p, VQAttentionCache& cache, const VQAttentionInputs& in,
                               float* out);

}  // namespace ladder
