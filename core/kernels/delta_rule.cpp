// The delta rule in chunks, forward and backward (delta_rule.h has the formulas).
#include "core/kernels/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"

namespace ladder {

namespace {

// Positions per chunk: at most the sequence, so that scratch is never sized for positions that do not exist.
int64_t chunk_of(const DeltaRuleProblem& p) { return std::max<int64_t>(1, std::min(p.chunk, p.length)); }

// One head's rows: q, k (T,M), v (T,E), beta and log alpha (T; log alpha null ungated).
struct HeadRows {
  const float *q, *k, *v, *beta, *log_alpha;
};

HeadRows head_rows(const DeltaRuleProblem& p, int64_t h, const float* q, const float* k, const float* v,
                   const float* beta, const float* log_alpha) {
  const int64_t T = p.length;
  return {q + h * T * p.key_dim, k + h * T * p.key_dim, v + h * T * p.value_dim, beta + h * T,
          log_alpha ? log_alpha + h * T : nullptr};
}

// One chunk of n positions from t0, and what the forward computes of it from its start state S0
// (M,E): the decays g_t from the chunk's start, e^{g_t} and e^{g_last - g_t} (all 0 and 1
// ungated), the key products KK (n,n) = K K^T, L (n,n) = strictly_lower(beta_t D_tj KK_tj),
// P (n,n) = lower(D_tj q_t . k_j), the
// reads W = K S0 (n,E), the written rows U (n,E) and the decayed keys K' = diag(e^{g_last - g}) K
// (n,M). Buffers sized for C positions, the thread's own.
struct Chunk {
  int64_t t0 = 0, n = 0;
  const float *Q = nullptr, *K = nullptr, *V = nullptr, *beta = nullptr;
  bool gated = false;
  std::vector<float> g, decay, to_last, KK, L, P, W, U, keys;
  Chunk(const DeltaRuleProblem& p, int64_t C)
      : g(static_cast<size_t>(C)),
        decay(g.size()),
        to_last(g.size()),
        KK(static_cast<size_t>(C * C)),
        L(KK.size()),
        P(KK.size()),
        W(static_cast<size_t>(C * p.value_dim)),
        U(W.size()),
        keys(static_cast<size_t>(C * p.key_dim)) {}
  float between(int64_t t, int64_t j) const { return gated ? std::exp(g[t] - g[j]) : 1.0f; }  // D_tj
};

// Fills everything Chunk holds for positions t0 .. t0+n-1 from S0; P only when asked.
void prepare_chunk(const DeltaRuleProblem& p, const HeadRows& r, int64_t t0, int64_t n, const float* S0, Chunk& c,
                   bool with_reads) {
  const int64_t M = p.key_dim, E = p.value_dim;
  c.t0 = t0, c.n = n, c.gated = r.log_alpha != nullptr;
  c.Q = r.q + t0 * M, c.K = r.k + t0 * M, c.V = r.v + t0 * E, c.beta = r.beta + t0;
  for (int64_t t = 0; t < n; ++t) c.g[t] = (t ? c.g[t - 1] : 0.0f) + (c.gated ? r.log_alpha[t0 + t] : 0.0f);
  for (int64_t t = 0; t < n; ++t) {
    c.decay[t] = std::exp(c.g[t]);
    c.to_last[t] = std::exp(c.g[n - 1] - c.g[t]);
    for (int64_t m = 0; m < M; ++m) c.keys[t * M + m] = c.to_last[t] * c.K[t * M + m];
  }
  float *KK = c.KK.data(), *L = c.L.data();
  gemm(false, true, n, n, M, 1.0f, c.K, M, c.K, M, 0.0f, KK, n);  // (n,n) = K K^T
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < n; ++j) L[t * n + j] = j < t ? c.beta[t] * c.between(t, j) * KK[t * n + j] : 0.0f;
  gemm(false, false, n, E, M, 1.0f, c.K, M, S0, E, 0.0f, c.W.data(), E);  // (n,E) = K S0
  // U solves (I + L) U = diag(beta) (V - diag(e^g) W), one row at a time.
  for (int64_t t = 0; t < n; ++t) {
    float* u = c.U.data() + t * E;
    for (int64_t e = 0; e < E; ++e) u[e] = c.beta[t] * (c.V[t * E + e] - c.decay[t] * c.W[t * E + e]);
    for (int64_t j = 0; j < t; ++j) {
      const float a = L[t * n + j];
      for (int64_t e = 0; e < E; ++e) u[e] -= a * c.U[j * E + e];
    }
  }
  if (!with_reads) return;
  float* P = c.P.data();
  gemm(false, true, n, n, M, 1.0f, c.Q, M, c.K, M, 0.0f, P, n);  // (n,n) = Q K^T
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t j = 0; j <= t; ++j) P[t * n + j] *= c.between(t, j);
    std::fill(P + t * n + t + 1, P + (t + 1) * n, 0.0f);  // key j > query t
  }
}

// S (M,E) past the chunk: e^{g_last} S0 + K'^T U, in place.
void carry_state(const DeltaRuleProblem& p, const Chunk& c, float* S) {
  const int64_t M = p.key_dim, E = p.value_dim;
  if (c.gated)
    for (int64_t i = 0; i < M * E; ++i) S[i] *= c.decay[c.n - 1];
  gemm(true, false, M, E, c.n, 1.0f, c.keys.data(), M, c.U.data(), E, 1.0f, S, E);
}

// Runs body(head, scratch) for every head, the heads shared out among the threads, each thread with
// its own scratch made by make().
template <class Scratch, class Make, class Body>
void for_each_head(const DeltaRuleProblem& p, const Make& make, const Body& body) {
  const int64_t C = chunk_of(p), M = p.key_dim, E = p.value_dim;
  const int64_t work_per_head = p.length * (C * (M + E) + M * E);
  parallel_for(p.heads, work_per_head, [&](int64_t begin, int64_t end) {
    Scratch scratch = make();
    for (int64_t h = begin; h < end; ++h) body(h, scratch);
  });
}

// What the backward adds per thread: the state at each chunk's start, the carried G = dL/dS
// (M,E) and the chunk's gradients: dP and dL (n,n), dU, dR, dW and Q S0 (n,E), dK' (n,M), dg (n).
struct BackwardScratch {
  Chunk chunk;
  std::vector<float> starts, G, dS0, dP, dL, dU, dR, dW, reads, dkeys, dg;
  BackwardScratch(const DeltaRuleProblem& p, int64_t C)
      : chunk(p, C),
        starts(static_cast<size_t>((p.length + C - 1) / C * p.key_dim * p.value_dim)),
        G(static_cast<size_t>(p.key_dim * p.value_dim)),
        dS0(G.size()),
        dP(static_cast<size_t>(C * C)),
        dL(dP.size()),
        dU(static_cast<size_t>(C * p.value_dim)),
        dR(dU.size()),
        dW(dU.size()),
        reads(dU.size()),
        dkeys(static_cast<size_t>(C * p.key_dim)),
        dg(static_cast<size_t>(C)) {}
};

// The chunk's gradients from dO (its rows of dout) and G = dL/dS past it (delta_rule.h): writes its
// rows of dq, dk, dv, dbeta (and dlog_alpha), and leaves dL/dS0 in s.dS0.
void chunk_backward(const DeltaRuleProblem& p, const float* S0, const float* dO, BackwardScratch& s, float* dq,
                    float* dk, float* dv, float* dbeta, float* dlog_alpha) {
  const Chunk& c = s.chunk;
  const int64_t M = p.key_dim, E = p.value_dim, n = c.n;
  const float *L = c.L.data(), *P = c.P.data(), *U = c.U.data(), *G = s.G.data();
  float *dP = s.dP.data(), *dL = s.dL.data(), *dU = s.dU.data(), *dR = s.dR.data(), *dW = s.dW.data();
  float *dQ = dq + c.t0 * M, *dK = dk + c.t0 * M, *dV = dv + c.t0 * E;
  // The outputs O = diag(e^g) Q S0 + P U, and the state S = e^{g_last} S0 + K'^T U.
  gemm(false, false, n, E, M, 1.0f, c.keys.data(), M, G, E, 0.0f, dU, E);  // dU = K' G ...
  gemm(true, false, n, E, n, 1.0f, P, n, dO, E, 1.0f, dU, E);              // ... + P^T dO
  gemm(false, true, n, n, E, 1.0f, dO, E, U, E, 0.0f, dP, n);              // dP = dO U^T, then by D below the diagonal
  std::fill(s.dg.begin(), s.dg.begin() + n, 0.0f);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < n; ++j) {
      if (j > t) {
        dP[t * n + j] = 0;
        continue;
      }
      if (c.gated) {  // d/dg of D_tj = e^{g_t - g_j}: +row, -column
        const float y = dP[t * n + j] * P[t * n + j];
        s.dg[t] += y, s.dg[j] -= y;
      }
      dP[t * n + j] *= c.between(t, j);  // now dL/d(q_t . k_j)
    }
  gemm(false, false, n, M, n, 1.0f, dP, n, c.K, M, 0.0f, dQ, M);  // dQ = dP K ...
  gemm(true, false, n, M, n, 1.0f, dP, n, c.Q, M, 0.0f, dK, M);   // dK = dP^T Q ...
  gemm(false, true, n, M, E, 1.0f, U, E, G, E, 0.0f, s.dkeys.data(), M);  // dK' = U G^T
  gemm(false, false, n, E, M, 1.0f, c.Q, M, S0, E, 0.0f, s.reads.data(), E);  // Q S0
  for (int64_t t = 0; t < n; ++t) {
    double reads_grad = 0, keys_grad = 0;  // dO_t . (Q S0)_t and dK'_t . K'_t, for dg
    for (int64_t e = 0; e < E; ++e) reads_grad += dO[t * E + e] * s.reads[t * E + e];
    for (int64_t m = 0; m < M; ++m) {
      keys_grad += s.dkeys[t * M + m] * c.keys[t * M + m];
      dK[t * M + m] += c.to_last[t] * s.dkeys[t * M + m];
    }
    if (c.gated) {
      s.dg[t] += c.decay[t] * static_cast<float>(reads_grad) - static_cast<float>(keys_grad);
      s.dg[n - 1] += static_cast<float>(keys_grad);
    }
  }
  // ... + diag(e^g) dO S0^T for dQ; and dS0 = e^{g_last} G + Q^T diag(e^g) dO.
  for (int64_t t = 0; t < n; ++t)
    for (int64_t e = 0; e < E; ++e) s.reads[t * E + e] = c.decay[t] * dO[t * E + e];  // diag(e^g) dO
  gemm(false, true, n, M, E, 1.0f, s.reads.data(), E, S0, E, 1.0f, dQ, M);
  const float whole = c.decay[n - 1];
  if (c.gated) {
    double inner = 0;  // <G, S0>
    for (int64_t i = 0; i < M * E; ++i) inner += G[i] * S0[i];
    s.dg[n - 1] += whole * static_cast<float>(inner);
  }
  for (int64_t i = 0; i < M * E; ++i) s.dS0[i] = whole * G[i];
  gemm(true, false, M, E, n, 1.0f, c.Q, M, s.reads.data(), E, 1.0f, s.dS0.data(), E);
  // U = (I + L)^-1 R: dR solves (I + L)^T dR = dU, from the last row up; then dL = -dR U^T below the diagonal.
  for (int64_t t = n - 1; t >= 0; --t) {
    float* r = dR + t * E;
    std::copy_n(dU + t * E, E, r);
    for (int64_t j = t + 1; j < n; ++j) {
      const float a = L[j * n + t];
      for (int64_t e = 0; e < E; ++e) r[e] -= a * dR[j * E + e];
    }
  }
  gemm(false, true, n, n, E, -1.0f, dR, E, U, E, 0.0f, dL, n);
  // L_tj = beta_t D_tj k_t . k_j: dbeta_t, dg, and dL/d(k_t . k_j) (by symmetry into both rows).
  for (int64_t t = 0; t < n; ++t) {
    double d_beta = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (j >= t) {
        dL[t * n + j] = 0;
        continue;
      }
      const float decayed = c.between(t, j) * c.KK[t * n + j];  // D_tj KK_tj
      d_beta += dL[t * n + j] * decayed;
      if (c.gated) {
        const float y = dL[t * n + j] * L[t * n + j];
        s.dg[t] += y, s.dg[j] -= y;
      }
      dL[t * n + j] *= c.beta[t] * c.between(t, j);
    }
    dbeta[c.t0 + t] = static_cast<float>(d_beta);
  }
  gemm(false, false, n, M, n, 1.0f, dL, n, c.K, M, 1.0f, dK, M);  // dK += dKK K + dKK^T K
  gemm(true, false, n, M, n, 1.0f, dL, n, c.K, M, 1.0f, dK, M);
  // R = diag(beta) (V - diag(e^g) W) and W = K S0.
  for (int64_t t = 0; t < n; ++t) {
    double d_beta = 0, d_decay = 0;
    for (int64_t e = 0; e < E; ++e) {
      const float r = dR[t * E + e];
      dV[t * E + e] = c.beta[t] * r;
      d_beta += r * (c.V[t * E + e] - c.decay[t] * c.W[t * E + e]);
      d_decay -= c.beta[t] * r * c.W[t * E + e];
      dW[t * E + e] = -c.beta[t] * c.decay[t] * r;
    }
    dbeta[c.t0 + t] += static_cast<float>(d_beta);
    if (c.gated) s.dg[t] += c.decay[t] * static_cast<float>(d_decay);
  }
  gemm(false, true, n, M, E, 1.0f, dW, E, S0, E, 1.0f, dK, M);            // dK += dW S0^T
  gemm(true, false, M, E, n, 1.0f, c.K, M, dW, E, 1.0f, s.dS0.data(), E);  // dS0 += K^T dW
  if (!c.gated) return;
  // g_t = log alpha_1 + ... + log alpha_t within the chunk: each log alpha_i reaches every g_t, t >= i.
  float later = 0;
  for (int64_t t = n - 1; t >= 0; --t) dlog_alpha[c.t0 + t] = later += s.dg[t];
}

}  // namespace

void delta_rule_forward(const DeltaRuleProblem& p, const float* q, const float* k, const float* v, const float* beta,
                        const float* log_alpha, float* out) {
  const int64_t C = chunk_of(p), T = p.length, M = p.key_dim, E = p.value_dim;
  struct Scratch {
    Chunk chunk;
    std::vector<float> state;
  };
  for_each_head<Scratch>(p, [&] { return Scratch{Chunk(p, C), std::vector<float>(static_cast<size_t>(M * E))}; },
                         [&](int64_t h, Scratch& s) {
                           const HeadRows r = head_rows(p, h, q, k, v, beta, log_alpha);
                           float* S = s.state.data();
                           std::fill(s.state.begin(), s.state.end(), 0.0f);
                           for (int64_t t0 = 0; t0 < T; t0 += C) {
                             Chunk& c = s.chunk;
                             prepare_chunk(p, r, t0, std::min(C, T - t0), S, c, /*with_reads=*/true);
                             // O = diag(e^g) Q S0 + P U
                             float* O = out + (h * T + t0) * E;
                             gemm(false, false, c.n, E, M, 1.0f, c.Q, M, S, E, 0.0f, O, E);
                             for (int64_t t = 0; t < c.n; ++t)
                               for (int64_t e = 0; e < E; ++e) O[t * E + e] *= c.decay[t];
                             gemm(false, false, c.n, E, c.n, 1.0f, c.P.data(), c.n, c.U.data(), E, 1.0f, O, E);
                             carry_state(p, c, S);
                           }
                         });
}

void delta_rule_backward(const DeltaRuleProblem& p, const float* q, const float* k, const float* v, const float* beta,
                         const float* log_alpha, const float* dout, float* dq, float* dk, float* dv, float* dbeta,
                         float* dlog_alpha) {
  const int64_t C = chunk_of(p), T = p.length, M = p.key_dim, E = p.value_dim, ME = M * E;
  for_each_head<BackwardScratch>(p, [&] { return BackwardScratch(p, C); }, [&](int64_t h, BackwardScratch& s) {
    const HeadRows r = head_rows(p, h, q, k, v, beta, log_alpha);
    // The state at each chunk's start, from a forward scan.
    std::fill_n(s.starts.begin(), ME, 0.0f);
    for (int64_t t0 = 0, c = 0; t0 + C < T; t0 += C, ++c) {
      std::copy_n(s.starts.begin() + c * ME, ME, s.starts.begin() + (c + 1) * ME);
      prepare_chunk(p, r, t0, C, s.starts.data() + c * ME, s.chunk, /*with_reads=*/false);
      carry_state(p, s.chunk, s.starts.data() + (c + 1) * ME);
    }
    // Back through the chunks, carrying G = dL/dS from the chunks after.
    std::fill(s.G.begin(), s.G.end(), 0.0f);
    for (int64_t t0 = (T - 1) / C * C; t0 >= 0; t0 -= C) {
      const float* S0 = s.starts.data() + t0 / C * ME;
      prepare_chunk(p, r, t0, std::min(C, T - t0), S0, s.chunk, /*with_reads=*/true);
      chunk_backward(p, S0, dout + (h * T + t0) * E, s, dq + h * T * M, dk + h * T * M, dv + h * T * E, dbeta + h * T,
                     dlog_alpha ? dlog_alpha + h * T : nullptr);
      std::swap(s.G, s.dS0);
    }
  });
}

}  // namespace ladder
