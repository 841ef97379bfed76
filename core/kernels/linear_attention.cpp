// Causal linear attention's product, chunked (see linear_attention.h for the formulas).
#include "core/kernels/linear_attention.h"

#include <algorithm>
#include <vector>

#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"

namespace ladder {

namespace {

// Zeroes the entries above the diagonal of the (n,n) block `a` (row stride C): key j > query i.
void keep_lower(float* a, int64_t n, int64_t C) {
  for (int64_t i = 0; i < n; ++i) std::fill(a + i * C + i + 1, a + i * C + n, 0.0f);
}

// Runs body(head) for every head, the heads shared out among the threads, each with its own
// scratch: a (C,C) block and an (M,E) state.
template <class Body>
void for_each_head(const CausalProductProblem& p, const Body& body) {
  const int64_t C = p.chunk, M = p.features, E = p.values;
  const int64_t work_per_head = p.length * (std::min(C, p.length) * (M + E) + M * E);
  parallel_for(p.heads, work_per_head, [&](int64_t begin, int64_t end) {
    std::vector<float> block(static_cast<size_t>(C * C)), state(static_cast<size_t>(M * E));
    for (int64_t h = begin; h < end; ++h) body(h, block.data(), state.data());
  });
}

}  // namespace

void causal_product_forward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                            float* out) {
  const int64_t T = p.length, M = p.features, E = p.values, C = p.chunk;
  if (T == 0) return;
  for_each_head(p, [&](int64_t h, float* scores, float* S) {
    const float *qh = q + h * T * M, *kh = k + h * T * M, *vh = v + h * T * E;
    float* oh = out + h * T * E;
    std::fill(S, S + M * E, 0.0f);
    for (int64_t c0 = 0; c0 < T; c0 += C) {
      const int64_t n = std::min(C, T - c0);
      const float *Qc = qh + c0 * M, *Kc = kh + c0 * M, *Vc = vh + c0 * E;
      float* Oc = oh + c0 * E;
      gemm(false, true, n, n, M, 1.0f, Qc, M, Kc, M, 0.0f, scores, C);  // (n,n) = Q_c K_c^T
      keep_lower(scores, n, C);
      gemm(false, false, n, E, n, 1.0f, scores, C, Vc, E, 0.0f, Oc, E);  // inside the chunk
      gemm(false, false, n, E, M, 1.0f, Qc, M, S, E, 1.0f, Oc, E);       // the chunks before
      gemm(true, false, M, E, n, 1.0f, Kc, M, Vc, E, 1.0f, S, E);        // S += K_c^T V_c
    }
  });
}

void causal_product_backward(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                             const float* dout, float* dq, float* dk, float* dv) {
  const int64_t T = p.length, M = p.features, E = p.values, C = p.chunk;
  if (T == 0) return;
  for_each_head(p, [&](int64_t h, float* block, float* state) {
    const float *qh = q + h * T * M, *kh = k + h * T * M, *vh = v + h * T * E, *doh = dout + h * T * E;
    float *dqh = dq + h * T * M, *dkh = dk + h * T * M, *dvh = dv + h * T * E;
    // Forward scan, state = S: dQ_c = tril(dO_c V_c^T) K_c + dO_c S^T.
    std::fill(state, state + M * E, 0.0f);
    for (int64_t c0 = 0; c0 < T; c0 += C) {
      const int64_t n = std::min(C, T - c0);
      const float *Kc = kh + c0 * M, *Vc = vh + c0 * E, *dOc = doh + c0 * E;
      gemm(false, true, n, n, E, 1.0f, dOc, E, Vc, E, 0.0f, block, C);  // (n,n): dout_i . v_j
      keep_lower(block, n, C);
      gemm(false, false, n, M, n, 1.0f, block, C, Kc, M, 0.0f, dqh + c0 * M, M);
      gemm(false, true, n, M, E, 1.0f, dOc, E, state, E, 1.0f, dqh + c0 * M, M);
      gemm(true, false, M, E, n, 1.0f, Kc, M, Vc, E, 1.0f, state, E);
    }
    // Reverse scan, state = G: dK_c = tril(dO_c V_c^T)^T Q_c + V_c G^T, dV_c = tril(Q_c K_c^T)^T dO_c + K_c G.
    std::fill(state, state + M * E, 0.0f);
    for (int64_t c0 = (T - 1) / C * C; c0 >= 0; c0 -= C) {
      const int64_t n = std::min(C, T - c0);
      const float *Qc = qh + c0 * M, *Kc = kh + c0 * M, *Vc = vh + c0 * E, *dOc = doh + c0 * E;
      gemm(false, true, n, n, E, 1.0f, dOc, E, Vc, E, 0.0f, block, C);
      keep_lower(block, n, C);
      gemm(true, false, n, M, n, 1.0f, block, C, Qc, M, 0.0f, dkh + c0 * M, M);
      gemm(false, true, n, M, E, 1.0f, Vc, E, state, E, 1.0f, dkh + c0 * M, M);
      gemm(false, true, n, n, M, 1.0f, Qc, M, Kc, M, 0.0f, block, C);
      keep_lower(block, n, C);
      gemm(true, false, n, E, n, 1.0f, block, C, dOc, E, 0.0f, dvh + c0 * E, E);
      gemm(false, false, n, E, M, 1.0f, Kc, M, state, E, 1.0f, dvh + c0 * E, E);
      gemm(true, false, M, E, n, 1.0f, Qc, M, dOc, E, 1.0f, state, E);  // G += Q_c^T dO_c
    }
  });
}

void causal_product_forward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                  float* out) {
  const int64_t T = p.length, M = p.features, E = p.values;
  for (int64_t h = 0; h < p.heads; ++h)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t e = 0; e < E; ++e) {
        double sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t m = 0; m < M; ++m) dot += double(q[(h * T + i) * M + m]) * k[(h * T + j) * M + m];
          sum += dot * v[(h * T + j) * E + e];
        }
        out[(h * T + i) * E + e] = static_cast<float>(sum);
      }
}

void causal_product_backward_naive(const CausalProductProblem& p, const float* q, const float* k, const float* v,
                                   const float* dout, float* dq, float* dk, float* dv) {
  const int64_t T = p.length, M = p.features, E = p.values;
  std::vector<double> gq(static_cast<size_t>(p.heads * T * M)), gk(gq.size()), gv(static_cast<size_t>(p.heads * T * E));
  for (int64_t h = 0; h < p.heads; ++h)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        const float *qi = q + (h * T + i) * M, *kj = k + (h * T + j) * M;
        const float *vj = v + (h * T + j) * E, *gi = dout + (h * T + i) * E;
        double qk = 0, gv_dot = 0;  // q_i . k_j and dout_i . v_j
        for (int64_t m = 0; m < M; ++m) qk += double(qi[m]) * kj[m];
        for (int64_t e = 0; e < E; ++e) gv_dot += double(gi[e]) * vj[e];
        for (int64_t m = 0; m < M; ++m) {
          gq[(h * T + i) * M + m] += gv_dot * kj[m];
          gk[(h * T + j) * M + m] += gv_dot * qi[m];
        }
        for (int64_t e = 0; e < E; ++e) gv[(h * T + j) * E + e] += qk * gi[e];
      }
  std::transform(gq.begin(), gq.end(), dq, [](double x) { return static_cast<float>(x); });
  std::transform(gk.begin(), gk.end(), dk, [](double x) { return static_cast<float>(x); });
  std::transform(gv.begin(), gv.end(), dv, [](double x) { return static_cast<float>(x); });
}

}  // namespace ladder
