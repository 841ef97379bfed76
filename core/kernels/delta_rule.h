// The delta rule on raw buffers: causal linear attention whose state is overwritten, not only added
// to (DeltaNet: Schlag, Irie and Schmidhuber 2021; chunked by Yang et al. 2024; with a decay, Gated
// DeltaNet: Yang, Kautz and Hatamizadeh 2025), and the naive twins it is tested against.
//
// Per head, a state S (M,E) maps a key to a value. Position t first reads what S holds for its key,
// S^T k_t, and writes back a mix of that and its own value, with strength beta_t in (0, 1) and,
// gated, after a decay alpha_t in (0, 1] of the whole state:
//   u_t = beta_t (v_t - alpha_t S_{t-1}^T k_t),   S_t = alpha_t S_{t-1} + k_t u_t^T,   o_t = S_t^T q_t.
// With unit keys and beta_t = 1 the key's old value is replaced by v_t: S_t^T k_t = v_t. Ungated,
// alpha_t = 1. (S starts at zero; q and k arrive L2-normalised, which keeps S bounded.)
#pragma once

#include <cstdint>

namespace ladder {

// One call: `heads` independent sequences (B*H) of T positions; M numbers per query and key, E per
// value. q, k (heads,T,M), v and out (heads,T,E), beta and log_alpha (heads,T); all contiguous.
struct DeltaRuleProblem {
  int64_t heads = 1, length = 0, key_dim = 0, value_dim = 0;
  int64_t chunk = 64;  // positions per chunk of the forward's UT form
};

// out (heads,T,E), one chunk of C positions at a time. Within a chunk that starts from state S0,
// with g_t = log alpha_1 + ... + log alpha_t counted from the chunk's start and decays
// D_tj = exp(g_t - g_j) (all 1 ungated), the chunk's u rows solve one unit lower-triangular system:
//   (I + strictly_lower(beta_t D_tj k_t . k_j)) U = diag(beta) (V - diag(e^g) K S0),
// then O = diag(e^g) Q S0 + lower(D_tj q_t . k_j) U, and S = e^{g_C} S0 + sum_j D_Cj k_j u_j^T.
// A few (C,C), (C,M) and (C,E) products and a size-C solve per chunk, instead of T rank-one steps.
// log_alpha null: ungated. Threads share out the heads.
void delta_rule_forward(const DeltaRuleProblem& p, const float* q, const float* k, const float* v, const float* beta,
                        const float* log_alpha, float* out);
// dq, dk (heads,T,M), dv (heads,T,E), dbeta (heads,T) and, gated, dlog_alpha (heads,T), all
// overwritten, from dout (heads,T,E): the chunks taken backwards through the same UT form. A forward
// scan keeps the state at each chunk's start; each chunk, last first, rebuilds L, P, W and U from
// it and, carrying G = dL/dS past the chunk, takes the gradient of each of its steps:
//   dU = P^T dO + K' G;  dP = dO U^T;  dR solves (I + L)^T dR = dU;  dL = -dR U^T;
// then q, k from P and L (both products of keys), v and beta from R, and the carried
//   dS0 = e^{g_last} G + Q^T diag(e^g) dO + K^T dW,   dW = -diag(beta e^g) dR;
// gated, each product's decays give dg, and dlog_alpha_i is the sum of dg_t over t >= i in its
// chunk. As many (C,C), (C,M) and (C,E) products as the forward's, about four times over.
// Memory beyond the gradients, per thread: the state at each chunk's start of the head it works on,
// and one chunk's products.
void delta_rule_backward(const DeltaRuleProblem& p, const float* q, const float* k, const float* v, const float* beta,
                         const float* log_alpha, const float* dout, float* dq, float* dk, float* dv, float* dbeta,
                         float* dlog_alpha);

// Naive twins: the recurrence above one position at a time, in double precision, every state kept.
void delta_rule_forward_naive(const DeltaRuleProblem& p, const float* q, const float* k, const float* v,
                              const float* beta, const float* log_alpha, float* out);
void delta_rule_backward_naive(const DeltaRuleProblem& p, const float* q, const float* k, const float* v,
                               const float* beta, const float* log_alpha, const float* dout, float* dq, float* dk,
                               float* dv, float* dbeta, float* dlog_alpha);

}  // namespace ladder
