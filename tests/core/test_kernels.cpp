// Each fast kernel against its naive twin, on shapes that exercise threads, tails and edges.
#include "helpers.h"

#include "core/kernels/conv.h"
#include "core/kernels/fast_math.h"
#include "core/kernels/gemm.h"
#include "core/kernels/layer_norm.h"
#include "core/kernels/parallel.h"
#include "core/kernels/reduce.h"
#include "core/kernels/rms_norm.h"
#include "core/kernels/softmax.h"
#include "core/kernels/strided_copy.h"

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

TEST_CASE("fast_expm1 agrees with expm1 from the standard library, near 0 included") {
  double worst = 0;
  for (float x = -20.0f; x < 10.0f; x += 0.000713f) {
    const double exact = std::expm1(static_cast<double>(x));
    if (exact != 0) worst = std::max(worst, std::fabs(fast_expm1(x) - exact) / std::fabs(exact));
  }
  CHECK(worst < 1e-6);  // measured 4.7e-7: a few ulp of e^x, just past the series' reach
  CHECK(fast_expm1(0) == 0);
  CHECK(fast_expm1(1e-30f) == 1e-30f);
  CHECK(fast_expm1(-INFINITY) == -1);
  CHECK(std::isnan(fast_expm1(NAN)));
}

TEST_CASE("fast_normal_cdf agrees with erfc from the standard library, tails included") {
  double worst = 0, worst_tail = 0;  // relative errors for x >= -2 and below
  for (float x = -12.0f; x < 8.0f; x += 0.00317f) {
    const double exact = 0.5 * std::erfc(-static_cast<double>(x) / std::sqrt(2.0));
    double& worst_here = x >= -2 ? worst : worst_tail;
    worst_here = std::max(worst_here, std::fabs(fast_normal_cdf(x) - exact) / exact);
  }
  CHECK(worst < 5e-7);  // the fit's 1.2e-7 and a few roundings
  // -x^2/2 is rounded to a float: its ulp is 8e-6 near -72 (x = -12), and without fused multiply-adds
  // (a build below -O2) the polynomial and that product round once more each.
  CHECK(worst_tail < 1e-5);
  CHECK(fast_normal_cdf(0) == doctest::Approx(0.5f).epsilon(1e-7));
  CHECK(fast_normal_cdf(-INFINITY) == 0);
  CHECK(fast_normal_cdf(INFINITY) == 1);
  CHECK(std::isnan(fast_normal_cdf(NAN)));
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

namespace {

// Runs the enclosing scope on two threads, as the threaded paths need, then restores the count.
struct TwoThreads {
  int before = num_threads();
  TwoThreads() { set_num_threads(2); }
  ~TwoThreads() { set_num_threads(before); }
};

// check_close that also accepts the same non-finite value on both sides (NaN and NaN, inf and inf).
void check_close_or_same(const Tensor& a, const Tensor& b, float atol, float rtol) {
  REQUIRE(a.shape() == b.shape());
  int64_t bad = -1;
  for (int64_t i = 0; i < a.numel() && bad < 0; ++i) {
    const float x = a.data()[i], y = b.data()[i];
    const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
    if (!same && !(std::fabs(x - y) <= atol + rtol * std::fabs(y))) bad = i;
  }
  CHECK_MESSAGE(bad < 0, "element ", bad, ": ", (bad < 0 ? 0 : a.data()[bad]), " vs ", (bad < 0 ? 0 : b.data()[bad]));
}

// Shapes (outer, n, inner) for the reduction and softmax kernels: the two that take the threaded
// loops first (reducing the last dim and dim 0 of a (4096,128) tensor), then odd ones.
const std::vector<ReduceShape> kReduceShapes = {
    {4096, 128, 1}, {1, 4096, 128}, {3, 300, 130},  // threaded: rows, column blocks, partial blocks
    {1, 100000, 1},                                  // one long sum over both threads
    {7, 33, 1}, {5, 17, 3}, {3, 1, 5}, {4, 6, 1}, {1, 1, 1}, {2, 5, 65}};

// Random values with some special ones placed: an all -inf slice, a NaN, a +inf, and ties.
Tensor reduction_input(const ReduceShape& s, Generator& gen) {
  Tensor x = randint(-8, 9, {s.outer, s.n, s.inner}, gen) * 0.5f;  // halves: many ties
  float* p = x.data();
  if (s.outer * s.inner >= 3 && s.n >= 2) {
    for (int64_t k = 0; k < s.n; ++k) p[k * s.inner] = -INFINITY;  // output (0, 0): all -inf
    p[(s.outer - 1) * s.n * s.inner + s.inner - 1] = NAN;         // output (outer-1, inner-1) holds a NaN
    p[(s.n / 2) * s.inner + (s.inner > 1 ? 1 : s.n * s.inner)] = INFINITY;
  }
  return x;
}

}  // namespace

TEST_CASE("reduction kernels agree with their naive twins, threaded, on odd shapes and with -inf, NaN, +inf") {
  TwoThreads threads;
  CHECK(parallel_blocks(4096, 128) == 2);  // the first shapes take the threaded loops
  Generator gen(17);
  for (const ReduceShape& s : kReduceShapes) {
    CAPTURE(s.outer);
    CAPTURE(s.n);
    CAPTURE(s.inner);
    const Tensor x = reduction_input(s, gen), gy = randn({s.outer, s.inner}, gen);
    Tensor fast = empty({s.outer, s.inner}), naive = empty({s.outer, s.inner});
    Tensor gx = empty(x.shape()), gx_naive = empty(x.shape());
    sum_reduce(x.data(), fast.data(), s);
    sum_reduce_naive(x.data(), naive.data(), s);
    check_close_or_same(fast, naive, 1e-4f, 1e-5f);
    for (bool largest : {true, false}) {
      extreme_reduce(x.data(), fast.data(), s, largest);
      extreme_reduce_naive(x.data(), naive.data(), s, largest);
      check_close_or_same(fast, naive, 0, 0);
      extreme_backward(x.data(), fast.data(), gy.data(), gx.data(), s);
      extreme_backward_naive(x.data(), naive.data(), gy.data(), gx_naive.data(), s);
      check_close_or_same(gx, gx_naive, 1e-6f, 1e-6f);
    }
    logsumexp_reduce(x.data(), fast.data(), s);
    logsumexp_reduce_naive(x.data(), naive.data(), s);
    check_close_or_same(fast, naive, 1e-5f, 1e-5f);
    logsumexp_backward(x.data(), fast.data(), gy.data(), gx.data(), s);
    logsumexp_backward_naive(x.data(), naive.data(), gy.data(), gx_naive.data(), s);
    check_close_or_same(gx, gx_naive, 1e-6f, 1e-5f);
  }
  // The placed values did what they should: an all -inf slice, a NaN and a +inf.
  const ReduceShape s{4096, 128, 1};
  const Tensor x = reduction_input(s, gen), gy = ones({4096, 1});
  Tensor y = empty({4096, 1}), gx = empty(x.shape());
  logsumexp_reduce(x.data(), y.data(), s);
  CHECK(y.data()[0] == -INFINITY);
  CHECK(std::isnan(y.data()[4095]));
  logsumexp_backward(x.data(), y.data(), gy.data(), gx.data(), s);
  CHECK(gx.data()[0] == 0);  // not NaN: the all -inf row sends back 0
  extreme_reduce(x.data(), y.data(), s, true);
  CHECK(std::isnan(y.data()[4095]));
  CHECK(y.data()[1] == INFINITY);
}

TEST_CASE("softmax and log-softmax over a middle dim agree with their naive twins, threaded and on odd shapes") {
  TwoThreads threads;
  Generator gen(18);
  for (const ReduceShape& s : kReduceShapes) {
    CAPTURE(s.outer);
    CAPTURE(s.n);
    CAPTURE(s.inner);
    if (s.n > 10000) continue;  // the long sum's shape: a softmax over it adds nothing here
    const Tensor x = randn({s.outer, s.n, s.inner}, gen) * 4.0f, gy = randn(x.shape(), gen);
    Tensor y = empty(x.shape()), y_naive = empty(x.shape()), gx = empty(x.shape()), gx_naive = empty(x.shape());
    softmax_dim(x.data(), y.data(), s);
    softmax_dim_naive(x.data(), y_naive.data(), s);
    check_close(y, y_naive, 1e-7f, 1e-5f);
    softmax_backward_dim(y.data(), gy.data(), gx.data(), s);
    softmax_backward_dim_naive(y.data(), gy.data(), gx_naive.data(), s);
    check_close(gx, gx_naive, 1e-6f, 1e-4f);
    log_softmax_dim(x.data(), y.data(), s);
    log_softmax_dim_naive(x.data(), y_naive.data(), s);
    check_close(y, y_naive, 1e-5f, 1e-6f);
    log_softmax_backward_dim(y.data(), gy.data(), gx.data(), s);
    log_softmax_backward_dim_naive(y.data(), gy.data(), gx_naive.data(), s);
    check_close(gx, gx_naive, 1e-5f, 1e-4f);
  }
}

TEST_CASE("strided_copy agrees with its naive twin: permutes, transposes, slices and their scatter back") {
  TwoThreads threads;
  Generator gen(19);
  // (shape, order): the src strides are x's permuted, dst contiguous
  const std::vector<std::pair<Shape, Dims>> permutes = {
      {{12, 64, 4, 32}, {0, 2, 1, 3}},  // heads <-> sequence: contiguous rows of 32, threaded
      {{4096, 128}, {1, 0}},            // a transpose: tiles, threaded
      {{6, 40, 50}, {0, 2, 1}},         // batched transpose
      {{20, 30, 40}, {2, 0, 1}},        // the innermost src dim lands outermost
      {{37, 53}, {1, 0}},               // not a multiple of the tile
      {{3, 1, 5, 1, 7}, {2, 0, 4, 1, 3}},
      {{100, 1}, {1, 0}},
      {{5}, {0}},
      {{2, 3, 4}, {0, 1, 2}},
  };
  for (const auto& [shape, order] : permutes) {
    CAPTURE(shape_str(shape));
    const Tensor x = randn(shape, gen);
    const Shape x_strides = contiguous_strides(shape);
    Shape sizes, strides;
    for (int64_t d : order) {
      sizes.push_back(shape[d]);
      strides.push_back(x_strides[d]);
    }
    Tensor fast = empty(sizes), naive = empty(sizes);
    strided_copy(x.data(), strides, fast.data(), contiguous_strides(sizes), sizes);
    strided_copy_naive(x.data(), strides, naive.data(), contiguous_strides(sizes), sizes);
    check_close(fast, naive, 0);
    check_close(fast, permute(x, order), 0);  // and the op takes this kernel
  }
  // A slice with step 3 along dim 1 of (400, 90, 5), read (forward) and written back (backward).
  const Shape x_shape{400, 90, 5}, sizes{400, 30, 5};
  const Shape strides{450, 15, 1}, packed = contiguous_strides(sizes);
  const Tensor x = randn(x_shape, gen);
  Tensor fast = empty(sizes), naive = empty(sizes);
  strided_copy(x.data() + 5, strides, fast.data(), packed, sizes);
  strided_copy_naive(x.data() + 5, strides, naive.data(), packed, sizes);
  check_close(fast, naive, 0);
  Tensor back = zeros(x_shape), back_naive = zeros(x_shape);
  strided_copy(fast.data(), packed, back.data() + 5, strides, sizes);
  strided_copy_naive(fast.data(), packed, back_naive.data() + 5, strides, sizes);
  check_close(back, back_naive, 0);
  Tensor one = empty({});
  strided_copy(x.data() + 7, {}, one.data(), {}, {});
  CHECK(one.item() == x.data()[7]);
}

TEST_CASE("rms-norm kernels agree with their naive twins, with and without the weight") {
  TwoThreads threads;
  Generator gen(20);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 128}, {7, 1}, {3, 1000}, {100, 17}})
    for (bool weighted : {true, false}) {
      const Tensor x = randn({rows, cols}, gen) * 3.0f + 0.5f, gy = randn({rows, cols}, gen);
      const Tensor gamma = randn({cols}, gen);
      const float* g = weighted ? gamma.data() : nullptr;
      Tensor y = empty_like(x), y_naive = empty_like(x), rstd = empty({rows}), rstd_naive = empty({rows});
      rms_norm_rows(x.data(), g, y.data(), rstd.data(), rows, cols, 1e-6f);
      rms_norm_rows_naive(x.data(), g, y_naive.data(), rstd_naive.data(), rows, cols, 1e-6f);
      check_close(y, y_naive, 1e-5f, 1e-5f);
      check_close(rstd, rstd_naive, 0, 1e-5f);
      Tensor gx = empty_like(x), gx_naive = empty_like(x), gg = empty({cols}), gg_naive = empty({cols});
      rms_norm_backward_rows(x.data(), g, rstd.data(), gy.data(), gx.data(), gg.data(), rows, cols);
      rms_norm_backward_rows_naive(x.data(), g, rstd.data(), gy.data(), gx_naive.data(), gg_naive.data(), rows, cols);
      check_close(gx, gx_naive, 1e-4f, 1e-4f);
      check_close(gg, gg_naive, 1e-3f, 1e-4f);
    }
}

TEST_CASE("where and masked_fill walk the broadcast of three operands on two threads, as plain loops do") {
  TwoThreads threads;
  Generator gen(21);
  const Tensor scores = randn({12, 4, 64, 64}, gen), other = randn({4, 1, 64}, gen);
  Tensor mask = empty({64, 64});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data()[i] = gen.uniform() < 0.3f ? 1.0f : 0.0f;
  CHECK(parallel_blocks(scores.numel(), 1) == 2);
  const Tensor y = where(mask, other, scores), filled = masked_fill(scores, reshape(mask, {1, 1, 64, 64}), -1e9f);
  int64_t wrong = 0;
  for (int64_t b = 0; b < 12; ++b)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 64; ++i)
        for (int64_t j = 0; j < 64; ++j) {
          const int64_t at = ((b * 4 + h) * 64 + i) * 64 + j;
          const bool masked = mask.data()[i * 64 + j] != 0;
          wrong += y.data()[at] != (masked ? other.data()[h * 64 + j] : scores.data()[at]);
          wrong += filled.data()[at] != (masked ? -1e9f : scores.data()[at]);
        }
  CHECK(wrong == 0);
}
