// The naive twins of Transformer-VQ attention: the quadratic softmax over every key a query sees, in
// double, with the gradient semantics of vq_attention.h written out key by key.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/vq_attention.h"
#include "core/kernels/vq_attention_blocks.h"

namespace ladder {

namespace {

double dot(const float* a, const float* b, int64_t D) {
  double sum = 0;
  for (int64_t d = 0; d < D; ++d) sum += static_cast<double>(a[d]) * b[d];
  return sum;
}

bool sees(const VQAttentionProblem& p, const vq::HeadData& h, int64_t i, int64_t j) {
  return h.codes[j] >= 0 && (!p.causal || j <= i);
}

// Query i's softmax weights over the keys j of its head (0 for the keys it does not see), in double.
std::vector<double> naive_row(const VQAttentionProblem& p, const vq::HeadData& h, int64_t i) {
  const int64_t T = p.length, D = p.dim;
  std::vector<double> probs(T, 0.0);
  double m = -INFINITY;
  for (int64_t j = 0; j < T; ++j) {
    if (!sees(p, h, i, j)) continue;
    double score = dot(h.q + i * D, h.khat + j * D, D);
    const int64_t row = vq::offset_row(p, i, j);
    if (p.position_bias && row >= 0) score += dot(h.position_queries + i * D, h.offsets + row * D, D);
    probs[j] = p.scale * score;
    m = std::max(m, probs[j]);
  }
  if (m == -INFINITY) return std::vector<double>(T, 0.0);  // it sees no key: no weight anywhere
  double sum = 0;
  for (int64_t j = 0; j < T; ++j) sum += (probs[j] = sees(p, h, i, j) ? std::exp(probs[j] - m) : 0.0);
  for (double& x : probs) x /= sum;
  return probs;
}

void to_float(const std::vector<double>& from, float* to) {
  std::transform(from.begin(), from.end(), to, [](double x) { return static_cast<float>(x); });
}

}  // namespace

void vq_attention_forward_naive(const VQAttentionProblem& p, const VQAttentionInputs& in, float* out) {
  const int64_t T = p.length, D = p.dim;
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh) {
    const vq::HeadData h = vq::head_data(p, in, bh);
    for (int64_t i = 0; i < T; ++i) {
      const std::vector<double> probs = naive_row(p, h, i);
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < T; ++j) acc += probs[j] * h.v[j * D + d];
        out[(bh * T + i) * D + d] = static_cast<float>(acc);
      }
    }
  }
}

void vq_attention_backward_naive(const VQAttentionProblem& p, const VQAttentionInputs& in, const float* dout,
                                 const VQAttentionGrads& grads) {
  const int64_t T = p.length, D = p.dim, L = p.block, size = p.batch * p.heads * T * D;
  const int64_t offset_size = p.position_bias ? vq_offset_rows(p) * D : 0;
  std::vector<double> gq(size, 0.0), gk(size, 0.0), gv(size, 0.0), gqp(size, 0.0), gr(p.heads * offset_size, 0.0);
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh) {
    const vq::HeadData h = vq::head_data(p, in, bh);
    const int64_t at = bh * T * D, r_at = (bh % p.heads) * offset_size;
    for (int64_t i = 0; i < T; ++i) {
      const std::vector<double> probs = naive_row(p, h, i);
      const float *qi = h.q + i * D, *gi = dout + at + i * D;
      // dprobs_j = dout_i . v_j;  dscores_j = probs_j * (dprobs_j - sum_l probs_l dprobs_l)
      std::vector<double> dprobs(T);
      double row_sum = 0;
      for (int64_t j = 0; j < T; ++j) row_sum += probs[j] * (dprobs[j] = dot(gi, h.v + j * D, D));
      for (int64_t j = 0; j < T; ++j) {
        if (probs[j] == 0) continue;
        const double ds = p.scale * probs[j] * (dprobs[j] - row_sum);
        const int64_t apart = i / L - j / L;                        // blocks between query and key
        const bool read_exactly = p.causal ? apart <= 1 : std::abs(apart) <= 1;  // in i's window, not through its code
        const bool learns = !p.stop_cache_gradient || apart == 0;  // key j and value j learn from query i
        const int64_t row = p.position_bias ? vq::offset_row(p, i, j) : -1;
        for (int64_t d = 0; d < D; ++d) {
          gq[at + i * D + d] += ds * h.khat[j * D + d];
          if (read_exactly && learns) gk[at + j * D + d] += ds * qi[d];
          if (learns) gv[at + j * D + d] += probs[j] * gi[d];
          if (row < 0) continue;
          gqp[at + i * D + d] += ds * h.offsets[row * D + d];
          gr[r_at + row * D + d] += ds * h.position_queries[i * D + d];
        }
      }
    }
  }
  to_float(gq, grads.dq);
  to_float(gk, grads.dkhat);
  to_float(gv, grads.dv);
  if (!p.position_bias) return;
  to_float(gqp, grads.dposition_queries);
  to_float(gr, grads.doffsets);
}

}  // namespace ladder
