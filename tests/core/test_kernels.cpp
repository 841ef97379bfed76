// Each fast kernel against its naive twin, on shapes that exercise threads, tails and edges.
#include "helpers.h"

#include "core/kernels/conv.h"
#include "core/kernels/fast_math.h"
#include "core/kernels/gemm.h"
#include "core/kernels/layer_norm.h"
#include "core/kernels/parallel.h"
#include "core/kernels/softmax.h"

using namespace ladder;
using ladder::testing::check_close;

TEST_CASE("fast_exp agrees with std::exp over the whole float range") {
  float worst = 0;
  for (float x = -87.0f; x < 88.3f; x += 0.0137f) {
    const float fast = fast_exp(x), exact = std::exp(x);
    worst = std::max(worst, std::fabs(fast - exact) / exact);
  }
  CHECK(worst < 4e-7f);  // a few ulp
  for (float x = 88.3f; x < 88.72f; x += 0.01f)  // the top of the range, where n is capped at 127
    CHECK(fast_exp(x) == doctest::Approx(std::exp(x)).epsilon(3e-6));
  CHECK(fast_exp(-INFINITY) == 0);
  CHECK(fast_exp(-100) == 0);
  CHECK(std::isinf(fast_exp(100)));
  CHECK(std::isnan(fast_exp(NAN)));
  CHECK(fast_exp(0) == 1);
}

TEST_CASE("fast_tanh and fast_sigmoid agree with the standard library") {
  float worst_tanh = 0, worst_sigmoid = 0;
  for (float x = -20.0f; x < 20.0f; x += 0.00731f) {
    const float t = std::tanh(x), s = 1.0f / (1.0f + std::exp(-x));
    worst_tanh = std::max(worst_tanh, std::fabs(fast_tanh(x) - t) / std::max(std::fabs(t), 1e-30f));
    worst_sigmoid = std::max(worst_sigmoid, std::fabs(fast_sigmoid(x) - s) / s);
  }
  CHECK(worst_tanh < 5e-7f);
  CHECK(worst_sigmoid < 5e-7f);
  CHECK(fast_tanh(0) == 0);
  CHECK(fast_tanh(1e-6f) == doctest::Approx(1e-6f));
  CHECK(fast_tanh(50) == 1);
  CHECK(fast_tanh(-50) == -1);
  CHECK(std::isnan(fast_tanh(NAN)));
}

TEST_CASE("gemm (OpenBLAS) agrees with the naive loops for every transpose and stride") {
  Generator gen(11);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int64_t M = 37, N = 29, K = 45, pad = 3;  // row strides wider than the matrices
      const Tensor A = randn({ta ? K : M, (ta ? M : K) + pad}, gen);
      const Tensor B = randn({tb ? N : K, (tb ? K : N) + pad}, gen);
      const Tensor C0 = randn({M, N + pad}, gen);
      Tensor fast = C0.clone(), naive = C0.clone();
      gemm(ta, tb, M, N, K, 0.7f, A.data(), A.size(1), B.data(), B.size(1), 0.3f, fast.data(), N + pad);
      gemm_naive(ta, tb, M, N, K, 0.7f, A.data(), A.size(1), B.data(), B.size(1), 0.3f, naive.data(), N + pad);
      check_close(fast, naive, 1e-4f, 1e-5f);
    }
}

TEST_CASE("matmul through the Tensor API agrees with naive GEMMs, batched and threaded") {
  Generator gen(12);
  const Tensor a = randn({3, 64, 96}, gen), b = randn({3, 80, 96}, gen);
  const Tensor out = matmul(a, b, {.transpose_b = true});
  Tensor expected = empty({3, 64, 80});
  for (int64_t i = 0; i < 3; ++i)
    gemm_naive(false, true, 64, 80, 96, 1, a.data() + i * 64 * 96, 96, b.data() + i * 80 * 96, 96, 0,
               expected.data() + i * 64 * 80, 80);
  check_close(out, expected, 1e-4f, 1e-5f);
}

TEST_CASE("softmax and log-softmax kernels agree with their naive twins") {
  Generator gen(13);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 128}, {7, 1}, {3, 1000}, {100, 17}}) {
    const Tensor x = randn({rows, cols}, gen) * 6.0f, gy = randn({rows, cols}, gen);
    Tensor y = empty_like(x), y_naive = empty_like(x), gx = empty_like(x), gx_naive = empty_like(x);
    softmax_rows(x.data(), y.data(), rows, cols);
    softmax_rows_naive(x.data(), y_naive.data(), rows, cols);
    check_close(y, y_naive, 1e-7f, 1e-5f);
    softmax_backward_rows(y.data(), gy.data(), gx.data(), rows, cols);
    softmax_backward_rows_naive(y.data(), gy.data(), gx_naive.data(), rows, cols);
    check_close(gx, gx_naive, 1e-6f, 1e-4f);

    log_softmax_rows(x.data(), y.data(), rows, cols);
    log_softmax_rows_naive(x.data(), y_naive.data(), rows, cols);
    check_close(y, y_naive, 1e-5f, 1e-6f);
    log_softmax_backward_rows(y.data(), gy.data(), gx.data(), rows, cols);
    log_softmax_backward_rows_naive(y.data(), gy.data(), gx_naive.data(), rows, cols);
    check_close(gx, gx_naive, 1e-5f, 1e-4f);
  }
}

TEST_CASE("layer-norm kernels agree with their naive twins, with and without the affine") {
  Generator gen(14);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 128}, {5, 3}, {2, 1000}})
    for (bool affine : {true, false}) {
      const Tensor x = randn({rows, cols}, gen) * 3.0f + 1.0f, gy = randn({rows, cols}, gen);
      const Tensor gamma = randn({cols}, gen), beta = randn({cols}, gen);
      const float* g = affine ? gamma.data() : nullptr;
      const float* b = affine ? beta.data() : nullptr;
      Tensor y = empty_like(x), y_naive = empty_like(x);
      Tensor mean = empty({rows}), rstd = empty({rows}), mean_naive = empty({rows}), rstd_naive = empty({rows});
      layer_norm_rows(x.data(), g, b, y.data(), mean.data(), rstd.data(), rows, cols, 1e-5f);
      layer_norm_rows_naive(x.data(), g, b, y_naive.data(), mean_naive.data(), rstd_naive.data(), rows, cols, 1e-5f);
      check_close(y, y_naive, 1e-5f, 1e-5f);
      check_close(rstd, rstd_naive, 0, 1e-5f);

      Tensor gx = empty_like(x), gx_naive = empty_like(x);
      Tensor gg = empty({cols}), gb = empty({cols}), gg_naive = empty({cols}), gb_naive = empty({cols});
      layer_norm_backward_rows(x.data(), g, mean.data(), rstd.data(), gy.data(), gx.data(), gg.data(), gb.data(), rows,
                               cols);
      layer_norm_backward_rows_naive(x.data(), g, mean.data(), rstd.data(), gy.data(), gx_naive.data(),
                                     gg_naive.data(), gb_naive.data(), rows, cols);
      check_close(gx, gx_naive, 1e-4f, 1e-4f);
      check_close(gg, gg_naive, 1e-3f, 1e-4f);
      check_close(gb, gb_naive, 1e-3f, 1e-4f);
    }
}

TEST_CASE("conv2d (im2col + GEMM) agrees with direct convolution, forward and backward") {
  Generator gen(15);
  struct Case { int64_t N, C, H, W, O, K, stride, padding; };
  for (const Case& c : {Case{2, 3, 9, 7, 4, 3, 1, 0}, Case{3, 2, 8, 8, 5, 3, 2, 1}, Case{1, 1, 5, 5, 1, 5, 1, 2},
                        Case{16, 6, 14, 14, 16, 5, 1, 0}}) {
    const Tensor x = randn({c.N, c.C, c.H, c.W}, gen), w = randn({c.O, c.C, c.K, c.K}, gen), b = randn({c.O}, gen);
    Tensor xg = x.clone(), wg = w.clone(), bg = b.clone();
    xg.requires_grad_();
    wg.requires_grad_();
    bg.requires_grad_();
    const Tensor y = conv2d(xg, wg, bg, {.stride = c.stride, .padding = c.padding});
    const ConvGeometry g{c.C, c.H, c.W, c.K, c.K, c.stride, c.padding};
    Tensor y_naive = empty(y.shape());
    conv2d_naive(x.data(), w.data(), b.data(), y_naive.data(), c.N, c.O, g);
    check_close(y, y_naive, 1e-4f, 1e-4f);

    const Tensor gy = randn(y.shape(), gen);
    y.backward(gy);
    Tensor gx = empty(x.shape()), gw = empty(w.shape()), gb = empty(b.shape());
    conv2d_backward_naive(x.data(), w.data(), gy.data(), gx.data(), gw.data(), gb.data(), c.N, c.O, g);
    check_close(xg.grad(), gx, 1e-4f, 1e-4f);
    check_close(wg.grad(), gw, 1e-3f, 1e-4f);
    check_close(bg.grad(), gb, 1e-3f, 1e-4f);
  }
}

TEST_CASE("results do not depend on whether a kernel runs on one thread or two") {
  Generator gen(16);
  const Tensor x = randn({512, 256}, gen);
  set_num_threads(1);
  const Tensor one = sum(softmax(x) * x, {0});
  set_num_threads(2);
  const Tensor two = sum(softmax(x) * x, {0});
  check_close(one, two, 1e-6f, 1e-6f);
}
