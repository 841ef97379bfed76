// Causal linear attention's product, chunked (see linear_attention.h for the formulas).
#include "core/kernels/linear_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/fast_math.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"

namespace ladder {

namespace {

// Zeroes the entries above the diagonal of the (n,n) block `a` (row stride C): key j > query i.
void keep_lower(float* a, int64_t n, int64_t C) {
  for (int64_t i = 0; i < n; ++i) std::fill(a + i * C + i + 1, a + i * C + n, 0.0f);
}

// Positions per chunk: at most the sequence, so that a chunk longer than it sizes no scratch for
// positions that do not exist (a (C,C) block of C = 100000 over 64 positions).
int64_t chunk_of(const CausalProductProblem& p) { return std::max<int64_t>(1, std::min(p.chunk, p.length)); }

// What one thread works in for one head, chunk by chunk: the chunk's feature rows Q, K (C,M), its
// value rows V' (C,E'), output or gradient rows G' and O (C,E'), a (C,C) block and a carried
// (M,E') state, where E' = E + 1 when normalising (the column of ones or of the normaliser).
struct ChunkScratch {
  int64_t wide;  // E'
  std::vector<float> queries, keys, values, grads, rows, block, state;
  explicit ChunkScratch(const CausalProductProblem& p)
      : wide(p.values + (p.normalise ? 1 : 0)),
        queries(static_cast<size_t>(chunk_of(p) * p.features)),
        keys(queries.size()),
        values(static_cast<size_t>(chunk_of(p) * wide)),
        grads(values.size()),
        rows(values.size()),
        block(static_cast<size_t>(chunk_of(p) * chunk_of(p))),
        state(static_cast<size_t>(p.features * wide)) {}
};

// Runs body(head, scratch) for every head, the heads shared out among the threads.
template <class Body>
void for_each_head(const CausalProductProblem& p, const Body& body) {
  const int64_t C = chunk_of(p), M = p.features, E = p.values;
  const int64_t work_per_head = p.length * (C * (M + E) + M * E);
  parallel_for(p.heads, work_per_head, [&](int64_t begin, int64_t end) {
    ChunkScratch scratch(p);
    for (int64_t h = begin; h < end; ++h) body(h, scratch);
  });
}

// dst (n,M) = phi(src rows): elu + 1 or the rows as they are.
void load_features(const CausalProductProblem& p, const float* src, int64_t n, float* dst) {
  const int64_t count = n * p.features;
  if (!p.elu_features) {
    std::copy_n(src, count, dst);
    return;
  }
  for (int64_t i = 0; i < count; ++i) dst[i] = src[i] > 0 ? src[i] + 1.0f : fast_exp(src[i]);
}

// grad (n,M) *= phi'(x), read from the features phi(x): 1 above 0, e^x = phi(x) below, so min(1, phi).
void apply_feature_slope(const CausalProductProblem& p, const float* features, int64_t n, float* grad) {
  if (!p.elu_features) return;
  for (int64_t i = 0; i < n * p.features; ++i) grad[i] *= std::min(1.0f, features[i]);
}

// dst (n,E') = [v rows, 1] when normalising, else the v rows.
void load_values(const CausalProductProblem& p, const float* v, int64_t n, int64_t wide, float* dst) {
  const int64_t E = p.values;
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(v + i * E, E, dst + i * wide);
    if (p.normalise) dst[i * wide + E] = 1.0f;
  }
}

// dst (n,E') = the gradient of [num, den] from dout: [g_i / d_i, -(g_i . y_i) / d_i] when
// normalising (y = out, d = denominators), else dout's rows.
void load_gradients(const CausalProductProblem& p, const float* dout, const float* out, const float* denominators,
                    int64_t n, int64_t wide, float* dst) {
  const int64_t E = p.values;
  for (int64_t i = 0; i < n; ++i) {
    const float* g = dout + i * E;
    if (!p.normalise) {
      std::copy_n(g, E, dst + i * wide);
      continue;
    }
    const float* y = out + i * E;
    float along = 0;
    for (int64_t e = 0; e < E; ++e) {
      dst[i * wide + e] = g[e] / denominators[i];
      along += g[e] * y[e];
    }
    dst[i * wide + E] = -along / denominators[i];
  }
}

}  // namespace

void causal_product_forward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                            float* out, float* denominators) {
  const int64_t T = p.length, M = p.features, E = p.values, C = chunk_of(p);
  if (T == 0) return;
  for_each_head(p, [&](int64_t h, ChunkScratch& s) {
    const int64_t W = s.wide;
    float *Q = s.queries.data(), *K = s.keys.data(), *V = s.values.data(), *O = s.rows.data();
    float *block = s.block.data(), *S = s.state.data();
    std::fill(s.state.begin(), s.state.end(), 0.0f);
    for (int64_t c0 = 0; c0 < T; c0 += C) {
      const int64_t n = std::min(C, T - c0), row0 = h * T + c0;
      load_features(p, q + row0 * M, n, Q);
      load_features(p, k + row0 * M, n, K);
      load_values(p, v + row0 * E, n, W, V);
      gemm(false, true, n, n, M, 1.0f, Q, M, K, M, 0.0f, block, C);  // (n,n) = Q_c K_c^T
      keep_lower(block, n, C);
      gemm(false, false, n, W, n, 1.0f, block, C, V, W, 0.0f, O, W);  // inside the chunk
      gemm(false, false, n, W, M, 1.0f, Q, M, S, W, 1.0f, O, W);      // the chunks before
      gemm(true, false, M, W, n, 1.0f, K, M, V, W, 1.0f, S, W);       // S += K_c^T V'_c
      float* Oc = out + row0 * E;
      for (int64_t i = 0; i < n; ++i) {
        if (!p.normalise) {
          std::copy_n(O + i * W, E, Oc + i * E);
          continue;
        }
        const float d = O[i * W + E] + p.eps;
        denominators[row0 + i] = d;
        for (int64_t e = 0; e < E; ++e) Oc[i * E + e] = O[i * W + e] / d;
      }
    }
  });
}

void causal_product_backward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                             const float* out, const float* denominators, const float* dout, float* dq, float* dk,
                             float* dv) {
  const int64_t T = p.length, M = p.features, E = p.values, C = chunk_of(p);
  if (T == 0) return;
  for_each_head(p, [&](int64_t h, ChunkScratch& s) {
    const int64_t W = s.wide;
    float *Q = s.queries.data(), *K = s.keys.data(), *V = s.values.data(), *G = s.grads.data();
    float *dV = s.rows.data(), *block = s.block.data(), *state = s.state.data();
    // Reads chunk c0's rows into the scratch: n of them.
    const auto load = [&](int64_t c0, bool queries) {
      const int64_t n = std::min(C, T - c0), row0 = h * T + c0;
      if (queries) load_features(p, q + row0 * M, n, Q);
      load_features(p, k + row0 * M, n, K);
      load_values(p, v + row0 * E, n, W, V);
      load_gradients(p, dout + row0 * E, out ? out + row0 * E : nullptr, denominators ? denominators + row0 : nullptr,
                     n, W, G);
      return n;
    };
    // Forward scan, state = S: dQ_c = tril(G'_c V'_c^T) K_c + G'_c S^T.
    std::fill(s.state.begin(), s.state.end(), 0.0f);
    for (int64_t c0 = 0; c0 < T; c0 += C) {
      const int64_t n = load(c0, p.elu_features);  // the queries only for phi'
      float* dQc = dq + (h * T + c0) * M;
      gemm(false, true, n, n, W, 1.0f, G, W, V, W, 0.0f, block, C);  // (n,n): G'_i . v'_j
      keep_lower(block, n, C);
      gemm(false, false, n, M, n, 1.0f, block, C, K, M, 0.0f, dQc, M);
      gemm(false, true, n, M, W, 1.0f, G, W, state, W, 1.0f, dQc, M);
      gemm(true, false, M, W, n, 1.0f, K, M, V, W, 1.0f, state, W);
      apply_feature_slope(p, Q, n, dQc);
    }
    // Reverse scan, state = G: dK_c = tril(G'_c V'_c^T)^T Q_c + V'_c G^T, dV'_c = tril(Q_c K_c^T)^T G'_c + K_c G.
    std::fill(s.state.begin(), s.state.end(), 0.0f);
    for (int64_t c0 = (T - 1) / C * C; c0 >= 0; c0 -= C) {
      const int64_t n = load(c0, true);
      float *dKc = dk + (h * T + c0) * M, *dVc = dv + (h * T + c0) * E;
      gemm(false, true, n, n, W, 1.0f, G, W, V, W, 0.0f, block, C);
      keep_lower(block, n, C);
      gemm(true, false, n, M, n, 1.0f, block, C, Q, M, 0.0f, dKc, M);
      gemm(false, true, n, M, W, 1.0f, V, W, state, W, 1.0f, dKc, M);
      gemm(false, true, n, n, M, 1.0f, Q, M, K, M, 0.0f, block, C);
      keep_lower(block, n, C);
      gemm(true, false, n, W, n, 1.0f, block, C, G, W, 0.0f, dV, W);
      gemm(false, false, n, W, M, 1.0f, K, M, state, W, 1.0f, dV, W);
      gemm(true, false, M, W, n, 1.0f, Q, M, G, W, 1.0f, state, W);  // G += Q_c^T G'_c
      apply_feature_slope(p, K, n, dKc);
      for (int64_t i = 0; i < n; ++i) std::copy_n(dV + i * W, E, dVc + i * E);
    }
  });
}

namespace {

double naive_feature(const CausalProductProblem& p, float x) {
  return p.elu_features ? (x > 0 ? x + 1.0 : std::exp(double(x))) : x;
}

double naive_slope(const CausalProductProblem& p, float x) {
  return p.elu_features ? (x > 0 ? 1.0 : std::exp(double(x))) : 1.0;
}

// a_ij = phi(q_i) . phi(k_j) for one head, in double.
double naive_score(const CausalProductProblem& p, const float* qi, const float* kj) {
  double dot = 0;
  for (int64_t m = 0; m < p.features; ++m) dot += naive_feature(p, qi[m]) * naive_feature(p, kj[m]);
  return dot;
}

// d_i = sum_{j<=i} a_ij + eps when normalising, else 1.
double naive_denominator(const CausalProductProblem& p, const float* q, const float* k, int64_t h, int64_t i) {
  if (!p.normalise) return 1.0;
  const int64_t T = p.length, M = p.features;
  double d = p.eps;
  for (int64_t j = 0; j <= i; ++j) d += naive_score(p, q + (h * T + i) * M, k + (h * T + j) * M);
  return d;
}

}  // namespace

void causal_product_forward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                  float* out) {
  const int64_t T = p.length, M = p.features, E = p.values;
  for (int64_t h = 0; h < p.heads; ++h)
    for (int64_t i = 0; i < T; ++i) {
      const double d = naive_denominator(p, q, k, h, i);
      for (int64_t e = 0; e < E; ++e) {
        double sum = 0;
        for (int64_t j = 0; j <= i; ++j)
          sum += naive_score(p, q + (h * T + i) * M, k + (h * T + j) * M) * v[(h * T + j) * E + e];
        out[(h * T + i) * E + e] = static_cast<float>(sum / d);
      }
    }
}

// By the chain rule on y_i = sum_j a_ij v_j / d_i: dL/da_ij = (g_i . v_j - g_i . y_i) / d_i (the
// second term only when normalising), dv_j += a_ij g_i / d_i, and a_ij's gradient reaches q_i and
// k_j through the features and phi'.
void causal_product_backward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                   const float* dout, float* dq, float* dk, float* dv) {
  const int64_t T = p.length, M = p.features, E = p.values;
  std::vector<double> gq(static_cast<size_t>(p.heads * T * M)), gk(gq.size()), gv(static_cast<size_t>(p.heads * T * E));
  for (int64_t h = 0; h < p.heads; ++h)
    for (int64_t i = 0; i < T; ++i) {
      const float *qi = q + (h * T + i) * M, *gi = dout + (h * T + i) * E;
      const double d = naive_denominator(p, q, k, h, i);
      std::vector<double> y(static_cast<size_t>(E));
      for (int64_t j = 0; j <= i; ++j) {
        const double a = naive_score(p, qi, k + (h * T + j) * M);
        for (int64_t e = 0; e < E; ++e) y[e] += a * v[(h * T + j) * E + e] / d;
      }
      double g_dot_y = 0;
      for (int64_t e = 0; e < E; ++e) g_dot_y += gi[e] * y[e];
      for (int64_t j = 0; j <= i; ++j) {
        const float *kj = k + (h * T + j) * M, *vj = v + (h * T + j) * E;
        const double a = naive_score(p, qi, kj);
        double g_dot_v = 0;
        for (int64_t e = 0; e < E; ++e) g_dot_v += double(gi[e]) * vj[e];
        const double da = (g_dot_v - (p.normalise ? g_dot_y : 0.0)) / d;
        for (int64_t m = 0; m < M; ++m) {
          gq[(h * T + i) * M + m] += da * naive_feature(p, kj[m]) * naive_slope(p, qi[m]);
          gk[(h * T + j) * M + m] += da * naive_feature(p, qi[m]) * naive_slope(p, kj[m]);
        }
        for (int64_t e = 0; e < E; ++e) gv[(h * T + j) * E + e] += a * gi[e] / d;
      }
    }
  std::transform(gq.begin(), gq.end(), dq, [](double x) { return static_cast<float>(x); });
  std::transform(gk.begin(), gk.end(), dk, [](double x) { return static_cast<float>(x); });
  std::transform(gv.begin(), gv.end(), dv, [](double x) { return static_cast<float>(x); });
}

}  // namespace ladder
