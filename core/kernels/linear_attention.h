// Causal linear attention's product on raw buffers, chunked, and the naive twin it is tested against.
//
// With feature-mapped queries and keys (phi(q), phi(k)), causal linear attention needs, for every
// position i, out_i = sum_{j<=i} (q_i . k_j) v_j. Its normaliser is the same product with v = 1, so
// callers append a column of ones to v and get both at once.
#pragma once

#include <cstdint>

namespace ladder {

// One call: `heads` independent sequences (B*H) of T positions; M features per query and key, E
// values per position.  q, k (heads,T,M), v and out (heads,T,E); all contiguous.
struct CausalProductProblem {
  int64_t heads = 1, length = 0, features = 0, values = 0;
  int64_t chunk = 64;  // positions per chunk: a masked (C,C) product inside, a carried state across
};

// out_i = sum_{j<=i} (q_i . k_j) v_j, one chunk of C positions at a time:
//   out_c = tril(Q_c K_c^T) V_c + Q_c S,  then  S += K_c^T V_c,
// where S (M,E) = sum of k_j v_j^T over the chunks before. Memory beyond the output: S and one
// (C,C) block per thread. Threads share out the heads.
void causal_product_forward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                            float* out);
// dq, dk (heads,T,M) and dv (heads,T,E), all overwritten, from dout (heads,T,E). A forward scan
// carries S for dq; a reverse scan carries G (M,E) = sum of q_i dout_i^T over the chunks after, for
// dk = tril(dO V^T)^T Q + V G^T and dv = tril(Q K^T)^T dO + K G. Never the (T,M,E) prefix states.
void causal_product_backward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                             const float* dout, float* dq, float* dk, float* dv);

// Naive twins: the double sum over i and j <= i, in double precision.
void causal_product_forward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                  float* out);
void causal_product_backward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                   const float* dout, float* dq, float* dk, float* dv);

}  // namespace ladder
