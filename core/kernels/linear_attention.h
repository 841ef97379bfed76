// Causal linear attention's product on raw buffers, chunked, and the naive twin it is tested against.
//
// With feature-mapped queries and keys (phi(q), phi(k)), causal linear attention needs, for every
// position i, num_i = sum_{j<=i} (phi(q_i) . phi(k_j)) v_j and, to normalise, the same product with
// v = 1: den_i = sum_{j<=i} phi(q_i) . phi(k_j). The kernel computes both at once by giving every
// value row an extra column of ones, chunk by chunk in scratch memory, and can apply phi = elu + 1
// to the rows as it reads them: then neither the feature tensors nor [v, 1] ever exist in memory,
// which is what limits long sequences (each pass over a (T, 64) tensor costs more than its work).
#pragma once

#include <cstdint>

namespace ladder {

// One call: `heads` independent sequences (B*H) of T positions; M features per query and key, E
// values per position.  q, k (heads,T,M), v and out (heads,T,E), denominators (heads,T); all contiguous.
struct CausalProductProblem {
  int64_t heads = 1, length = 0, features = 0, values = 0;
  int64_t chunk = 64;         // positions per chunk: a masked (C,C) product inside, a carried state across
  bool elu_features = false;  // q and k are raw: phi(x) = elu(x) + 1 (x + 1 above 0, e^x below) applies
  bool normalise = false;     // out_i = num_i / (den_i + eps) instead of num_i
  float eps = 1e-6f;
};

// out_i = num_i (/ (den_i + eps)), one chunk of C positions at a time, with V' = [V, 1] when normalising:
//   [num, den]_c = tril(Q_c K_c^T) V'_c + Q_c S,  then  S += K_c^T V'_c,
// where Q_c, K_c are the chunk's feature rows and S (M,E+1) = sum of phi(k_j) v'_j^T over the chunks
// before. denominators (den_i + eps, kept for the backward) only when normalising, else unused (may
// be null). Memory beyond the output: per thread, S and one chunk's rows and (C,C) block. Threads
// share out the heads.
void causal_product_forward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                            float* out, float* denominators);
// dq, dk (heads,T,M) and dv (heads,T,E), all overwritten, from dout (heads,T,E) and, when
// normalising, the out and denominators the forward gave. Normalising turns dout into the gradient
// of [num, den]: G'_i = [dout_i / d_i, -(dout_i . out_i) / d_i]. A forward scan carries S for dQ; a
// reverse scan carries G (M,E+1) = sum of Q_i G'_i^T over the chunks after, for
//   dK_c = tril(G'_c V'_c^T)^T Q_c + V'_c G^T,  dV'_c = tril(Q_c K_c^T)^T G'_c + K_c G.
// With elu_features, dQ and dK are then multiplied by phi'(x) = min(1, phi(x)). Never the (T,M,E)
// prefix states.
void causal_product_backward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                             const float* out, const float* denominators, const float* dout, float* dq, float* dk,
                             float* dv);

// Naive twins: the double sum over i and j <= i, in double precision, with the same options.
void causal_product_forward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                  float* out);
void causal_product_backward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                   const float* dout, float* dq, float* dk, float* dv);

}  // namespace ladder
