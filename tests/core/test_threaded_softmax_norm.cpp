// Softmax, log_softmax, cross entropy and layer norm on two threads against their naive kernels
// or plain loops (how: threaded_reference.h).
#include "helpers.h"
#include "threaded_reference.h"

#include <cmath>
#include <vector>

#include "core/kernels/layer_norm.h"
#include "core/kernels/softmax.h"

using namespace ladder;
using ladder::testing::at;
using ladder::testing::check_close;
using ladder::testing::leaf;
using ladder::testing::require_threaded;
using ladder::testing::to_tensor;
using ladder::testing::TwoThreads;

TEST_CASE("softmax and log_softmax over the last dim: the fused row kernels against their naive twins") {
  TwoThreads threads;
  Generator gen(12);
  const int64_t rows = 601, cols = 97;
  require_threaded(rows, cols);  // forward and backward split the rows
  const Tensor x = randn({rows, cols}, gen) * 4.0f, gy = randn({rows, cols}, gen);
  for (bool log_space : {false, true}) {
    CAPTURE(log_space);
    const Tensor xl = leaf(x);
    const Tensor y = log_space ? log_softmax(xl, -1) : softmax(xl, -1);
    y.backward(gy);
    Tensor y_naive = empty_like(x), gx_naive = empty_like(x);
    if (log_space) {
      log_softmax_rows_naive(x.data(), y_naive.data(), rows, cols);
      log_softmax_backward_rows_naive(y_naive.data(), gy.data(), gx_naive.data(), rows, cols);
    } else {
      softmax_rows_naive(x.data(), y_naive.data(), rows, cols);
      softmax_backward_rows_naive(y_naive.data(), gy.data(), gx_naive.data(), rows, cols);
    }
    check_close(y, y_naive, 1e-6f, 1e-5f);
    check_close(xl.grad(), gx_naive, 1e-5f, 1e-4f);
  }
}

TEST_CASE("cross_entropy: class weights, ignore_index and every reduction, forward and backward") {
  TwoThreads threads;
  Generator gen(13);
  const int64_t classes = 97, rows = 20 * 30;
  require_threaded(rows, classes);  // log_softmax_rows forward, the gradient loop backward
  const Tensor logits = randn({20, 30, classes}, gen) * 3.0f;
  const Tensor targets = randint(0, classes, {20, 30}, gen), weight = uniform({classes}, 0.2f, 2, gen);
  const int64_t ignored = 5;  // a real class index: its rows count for nothing
  for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none}) {
    CAPTURE(static_cast<int>(reduction));
    const Tensor x = leaf(logits);
    const Tensor loss = cross_entropy(x, targets, {.weight = weight, .ignore_index = ignored, .reduction = reduction});
    const Tensor gy = reduction == Reduction::none ? randn({20, 30}, gen) : scalar(1.5f);
    loss.backward(gy);
    // Reference: loss_r = -w_t log p_r[t] with p_r = softmax(x_r); d loss_r / d x_r = w_t (p_r - onehot(t)).
    std::vector<double> losses(rows, 0.0), log_p(x.numel()), gx(x.numel(), 0.0);
    double total = 0, weight_sum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * classes;
      double m = xr[0], s = 0;
      for (int64_t c = 0; c < classes; ++c) m = std::max<double>(m, xr[c]);
      for (int64_t c = 0; c < classes; ++c) s += std::exp(xr[c] - m);
      for (int64_t c = 0; c < classes; ++c) log_p[r * classes + c] = xr[c] - m - std::log(s);
      const int64_t t = at(targets, r);
      if (t == ignored) continue;
      losses[r] = -weight.data()[t] * log_p[r * classes + t];
      total += losses[r];
      weight_sum += weight.data()[t];
    }
    const double scale = reduction == Reduction::mean ? 1 / weight_sum : 1;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = at(targets, r);
      if (t == ignored) continue;
      const double g = (reduction == Reduction::none ? gy.data()[r] : gy.item() * scale) * weight.data()[t];
      for (int64_t c = 0; c < classes; ++c) gx[r * classes + c] = g * (std::exp(log_p[r * classes + c]) - (c == t ? 1 : 0));
    }
    if (reduction == Reduction::none) check_close(loss, to_tensor(losses, {20, 30}), 1e-5f, 1e-5f);
    else check_close(loss, scalar(static_cast<float>(total * scale)), 0, 1e-5f);
    check_close(x.grad(), to_tensor(gx, x.shape()), 1e-6f, 1e-4f);
  }
}

TEST_CASE("layer_norm over one and two trailing dims, with and without the affine, against the naive kernels") {
  TwoThreads threads;
  Generator gen(14);
  const Shape shape{64, 6, 101};
  for (const Shape& normalized : {Shape{101}, Shape{6, 101}}) {
    CAPTURE(shape_str(normalized));
    const int64_t cols = numel(normalized), rows = numel(shape) / cols;  // (384, 101) or (64, 606)
    require_threaded(rows, cols);  // the forward rows and the backward blocks with their partial sums
    for (bool affine : {true, false}) {
      CAPTURE(affine);
      const Tensor x = leaf(randn(shape, gen) * 2.0f + 1.0f);
      const Tensor w = affine ? leaf(randn(normalized, gen)) : Tensor(), b = affine ? leaf(randn(normalized, gen)) : Tensor();
      const Tensor y = layer_norm(x, normalized, w, b);
      const Tensor gy = randn(shape, gen);
      y.backward(gy);
      const float* gamma = affine ? w.data() : nullptr;
      Tensor y_naive = empty(shape), mean = empty({rows}), rstd = empty({rows}), gx = empty(shape);
      Tensor gw = empty(normalized), gb = empty(normalized);
      layer_norm_rows_naive(x.data(), gamma, affine ? b.data() : nullptr, y_naive.data(), mean.data(), rstd.data(),
                            rows, cols, 1e-5f);
      layer_norm_backward_rows_naive(x.data(), gamma, mean.data(), rstd.data(), gy.data(), gx.data(), gw.data(),
                                     gb.data(), rows, cols);
      check_close(y, y_naive, 1e-5f, 1e-5f);
      check_close(x.grad(), gx, 1e-4f, 1e-4f);
      if (!affine) continue;
      check_close(w.grad(), gw, 1e-3f, 1e-4f);
      check_close(b.grad(), gb, 1e-3f, 1e-4f);
    }
  }
}
