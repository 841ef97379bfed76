// The delta rule's naive twins: its recurrence one position at a time, in double precision, with
// every state kept for the backward (delta_rule.h has the formulas).
#include <cmath>
#include <vector>

#include "core/kernels/delta_rule.h"

namespace ladder {

namespace {

// The states S_0 .. S_T (M,E) of one head, S_0 = 0, and the written rows u_t (E), in double.
struct HeadStates {
  std::vector<double> states, written;
};

HeadStates run_head(const DeltaRuleProblem& p, const float* k, const float* v, const float* beta,
                    const float* log_alpha) {
  const int64_t T = p.length, M = p.key_dim, E = p.value_dim;
  HeadStates h{std::vector<double>(static_cast<size_t>((T + 1) * M * E), 0.0), std::vector<double>(static_cast<size_t>(T * E))};
  for (int64_t t = 0; t < T; ++t) {
    const double* before = h.states.data() + t * M * E;
    double* after = h.states.data() + (t + 1) * M * E;
    const double alpha = log_alpha ? std::exp(static_cast<double>(log_alpha[t])) : 1.0;
    double* u = h.written.data() + t * E;
    // exercise: delta_rule_step
    for (int64_t e = 0; e < E; ++e) {
      double read = 0;  // (S_{t-1}^T k_t)_e
      for (int64_t m = 0; m < M; ++m) read += before[m * E + e] * k[t * M + m];
      u[e] = beta[t] * (v[t * E + e] - alpha * read);
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t e = 0; e < E; ++e) after[m * E + e] = alpha * before[m * E + e] + k[t * M + m] * u[e];
    // end of exercise: delta_rule_step
  }
  return h;
}

}  // namespace

void delta_rule_forward_naive(const DeltaRuleProblem& p, const float* q, const float* k, const float* v,
                              const float* beta, const float* log_alpha, float* out) {
  const int64_t T = p.length, M = p.key_dim, E = p.value_dim;
  for (int64_t h = 0; h < p.heads; ++h) {
    const HeadStates s = run_head(p, k + h * T * M, v + h * T * E, beta + h * T, log_alpha ? log_alpha + h * T : nullptr);
    for (int64_t t = 0; t < T; ++t) {
      const double* state = s.states.data() + (t + 1) * M * E;
      for (int64_t e = 0; e < E; ++e) {
        double o = 0;  // (S_t^T q_t)_e
        for (int64_t m = 0; m < M; ++m) o += state[m * E + e] * q[(h * T + t) * M + m];
        out[(h * T + t) * E + e] = static_cast<float>(o);
      }
    }
  }
}

void delta_rule_backward_naive(const DeltaRuleProblem& p, const float* q, const float* k, const float* v,
                               const float* beta, const float* log_alpha, const float* dout, float* dq, float* dk,
                               float* dv, float* dbeta, float* dlog_alpha) {
  const int64_t T = p.length, M = p.key_dim, E = p.value_dim;
  for (int64_t h = 0; h < p.heads; ++h) {
    const float *qh = q + h * T * M, *kh = k + h * T * M, *vh = v + h * T * E, *bh = beta + h * T;
    const float* ah = log_alpha ? log_alpha + h * T : nullptr;
    const float* gh = dout + h * T * E;
    const HeadStates s = run_head(p, kh, vh, bh, ah);
    std::vector<double> G(static_cast<size_t>(M * E), 0.0), du(static_cast<size_t>(E)), read(static_cast<size_t>(E));
    for (int64_t t = T - 1; t >= 0; --t) {
      const double* before = s.states.data() + t * M * E;
      const double* after = s.states.data() + (t + 1) * M * E;
      const double* u = s.written.data() + t * E;
      const double alpha = ah ? std::exp(static_cast<double>(ah[t])) : 1.0;
      for (int64_t m = 0; m < M; ++m) {
        double dq_m = 0;
        for (int64_t e = 0; e < E; ++e) {
          G[m * E + e] += qh[t * M + m] * gh[t * E + e];
          dq_m += after[m * E + e] * gh[t * E + e];
        }
        dq[(h * T + t) * M + m] = static_cast<float>(dq_m);
      }
      double inner = 0;  // <G, S_{t-1}>
      for (int64_t i = 0; i < M * E; ++i) inner += G[i] * before[i];
      double d_beta = 0, du_read = 0;
      for (int64_t e = 0; e < E; ++e) {
        du[e] = 0, read[e] = 0;
        for (int64_t m = 0; m < M; ++m) {
          du[e] += G[m * E + e] * kh[t * M + m];
          read[e] += before[m * E + e] * kh[t * M + m];
        }
        dv[(h * T + t) * E + e] = static_cast<float>(bh[t] * du[e]);
        d_beta += du[e] * (vh[t * E + e] - alpha * read[e]);
        du_read += du[e] * read[e];
      }
      dbeta[h * T + t] = static_cast<float>(d_beta);
      if (dlog_alpha) dlog_alpha[h * T + t] = static_cast<float>(alpha * (inner - bh[t] * du_read));
      for (int64_t m = 0; m < M; ++m) {
        double dk_m = 0;
        for (int64_t e = 0; e < E; ++e) dk_m += G[m * E + e] * u[e] - alpha * bh[t] * before[m * E + e] * du[e];
        dk[(h * T + t) * M + m] = static_cast<float>(dk_m);
      }
      for (int64_t m = 0; m < M; ++m)
        for (int64_t e = 0; e < E; ++e) G[m * E + e] = alpha * (G[m * E + e] - bh[t] * kh[t * M + m] * du[e]);
    }
  }
}

}  // namespace ladder
