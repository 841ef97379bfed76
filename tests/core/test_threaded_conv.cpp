// Convolution, pooling and batch norm on two threads against the naive convolution or plain loops
// (how: threaded_reference.h).
#include "helpers.h"
#include "threaded_reference.h"

#include <cmath>
#include <vector>

#include "core/kernels/conv.h"

using namespace ladder;
using ladder::testing::check_close;
using ladder::testing::leaf;
using ladder::testing::require_threaded;
using ladder::testing::to_tensor;
using ladder::testing::TwoThreads;

TEST_CASE("conv2d: the threaded im2col, bias, reorder and col2im loops against direct convolution") {
  TwoThreads threads;
  Generator gen(15);
  const int64_t N = 8, C = 3, O = 24;
  const ConvGeometry g{C, 16, 16, 3, 3, 1, 1};  // 16x16 out: L = 256 pixels, patches of P = 27
  require_threaded(N, g.patch() * g.pixels());  // im2col forward, col2im backward: 55296
  require_threaded(N * O, g.pixels());          // bias forward, gy reorder backward: 49152
  const Tensor x = leaf(randn({N, C, 16, 16}, gen)), w = leaf(randn({O, C, 3, 3}, gen)), b = leaf(randn({O}, gen));
  const Tensor y = conv2d(x, w, b, {.stride = 1, .padding = 1});
  Tensor y_naive = empty(y.shape());
  conv2d_naive(x.data(), w.data(), b.data(), y_naive.data(), N, O, g);
  check_close(y, y_naive, 1e-4f, 1e-4f);
  const Tensor gy = randn(y.shape(), gen);
  y.backward(gy);
  Tensor gx = empty(x.shape()), gw = empty(w.shape()), gb = empty(b.shape());
  conv2d_backward_naive(x.data(), w.data(), gy.data(), gx.data(), gw.data(), gb.data(), N, O, g);
  check_close(x.grad(), gx, 1e-4f, 1e-4f);
  check_close(w.grad(), gw, 1e-3f, 1e-4f);
  check_close(b.grad(), gb, 1e-3f, 1e-4f);
}

TEST_CASE("max_pool2d and avg_pool2d: the threaded window loops, tiled and overlapping with padding") {
  TwoThreads threads;
  Generator gen(16);
  const int64_t N = 6, C = 8, H = 32, W = 32, planes = N * C;
  for (Pool2dOptions options : {Pool2dOptions{2, 2, 0}, Pool2dOptions{3, 2, 1}}) {
    CAPTURE(options.kernel);
    const int64_t K = options.kernel, oh = (H + 2 * options.padding - K) / options.stride + 1;
    const int64_t ow = (W + 2 * options.padding - K) / options.stride + 1;
    require_threaded(planes, oh * ow * K * K);  // 48 planes of 16x16 windows
    const Tensor x = leaf(randn({N, C, H, W}, gen));
    const Tensor y_max = max_pool2d(x, options), y_avg = avg_pool2d(x, options);
    const Tensor gy_max = randn(y_max.shape(), gen), gy_avg = randn(y_avg.shape(), gen);
    (sum(y_max * gy_max) + sum(y_avg * gy_avg)).backward();
    std::vector<double> out_max(y_max.numel()), out_avg(y_avg.numel(), 0.0), gx(x.numel(), 0.0);
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t oi = 0; oi < oh; ++oi)
        for (int64_t oj = 0; oj < ow; ++oj) {
          const int64_t o = (p * oh + oi) * ow + oj;
          int64_t best = -1;
          for (int64_t ki = 0; ki < K; ++ki)
            for (int64_t kj = 0; kj < K; ++kj) {
              const int64_t i = oi * options.stride - options.padding + ki, j = oj * options.stride - options.padding + kj;
              if (i < 0 || i >= H || j < 0 || j >= W) continue;  // padding: a zero for the average, never the max
              const int64_t in = (p * H + i) * W + j;
              if (best < 0 || x.data()[in] > x.data()[best]) best = in;
              out_avg[o] += x.data()[in] / static_cast<double>(K * K);
              gx[in] += gy_avg.data()[o] / static_cast<double>(K * K);
            }
          out_max[o] = x.data()[best];
          gx[best] += gy_max.data()[o];
        }
    check_close(y_max, to_tensor(out_max, y_max.shape()), 0);
    check_close(y_avg, to_tensor(out_avg, y_avg.shape()), 1e-6f, 1e-5f);
    check_close(x.grad(), to_tensor(gx, x.shape()), 1e-5f, 1e-5f);
  }
}

TEST_CASE("batch_norm: batch statistics, running statistics and eval, forward and backward, 4-d and 2-d") {
  TwoThreads threads;
  Generator gen(17);
  for (const Shape& shape : {Shape{8, 24, 16, 16}, Shape{2048, 24}}) {
    CAPTURE(shape_str(shape));
    const int64_t N = shape[0], C = shape[1], L = numel(shape) / (N * C), m = N * L;
    require_threaded(C, m);      // statistics forward, the per-channel gradient backward: 49152
    require_threaded(N * C, L);  // the normalisation forward
    for (bool training : {true, false}) {
      CAPTURE(training);
      const Tensor x = leaf(randn(shape, gen) * 2.0f + 0.5f);
      const Tensor w = leaf(randn({C}, gen)), b = leaf(randn({C}, gen));
      const Tensor running_mean = randn({C}, gen), running_var = uniform({C}, 0.5f, 2, gen);
      const Tensor mean_before = running_mean.clone(), var_before = running_var.clone();
      const float momentum = 0.1f, eps = 1e-5f;
      const Tensor y = batch_norm(x, running_mean, running_var, w, b, training, momentum, eps);
      const Tensor gy = randn(shape, gen);
      y.backward(gy);
      // Reference per channel c, over its m values: xhat = (x - mean) rstd, y = xhat w + b;
      // gw = sum(gy xhat), gb = sum(gy); gx = w rstd (gy - [gb + xhat gw] / m), or w rstd gy in eval.
      auto value = [&](const Tensor& t, int64_t n, int64_t c, int64_t l) {
        return static_cast<double>(t.data()[(n * C + c) * L + l]);
      };
      std::vector<double> out(x.numel()), gx(x.numel()), gw(C, 0.0), gb(C, 0.0), new_mean(C), new_var(C);
      for (int64_t c = 0; c < C; ++c) {
        double mu = 0, var = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) mu += value(x, n, c, l) / static_cast<double>(m);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) var += (value(x, n, c, l) - mu) * (value(x, n, c, l) - mu) / static_cast<double>(m);
        new_mean[c] = training ? (1 - momentum) * mean_before.data()[c] + momentum * mu : mean_before.data()[c];
        new_var[c] = training ? (1 - momentum) * var_before.data()[c] + momentum * var * m / (m - 1) : var_before.data()[c];
        if (!training) mu = mean_before.data()[c], var = var_before.data()[c];
        const double rstd = 1 / std::sqrt(var + eps);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) {
            const double xhat = (value(x, n, c, l) - mu) * rstd;
            out[(n * C + c) * L + l] = xhat * w.data()[c] + b.data()[c];
            gw[c] += value(gy, n, c, l) * xhat;
            gb[c] += value(gy, n, c, l);
          }
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) {
            const double xhat = (value(x, n, c, l) - mu) * rstd;
            const double g = value(gy, n, c, l);
            const double centred = training ? g - (gb[c] + xhat * gw[c]) / static_cast<double>(m) : g;
            gx[(n * C + c) * L + l] = w.data()[c] * rstd * centred;
          }
      }
      check_close(y, to_tensor(out, shape), 1e-5f, 1e-5f);
      check_close(running_mean, to_tensor(new_mean, {C}), 1e-6f, 1e-5f);
      check_close(running_var, to_tensor(new_var, {C}), 1e-6f, 1e-5f);
      check_close(x.grad(), to_tensor(gx, shape), 1e-5f, 1e-4f);
      check_close(w.grad(), to_tensor(gw, {C}), 1e-3f, 1e-4f);
      check_close(b.grad(), to_tensor(gb, {C}), 1e-3f, 1e-4f);
    }
  }
}
