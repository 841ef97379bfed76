#include "core/kernels/conv.h"

#include <algorithm>

namespace ladder {

void im2col(const float* x, const ConvGeometry& g, float* cols, int64_t ld) {
  const int64_t oh = g.out_h(), ow = g.out_w();
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t ki = 0; ki < g.KH; ++ki)
      for (int64_t kj = 0; kj < g.KW; ++kj) {
        float* row = cols + ((c * g.KH + ki) * g.KW + kj) * ld;
        for (int64_t oi = 0; oi < oh; ++oi) {
          const int64_t i = oi * g.stride - g.padding + ki;
          for (int64_t oj = 0; oj < ow; ++oj) {
            const int64_t j = oj * g.stride - g.padding + kj;
            const bool inside = i >= 0 && i < g.H && j >= 0 && j < g.W;
            row[oi * ow + oj] = inside ? x[(c * g.H + i) * g.W + j] : 0.0f;
          }
        }
      }
}

void col2im(const float* cols, const ConvGeometry& g, int64_t ld, float* x) {
  const int64_t oh = g.out_h(), ow = g.out_w();
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t ki = 0; ki < g.KH; ++ki)
      for (int64_t kj = 0; kj < g.KW; ++kj) {
        const float* row = cols + ((c * g.KH + ki) * g.KW + kj) * ld;
        for (int64_t oi = 0; oi < oh; ++oi) {
          const int64_t i = oi * g.stride - g.padding + ki;
          if (i < 0 || i >= g.H) continue;
          for (int64_t oj = 0; oj < ow; ++oj) {
            const int64_t j = oj * g.stride - g.padding + kj;
            if (j >= 0 && j < g.W) x[(c * g.H + i) * g.W + j] += row[oi * ow + oj];
          }
        }
      }
}

void conv2d_naive(const float* x, const float* w, const float* b, float* y, int64_t N, int64_t O,
                  const ConvGeometry& g) {
  const int64_t oh = g.out_h(), ow = g.out_w();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oi = 0; oi < oh; ++oi)
        for (int64_t oj = 0; oj < ow; ++oj) {
          double acc = b ? b[o] : 0.0;
          for (int64_t c = 0; c < g.C; ++c)
            for (int64_t ki = 0; ki < g.KH; ++ki)
              for (int64_t kj = 0; kj < g.KW; ++kj) {
                const int64_t i = oi * g.stride - g.padding + ki, j = oj * g.stride - g.padding + kj;
                if (i < 0 || i >= g.H || j < 0 || j >= g.W) continue;
                acc += static_cast<double>(x[((n * g.C + c) * g.H + i) * g.W + j]) *
                       w[((o * g.C + c) * g.KH + ki) * g.KW + kj];
              }
          y[((n * O + o) * oh + oi) * ow + oj] = static_cast<float>(acc);
        }
}

void conv2d_backward_naive(const float* x, const float* w, const float* gy, float* gx, float* gw,
                           float* gb, int64_t N, int64_t O, const ConvGeometry& g) {
  const int64_t oh = g.out_h(), ow = g.out_w();
  std::fill_n(gx, N * g.C * g.H * g.W, 0.0f);
  std::fill_n(gw, O * g.patch(), 0.0f);
  if (gb) std::fill_n(gb, O, 0.0f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oi = 0; oi < oh; ++oi)
        for (int64_t oj = 0; oj < ow; ++oj) {
          const float go = gy[((n * O + o) * oh + oi) * ow + oj];
          if (gb) gb[o] += go;
          for (int64_t c = 0; c < g.C; ++c)
            for (int64_t ki = 0; ki < g.KH; ++ki)
              for (int64_t kj = 0; kj < g.KW; ++kj) {
                const int64_t i = oi * g.stride - g.padding + ki, j = oj * g.stride - g.padding + kj;
                if (i < 0 || i >= g.H || j < 0 || j >= g.W) continue;
                const int64_t xi = ((n * g.C + c) * g.H + i) * g.W + j;
                const int64_t wi = ((o * g.C + c) * g.KH + ki) * g.KW + kj;
                gx[xi] += go * w[wi];
                gw[wi] += go * x[xi];
              }
        }
}

}  // namespace ladder
