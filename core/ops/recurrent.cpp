// Recurrent layers, fused: a whole sequence per op, with a hand-written backward through time.
//
// Every layer works the same way. Forward: the input projection x W_ih^T + b for all T steps in
// one GEMM; then per step one GEMM adds h_{t-1} W_hh^T and one loop applies the gates. Backward:
// per step one loop for the gate derivatives and one GEMM sends the gradient to h_{t-1}; after
// the loop, three GEMMs over all steps at once give dx, dW_ih and dW_hh. (The classic GRU needs
// two GEMMs per step each way: its candidate multiplies R_t * h_{t-1}, known only after the gates.)
// Buffers are allocated once per call, never per step.
#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/fast_math.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"

namespace ladder {

namespace {

struct LayerDims {
  int64_t T, B, I, H;
};

LayerDims check_layer(const char* op, int64_t gates, const Tensor& x, const Tensor& h0, const Tensor& w_ih,
                      const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  if (x.dim() != 3) fail(op, "expects input (T,B,I), got ", shape_str(x.shape()), " (batch_first is handled by the module)");
  const int64_t T = x.size(0), B = x.size(1), I = x.size(2);
  if (w_hh.dim() != 2 || w_hh.size(0) % gates != 0 || w_hh.size(1) * gates != w_hh.size(0))
    fail(op, "w_hh must be (", gates, "*H, H), got ", shape_str(w_hh.shape()));
  const int64_t H = w_hh.size(1);
  if (w_ih.shape() != Shape{gates * H, I})
    fail(op, "w_ih must be (", gates * H, ", ", I, ") for input ", shape_str(x.shape()), ", got ", shape_str(w_ih.shape()));
  for (const Tensor* b : {&b_ih, &b_hh})
    if (b->shape() != Shape{gates * H}) fail(op, "biases must be (", gates * H, "), got ", shape_str(b->shape()));
  if (h0.shape() != Shape{B, H}) fail(op, "the initial state must be (", B, ", ", H, "), got ", shape_str(h0.shape()));
  if (T == 0) fail(op, "the sequence is empty");
  return {T, B, I, H};
}

int64_t step_at(int64_t s, int64_t T, bool reverse) { return reverse ? T - 1 - s : s; }

// out (T*B, G) = x (T*B, I) @ w_ih^T + bias_a (+ bias_b): every step's input projection at once.
Tensor input_projection(const Tensor& x, const Tensor& w_ih, const float* bias_a, const float* bias_b) {
  const int64_t rows = x.size(0) * x.size(1), I = x.size(2), G = w_ih.size(0);
  Tensor out = empty({x.size(0), x.size(1), G});
  gemm(false, true, rows, G, I, 1.0f, x.data(), I, w_ih.data(), I, 0.0f, out.data(), G);
  float* po = out.data();
  parallel_for(rows, G, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t g = 0; g < G; ++g) po[r * G + g] += bias_a[g] + (bias_b ? bias_b[g] : 0.0f);
  });
  return out;
}

// out (cols) = the sums of the rows of m (rows, cols) with row stride ld: a bias gradient.
void column_sums(const float* m, int64_t rows, int64_t cols, int64_t ld, float* out) {
  std::fill_n(out, cols, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c] += m[r * ld + c];
}

// Where step t found its previous state: h0 for the first step, else the state of the step before.
const float* previous_state(const float* h0, const float* states, int64_t t, int64_t T, int64_t B, int64_t stride,
                            bool reverse) {
  const bool first = reverse ? t == T - 1 : t == 0;
  return first ? h0 : states + (reverse ? t + 1 : t - 1) * B * stride;
}

// prev (T, B, H): the previous state of every step, gathered for the one dW_hh GEMM.
Tensor previous_states(const float* h0, const float* states, int64_t T, int64_t B, int64_t H, int64_t stride, bool reverse) {
  Tensor prev = empty({T, B, H});
  for (int64_t t = 0; t < T; ++t) {
    const float* src = previous_state(h0, states, t, T, B, stride, reverse);
    const int64_t ld = src == h0 ? H : stride;
    for (int64_t b = 0; b < B; ++b) std::copy_n(src + b * ld, H, prev.data() + (t * B + b) * H);
  }
  return prev;
}

// The three GEMMs after the loop: dx = dpre @ W_ih, dW_ih = dpre^T x, dW_hh = dpre_h^T prev.
// dpre (T*B, G) holds the gradients of the pre-activations fed by x; dpre_h those fed by h.
// Only the first hh_rows rows of dW_hh are filled (the classic GRU computes its last H itself).
void weight_gradients(const Tensor& x, const Tensor& w_ih, const float* dpre, const float* dpre_h, const Tensor& prev,
                      int64_t hh_rows, NeedsGrad needs, Grads& grads, int64_t i_x, int64_t i_wih, int64_t i_whh, int64_t i_bih,
                      int64_t i_bhh) {
  const int64_t rows = x.size(0) * x.size(1), I = x.size(2), G = w_ih.size(0), H = prev.size(2);
  if (needs[i_x]) {
    grads[i_x] = empty(x.shape());
    gemm(false, false, rows, I, G, 1.0f, dpre, G, w_ih.data(), I, 0.0f, grads[i_x].data(), I);
  }
  if (needs[i_wih]) {
    grads[i_wih] = empty(w_ih.shape());
    gemm(true, false, G, I, rows, 1.0f, dpre, G, x.data(), I, 0.0f, grads[i_wih].data(), I);
  }
  if (needs[i_whh]) {
    grads[i_whh] = empty({G, H});
    gemm(true, false, hh_rows, H, rows, 1.0f, dpre_h, G, prev.data(), H, 0.0f, grads[i_whh].data(), H);
  }
  if (needs[i_bih]) {
    grads[i_bih] = empty({G});
    column_sums(dpre, rows, G, G, grads[i_bih].data());
  }
  if (needs[i_bhh]) {
    grads[i_bhh] = empty({G});
    column_sums(dpre_h, rows, G, G, grads[i_bhh].data());
  }
}

}  // namespace

// ---- vanilla RNN ----

Tensor rnn_layer(const Tensor& x, const Tensor& h0, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                 const Tensor& b_hh, bool relu, bool reverse) {
  const auto [T, B, I, H] = check_layer("rnn_layer", 1, x, h0, w_ih, w_hh, b_ih, b_hh);
  Tensor out = input_projection(x, w_ih, b_ih.data(), b_hh.data());  // (T,B,H); each step finishes its slice
  float* po = out.data();
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = step_at(s, T, reverse);
    const float* prev = previous_state(h0.data(), po, t, T, B, H, reverse);
    float* ht = po + t * B * H;
    gemm(false, true, B, H, H, 1.0f, prev, H, w_hh.data(), H, 1.0f, ht, H);  // += h_{t-1} W_hh^T
    parallel_for(B * H, 8, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t k = begin; k < end; ++k) ht[k] = relu ? std::max(ht[k], 0.0f) : fast_tanh(ht[k]);
    });
  }
  return record("rnn_layer", out, {x, h0, w_ih, w_hh, b_ih, b_hh}, Saved{x, h0, w_ih, w_hh, out},
                [x = x.detach(), h0 = h0.detach(), w_ih = w_ih.detach(), w_hh = w_hh.detach(), out = out.detach(), T, B, H,
                 relu, reverse](const Tensor& gy, NeedsGrad needs) -> Grads {
                  // dpre_t = (dy_t + dh_next) * act'(pre_t);  dh_next = dpre_t W_hh
                  Tensor dpre = empty({T, B, H}), dh = zeros({B, H});
                  const float *po = out.data(), *pg = gy.data();
                  for (int64_t s = T - 1; s >= 0; --s) {
                    const int64_t t = step_at(s, T, reverse);
                    float* d = dpre.data() + t * B * H;
                    const float* y = po + t * B * H;
#pragma omp simd
                    for (int64_t k = 0; k < B * H; ++k) {
                      const float slope = relu ? (y[k] > 0 ? 1.0f : 0.0f) : 1 - y[k] * y[k];
                      d[k] = (pg[t * B * H + k] + dh.data()[k]) * slope;
                    }
                    gemm(false, false, B, H, H, 1.0f, d, H, w_hh.data(), H, 0.0f, dh.data(), H);
                  }
                  Grads grads(6);
                  if (needs[1]) grads[1] = dh;
                  const Tensor prev = previous_states(h0.data(), po, T, B, H, H, reverse);
                  weight_gradients(x, w_ih, dpre.data(), dpre.data(), prev, H, needs, grads, 0, 2, 3, 4, 5);
                  return grads;
                });
}

// ---- LSTM ----

Tensor lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih, const Tensor& w_hh,
                  const Tensor& b_ih, const Tensor& b_hh, bool reverse) {
  const auto [T, B, I, H] = check_layer("lstm_layer", 4, x, h0, w_ih, w_hh, b_ih, b_hh);
  if (c0.shape() != h0.shape()) fail("lstm_layer", "the initial cell state must be ", shape_str(h0.shape()), ", got ", shape_str(c0.shape()));
  const int64_t G = 4 * H, S = 2 * H;  // gates per row; state row: h then c
  Tensor gates = input_projection(x, w_ih, b_ih.data(), b_hh.data());  // (T,B,4H), activated in place below
  Tensor out = empty({T, B, S});
  float *pgates = gates.data(), *po = out.data();
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = step_at(s, T, reverse);
    const bool first = s == 0;
    const float* h_prev = previous_state(h0.data(), po, t, T, B, S, reverse);
    const float* c_prev = previous_state(c0.data(), po + H, t, T, B, S, reverse);  // c sits after h in each state row
    const int64_t ld = first ? H : S;
    float* gt = pgates + t * B * G;
    gemm(false, true, B, G, H, 1.0f, h_prev, ld, w_hh.data(), H, 1.0f, gt, G);  // += h_{t-1} W_hh^T
    float* st = po + t * B * S;
    parallel_for(B, H * 32, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        float* g = gt + b * G;
#pragma omp simd  // the four gate blocks and the state rows never overlap
        for (int64_t j = 0; j < H; ++j) {
          const float i = fast_sigmoid(g[j]), f = fast_sigmoid(g[H + j]), cand = fast_tanh(g[2 * H + j]),
                      o = fast_sigmoid(g[3 * H + j]);
          g[j] = i, g[H + j] = f, g[2 * H + j] = cand, g[3 * H + j] = o;
          const float c = f * c_prev[b * ld + j] + i * cand;
          st[b * S + H + j] = c;
          st[b * S + j] = o * fast_tanh(c);
        }
      }
    });
  }
  return record("lstm_layer", out, {x, h0, c0, w_ih, w_hh, b_ih, b_hh}, Saved{x, h0, c0, w_ih, w_hh, out},
                [x = x.detach(), h0 = h0.detach(), c0 = c0.detach(), w_ih = w_ih.detach(), w_hh = w_hh.detach(),
                 gates = gates.detach(), out = out.detach(), T, B, H, reverse](const Tensor& gy, NeedsGrad needs) -> Grads {
                  const int64_t G = 4 * H, S = 2 * H;
                  // Per step, from dh = dy_h + dh_next and dc = dy_c + dc_next + dh o (1 - tanh^2 c):
                  //   di = dc g i(1-i), df = dc c_prev f(1-f), dg = dc i (1-g^2), do = dh tanh(c) o(1-o),
                  //   dc_next = dc f,  dh_next = [di df dg do] W_hh
                  Tensor dpre = empty({T, B, G}), dh = zeros({B, H}), dc = zeros({B, H});
                  const float *pgates = gates.data(), *po = out.data(), *pg = gy.data();
                  for (int64_t s = T - 1; s >= 0; --s) {
                    const int64_t t = step_at(s, T, reverse);
                    const bool first = s == 0;
                    const float* c_prev = previous_state(c0.data(), po + H, t, T, B, S, reverse);
                    const int64_t ld = first ? H : S;
                    float* d = dpre.data() + t * B * G;
                    parallel_for(B, H * 32, [&](int64_t begin, int64_t end) {
                      for (int64_t b = begin; b < end; ++b)
#pragma omp simd
                        for (int64_t j = 0; j < H; ++j) {
                          const float* g = pgates + (t * B + b) * G;
                          const float i = g[j], f = g[H + j], cand = g[2 * H + j], o = g[3 * H + j];
                          const float c = po[(t * B + b) * S + H + j], tc = fast_tanh(c);
                          const float dht = pg[(t * B + b) * S + j] + dh.data()[b * H + j];
                          const float dct = pg[(t * B + b) * S + H + j] + dc.data()[b * H + j] + dht * o * (1 - tc * tc);
                          float* db = d + b * G;
                          db[j] = dct * cand * i * (1 - i);
                          db[H + j] = dct * c_prev[b * ld + j] * f * (1 - f);
                          db[2 * H + j] = dct * i * (1 - cand * cand);
                          db[3 * H + j] = dht * tc * o * (1 - o);
                          dc.data()[b * H + j] = dct * f;
                        }
                    });
                    gemm(false, false, B, H, G, 1.0f, d, G, w_hh.data(), H, 0.0f, dh.data(), H);
                  }
                  Grads grads(7);
                  if (needs[1]) grads[1] = dh;
                  if (needs[2]) grads[2] = dc;
                  const Tensor prev = previous_states(h0.data(), po, T, B, H, S, reverse);
                  weight_gradients(x, w_ih, dpre.data(), dpre.data(), prev, G, needs, grads, 0, 3, 4, 5, 6);
                  return grads;
                });
}

// ---- GRU ----

Tensor gru_layer(const Tensor& x, const Tensor& h0, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                 const Tensor& b_hh, GRUVariant variant, bool reverse) {
  const auto [T, B, I, H] = check_layer("gru_layer", 3, x, h0, w_ih, w_hh, b_ih, b_hh);
  const int64_t G = 3 * H;
  const bool classic = variant == GRUVariant::classic;
  // gates (T,B,3H): x W_ih^T + b_ih, then r, z, n after activation. saved (T,B,H): what n's
  // backward needs from h: r * h_{t-1} (classic) or h_{t-1} W_hn^T + b_hn (pytorch).
  Tensor gates = input_projection(x, w_ih, b_ih.data(), nullptr), saved = empty({T, B, H}), out = empty({T, B, H});
  Tensor hw = empty({B, G});  // this step's h_{t-1} W_hh^T + b_hh (classic: the r and z parts, then n's)
  float *pgates = gates.data(), *psaved = saved.data(), *po = out.data(), *phw = hw.data();
  const float *pw = w_hh.data(), *pb = b_hh.data();
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = step_at(s, T, reverse);
    const float* h_prev = previous_state(h0.data(), po, t, T, B, H, reverse);
    float *gt = pgates + t * B * G, *sv = psaved + t * B * H, *ht = po + t * B * H;
    for (int64_t b = 0; b < B; ++b) std::copy_n(pb, classic ? 2 * H : G, phw + b * G);
    gemm(false, true, B, classic ? 2 * H : G, H, 1.0f, h_prev, H, pw, H, 1.0f, phw, G);
    parallel_for(B, 16 * H, [&](int64_t begin, int64_t end) {  // r and z; for pytorch also n and h
      for (int64_t b = begin; b < end; ++b) {
        float *g = gt + b * G, *svb = sv + b * H, *hb = ht + b * H;
        const float *w = phw + b * G, *hp = h_prev + b * H;
        // Two loops, not one with a branch inside: GCC vectorises neither half of a loop whose
        // stores depend on the variant.
        if (classic) {
#pragma omp simd
          for (int64_t j = 0; j < H; ++j) {
            g[j] = fast_sigmoid(g[j] + w[j]);
            g[H + j] = fast_sigmoid(g[H + j] + w[H + j]);
            svb[j] = g[j] * hp[j];
          }
        } else {
#pragma omp simd
          for (int64_t j = 0; j < H; ++j) {
            g[j] = fast_sigmoid(g[j] + w[j]);
            g[H + j] = fast_sigmoid(g[H + j] + w[H + j]);
            svb[j] = w[2 * H + j];
            g[2 * H + j] = fast_tanh(g[2 * H + j] + g[j] * w[2 * H + j]);
            hb[j] = g[H + j] * hp[j] + (1 - g[H + j]) * g[2 * H + j];
          }
        }
      }
    });
    if (!classic) continue;
    // The classic candidate reads (r * h_{t-1}) W_hn^T + b_hn: a second GEMM, after r is known.
    for (int64_t b = 0; b < B; ++b) std::copy_n(pb + 2 * H, H, phw + b * G + 2 * H);
    gemm(false, true, B, H, H, 1.0f, sv, H, pw + 2 * H * H, H, 1.0f, phw + 2 * H, G);
    parallel_for(B, 16 * H, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b)
#pragma omp simd
      for (int64_t j = 0; j < H; ++j) {
        const int64_t k = b * H + j;
        float* g = gt + b * G;
        g[2 * H + j] = fast_tanh(g[2 * H + j] + phw[b * G + 2 * H + j]);
        ht[k] = g[H + j] * h_prev[k] + (1 - g[H + j]) * g[2 * H + j];
      }
    });
  }
  return record("gru_layer", out, {x, h0, w_ih, w_hh, b_ih, b_hh}, Saved{x, h0, w_ih, w_hh, out},
                [x = x.detach(), h0 = h0.detach(), w_ih = w_ih.detach(), w_hh = w_hh.detach(), gates = gates.detach(),
                 saved = saved.detach(), out = out.detach(), T, B, H, classic, reverse](const Tensor& gy, NeedsGrad needs) -> Grads {
                  const int64_t G = 3 * H;
                  // Per step, with dh = dy + dh_next:  dn = dh (1-z) (1-n^2),  dz = dh (h_prev - n) z(1-z),
                  // dh_prev = dh z + ...;  classic: d(r h) = dn W_hn, dr = d(r h) h_prev r(1-r), dh_prev += d(r h) r;
                  // pytorch: dr = dn (h W_hn^T + b_hn) r(1-r), and n's part of dh_prev comes through dn r.
                  Tensor dpre = empty({T, B, G});                      // the pre-activations fed by x
                  Tensor dpre_h = classic ? Tensor() : empty({T, B, G});  // fed by h (pytorch: n's part times r)
                  Tensor dh = zeros({B, H}), drh = empty({B, H}), dh_direct = empty({B, H});
                  const float *pgates = gates.data(), *psaved = saved.data(), *po = out.data(), *pg = gy.data();
                  const float* pw = w_hh.data();
                  for (int64_t s = T - 1; s >= 0; --s) {
                    const int64_t t = step_at(s, T, reverse);
                    const float* h_prev = previous_state(h0.data(), po, t, T, B, H, reverse);
                    float* d = dpre.data() + t * B * G;
                    float* dhh = classic ? d : dpre_h.data() + t * B * G;
                    for (int64_t b = 0; b < B; ++b)
#pragma omp simd
                    for (int64_t j = 0; j < H; ++j) {  // the update gate and the candidate
                      const int64_t k = b * H + j;
                      const float* g = pgates + (t * B + b) * G;
                      const float z = g[H + j], n = g[2 * H + j];
                      const float dht = pg[t * B * H + k] + dh.data()[k];
                      d[b * G + H + j] = dht * (h_prev[k] - n) * z * (1 - z);
                      d[b * G + 2 * H + j] = dht * (1 - z) * (1 - n * n);
                      dh_direct.data()[k] = dht * z;
                    }
                    if (!classic) {  // the reset gate, and the pre-activations fed by h (a loop of its own: see the forward)
                      for (int64_t b = 0; b < B; ++b)
#pragma omp simd
                      for (int64_t j = 0; j < H; ++j) {
                        const float r = pgates[(t * B + b) * G + j], dn = d[b * G + 2 * H + j];
                        d[b * G + j] = dn * psaved[(t * B + b) * H + j] * r * (1 - r);
                        dhh[b * G + j] = d[b * G + j], dhh[b * G + H + j] = d[b * G + H + j];
                        dhh[b * G + 2 * H + j] = dn * r;
                      }
                    } else {  // d(r h) = dn W_hn, then the reset gate and r's share of dh_prev
                      gemm(false, false, B, H, H, 1.0f, d + 2 * H, G, pw + 2 * H * H, H, 0.0f, drh.data(), H);
                      for (int64_t b = 0; b < B; ++b)
#pragma omp simd
                      for (int64_t j = 0; j < H; ++j) {
                        const int64_t k = b * H + j;
                        const float r = pgates[(t * B + b) * G + j];
                        d[b * G + j] = drh.data()[k] * h_prev[k] * r * (1 - r);
                        dh_direct.data()[k] += drh.data()[k] * r;
                      }
                    }
                    // dh_prev = the direct part + the gate pre-activations fed by h, times W_hh
                    std::copy_n(dh_direct.data(), B * H, dh.data());
                    gemm(false, false, B, H, classic ? 2 * H : G, 1.0f, dhh, G, pw, H, 1.0f, dh.data(), H);
                  }
                  Grads grads(6);
                  if (needs[1]) grads[1] = dh;
                  const Tensor prev = previous_states(h0.data(), po, T, B, H, H, reverse);
                  weight_gradients(x, w_ih, dpre.data(), classic ? dpre.data() : dpre_h.data(), prev, classic ? 2 * H : G, needs, grads, 0,
                                   2, 3, 4, 5);
                  if (classic && needs[3]) {  // the candidate rows of W_hh read r * h_{t-1}, not h_{t-1}
                    gemm(true, false, H, H, T * B, 1.0f, dpre.data() + 2 * H, G, psaved, H, 0.0f,
                         grads[3].data() + 2 * H * H, H);
                  }
                  return grads;
                });
}

}  // namespace ladder
