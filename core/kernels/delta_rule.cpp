// The delta rule, chunked forward and written-out backward (delta_rule.h has the formulas).
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

// What one thread works in for one chunk: the decays g (C), the written rows U (C,E), the (C,C)
// products K K^T and Q K^T, and the rows K S0 (C,E).
struct ChunkScratch {
  std::vector<float> g, written, keys_keys, queries_keys, read, scaled_keys;
  ChunkScratch(const DeltaRuleProblem& p, int64_t C)
      : g(static_cast<size_t>(C)),
        written(static_cast<size_t>(C * p.value_dim)),
        keys_keys(static_cast<size_t>(C * C)),
        queries_keys(keys_keys.size()),
        read(written.size()),
        scaled_keys(static_cast<size_t>(C * p.key_dim)) {}
};

// Runs body(head) for every head, the heads shared out among the threads, each thread with its own
// scratch made by make().
template <class Scratch, class Make, class Body>
void for_each_head(const DeltaRuleProblem& p, const Make& make, const Body& body) {
  const int64_t C = chunk_of(p), M = p.key_dim, E = p.value_dim;
  const int64_t work_per_head = p.length * (C * (M + E) + M * E);
  parallel_for(p.heads, work_per_head, [&](int64_t begin, int64_t end) {
    Scratch scratch = make();
    for (int64_t h = begin; h < end; ++h) body(h, scratch);
  });
}

// The chunk of n positions from t0 in the UT form: solves for its written rows U, adds to out (T,E)
// its rows when out is given, and carries the state S (M,E) past the chunk.
void advance_chunk(const DeltaRuleProblem& p, const HeadRows& r, int64_t t0, int64_t n, float* S, ChunkScratch& c,
                   float* out) {
  const int64_t M = p.key_dim, E = p.value_dim;
  const float *Q = r.q + t0 * M, *K = r.k + t0 * M, *V = r.v + t0 * E, *beta = r.beta + t0;
  float* g = c.g.data();
  float* U = c.written.data();
  float* KK = c.keys_keys.data();
  for (int64_t t = 0; t < n; ++t) g[t] = (t ? g[t - 1] : 0.0f) + (r.log_alpha ? r.log_alpha[t0 + t] : 0.0f);
  gemm(false, true, n, n, M, 1.0f, K, M, K, M, 0.0f, KK, n);            // (n,n) = K K^T
  gemm(false, false, n, E, M, 1.0f, K, M, S, E, 0.0f, c.read.data(), E);  // (n,E) = K S0
  // Forward substitution of the unit lower-triangular system, one row of U at a time.
  for (int64_t t = 0; t < n; ++t) {
    const float decay = std::exp(g[t]);
    float* u = U + t * E;
    for (int64_t e = 0; e < E; ++e) u[e] = beta[t] * (V[t * E + e] - decay * c.read[t * E + e]);
    for (int64_t j = 0; j < t; ++j) {
      const float a = beta[t] * (r.log_alpha ? std::exp(g[t] - g[j]) : 1.0f) * KK[t * n + j];
      const float* uj = U + j * E;
      for (int64_t e = 0; e < E; ++e) u[e] -= a * uj[e];
    }
  }
  if (out) {
    float* P = c.queries_keys.data();
    float* O = out + t0 * E;
    gemm(false, true, n, n, M, 1.0f, Q, M, K, M, 0.0f, P, n);  // (n,n) = Q K^T
    for (int64_t t = 0; t < n; ++t) {
      if (r.log_alpha)
        for (int64_t j = 0; j <= t; ++j) P[t * n + j] *= std::exp(g[t] - g[j]);
      std::fill(P + t * n + t + 1, P + (t + 1) * n, 0.0f);  // key j > query t
    }
    gemm(false, false, n, E, M, 1.0f, Q, M, S, E, 0.0f, O, E);  // the chunks before: Q S0 ...
    for (int64_t t = 0; t < n; ++t) {
      const float decay = std::exp(g[t]);
      for (int64_t e = 0; e < E; ++e) O[t * E + e] *= decay;  // ... decayed to each position
    }
    gemm(false, false, n, E, n, 1.0f, P, n, U, E, 1.0f, O, E);  // inside the chunk
  }
  // S = e^{g_n} S0 + sum_j e^{g_n - g_j} k_j u_j^T.
  const float* keys = K;
  if (r.log_alpha) {
    const float last = g[n - 1], whole = std::exp(last);
    for (int64_t i = 0; i < M * E; ++i) S[i] *= whole;
    for (int64_t j = 0; j < n; ++j) {
      const float decay = std::exp(last - g[j]);
      for (int64_t m = 0; m < M; ++m) c.scaled_keys[j * M + m] = decay * K[j * M + m];
    }
    keys = c.scaled_keys.data();
  }
  gemm(true, false, M, E, n, 1.0f, keys, M, U, E, 1.0f, S, E);  // (M,E) += K'^T U
}

// What the backward works in for one head: the state at each chunk's start, one chunk's states
// S_{t0-1} .. S_{t0+n-1} and written rows, the carried G (M,E) and two (E) rows.
struct BackwardScratch {
  ChunkScratch chunk;
  std::vector<float> starts, states, written, G, du, read;
  BackwardScratch(const DeltaRuleProblem& p, int64_t C)
      : chunk(p, C),
        starts(static_cast<size_t>((p.length + C - 1) / C * p.key_dim * p.value_dim)),
        states(static_cast<size_t>((C + 1) * p.key_dim * p.value_dim)),
        written(static_cast<size_t>(C * p.value_dim)),
        G(static_cast<size_t>(p.key_dim * p.value_dim)),
        du(static_cast<size_t>(p.value_dim)),
        read(du.size()) {}
};

}  // namespace

void delta_rule_forward(const DeltaRuleProblem& p, const float* q, const float* k, const float* v, const float* beta,
                        const float* log_alpha, float* out) {
  const int64_t C = chunk_of(p), T = p.length, M = p.key_dim, E = p.value_dim;
  struct Scratch {
    ChunkScratch chunk;
    std::vector<float> state;
  };
  for_each_head<Scratch>(p, [&] { return Scratch{ChunkScratch(p, C), std::vector<float>(static_cast<size_t>(M * E))}; },
                         [&](int64_t h, Scratch& s) {
                           const HeadRows r = head_rows(p, h, q, k, v, beta, log_alpha);
                           std::fill(s.state.begin(), s.state.end(), 0.0f);
                           for (int64_t t0 = 0; t0 < T; t0 += C)
                             advance_chunk(p, r, t0, std::min(C, T - t0), s.state.data(), s.chunk, out + h * T * E);
                         });
}

void delta_rule_backward(const DeltaRuleProblem& p, const float* q, const float* k, const float* v, const float* beta,
                         const float* log_alpha, const float* dout, float* dq, float* dk, float* dv, float* dbeta,
                         float* dlog_alpha) {
  const int64_t C = chunk_of(p), T = p.length, M = p.key_dim, E = p.value_dim, ME = M * E;
  for_each_head<BackwardScratch>(p, [&] { return BackwardScratch(p, C); }, [&](int64_t h, BackwardScratch& s) {
    const HeadRows r = head_rows(p, h, q, k, v, beta, log_alpha);
    const float* gout = dout + h * T * E;
    float *hq = dq + h * T * M, *hk = dk + h * T * M, *hv = dv + h * T * E, *hb = dbeta + h * T;
    float* ha = dlog_alpha ? dlog_alpha + h * T : nullptr;
    // The state at each chunk's start, from a forward scan.
    std::vector<float>& starts = s.starts;
    std::fill_n(starts.begin(), ME, 0.0f);
    for (int64_t t0 = 0, c = 0; t0 + C < T; t0 += C, ++c) {
      std::copy_n(starts.begin() + c * ME, ME, starts.begin() + (c + 1) * ME);
      advance_chunk(p, r, t0, C, starts.data() + (c + 1) * ME, s.chunk, nullptr);
    }
    std::fill(s.G.begin(), s.G.end(), 0.0f);
    float* G = s.G.data();
    for (int64_t t0 = (T - 1) / C * C; t0 >= 0; t0 -= C) {
      const int64_t n = std::min(C, T - t0);
      // The chunk's states, one position at a time: states[i] is S_{t0+i-1}, states[0] the start.
      std::copy_n(starts.begin() + t0 / C * ME, ME, s.states.begin());
      for (int64_t i = 0; i < n; ++i) {
        const int64_t t = t0 + i;
        const float alpha = r.log_alpha ? std::exp(r.log_alpha[t]) : 1.0f;
        const float *before = s.states.data() + i * ME, *key = r.k + t * M;
        float* after = s.states.data() + (i + 1) * ME;
        float* u = s.written.data() + i * E;
        for (int64_t e = 0; e < E; ++e) u[e] = 0;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t e = 0; e < E; ++e) u[e] += before[m * E + e] * key[m];
        for (int64_t e = 0; e < E; ++e) u[e] = r.beta[t] * (r.v[t * E + e] - alpha * u[e]);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t e = 0; e < E; ++e) after[m * E + e] = alpha * before[m * E + e] + key[m] * u[e];
      }
      // Backwards through them, carrying G = dL/dS_t.
      for (int64_t i = n - 1; i >= 0; --i) {
        const int64_t t = t0 + i;
        const float alpha = r.log_alpha ? std::exp(r.log_alpha[t]) : 1.0f, b = r.beta[t];
        const float *before = s.states.data() + i * ME, *after = s.states.data() + (i + 1) * ME;
        const float *key = r.k + t * M, *query = r.q + t * M, *grad = gout + t * E, *u = s.written.data() + i * E;
        float *du = s.du.data(), *read = s.read.data();
        float inner = 0;  // <G, S_{t-1}>, with G after this position's output is added
        std::fill_n(du, E, 0.0f);
        std::fill_n(read, E, 0.0f);
        for (int64_t m = 0; m < M; ++m) {
          float dq_m = 0;
          for (int64_t e = 0; e < E; ++e) {
            float& g = G[m * E + e];
            g += query[m] * grad[e];
            dq_m += after[m * E + e] * grad[e];
            inner += g * before[m * E + e];
            du[e] += g * key[m];
            read[e] += before[m * E + e] * key[m];
          }
          hq[t * M + m] = dq_m;
        }
        float d_beta = 0, du_read = 0;
        for (int64_t e = 0; e < E; ++e) {
          hv[t * E + e] = b * du[e];
          d_beta += du[e] * (r.v[t * E + e] - alpha * read[e]);
          du_read += du[e] * read[e];
        }
        hb[t] = d_beta;
        if (ha) ha[t] = alpha * (inner - b * du_read);
        for (int64_t m = 0; m < M; ++m) {
          float dk_m = 0;
          for (int64_t e = 0; e < E; ++e) {
            float& g = G[m * E + e];
            dk_m += g * u[e] - alpha * b * before[m * E + e] * du[e];
            g = alpha * (g - b * key[m] * du[e]);
          }
          hk[t * M + m] = dk_m;
        }
      }
    }
  });
}

}  // namespace ladder
