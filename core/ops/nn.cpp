// The math of neural networks: softmax, the losses, layer and RMS norm, dropout, cumsum.
// Softmax, log-softmax, cross entropy and the norms are fused: one kernel forward, one backward.
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/layer_norm.h"
#include "core/kernels/parallel.h"
#include "core/kernels/rms_norm.h"
#include "core/kernels/softmax.h"
#include "core/ops.h"
#include "core/ops/elementwise.h"

namespace ladder {

namespace {

using DimKernel = void (*)(const float*, float*, const ReduceShape&);
using DimBackward = void (*)(const float*, const float*, float*, const ReduceShape&);

// Softmax and log-softmax share everything but their two kernels, which run over any dim: x is
// seen as (outer, n, inner) with n the size of that dim.
Tensor softmax_like(const char* op, const Tensor& x, int64_t dim_in, DimKernel forward, DimBackward backward) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), op);
  const ReduceShape s = reduce_shape(x.shape(), dim, dim);
  Tensor y = empty(x.shape());
  forward(x.data(), y.data(), s);
  return record(op, y, {x}, Saved{y}, [y = y.detach(), s, backward](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = empty(y.shape());
    backward(y.data(), gy.data(), gx.data(), s);
    return {gx};
  });
}

Tensor reduce_loss(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::mean: return mean(losses);
    case Reduction::sum: return sum(losses);
    case Reduction::none: return losses;
  }
  return losses;
}

// normalized_shape must be x's trailing dims, and weight and bias (when given) of that shape.
void check_norm_shapes(const char* op, const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                       const Tensor& bias) {
  const auto k = static_cast<int64_t>(normalized_shape.size());
  if (k == 0 || k > x.dim() || !std::equal(normalized_shape.begin(), normalized_shape.end(), x.shape().end() - k))
    fail(op, "normalized_shape ", shape_str(normalized_shape), " must be the trailing dims of x ",
         shape_str(x.shape()));
  for (const Tensor* p : {&weight, &bias})
    if (p->defined() && p->shape() != normalized_shape)
      fail(op, p == &weight ? "weight" : "bias", " has shape ", shape_str(p->shape()), " but normalized_shape is ",
           shape_str(normalized_shape));
}

void check_same_shape(const Tensor& input, const Tensor& target, const char* op) {
  if (input.shape() != target.shape())
    fail(op, "input has shape ", shape_str(input.shape()), " but target has ", shape_str(target.shape()),
         "; they must match");
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return softmax_like("softmax", x, dim, softmax_dim, softmax_backward_dim);
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  return softmax_like("log_softmax", x, dim, log_softmax_dim, log_softmax_backward_dim);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options) {
  if (logits.dim() < 1) fail("cross_entropy", "logits must have a class dim (the last one), got a scalar");
  if (logits.size(-1) == 0) fail("cross_entropy", "logits ", shape_str(logits.shape()), " have no classes");
  const int64_t classes = logits.size(-1), rows = logits.numel() / std::max<int64_t>(classes, 1);
  const Shape row_shape(logits.shape().begin(), logits.shape().end() - 1);
  if (targets.shape() != row_shape)
    fail("cross_entropy", "logits ", shape_str(logits.shape()), " need targets of shape ", shape_str(row_shape),
         " (one class index per row, the class dim last), got ", shape_str(targets.shape()));
  if (options.weight.defined() && options.weight.shape() != Shape{classes})
    fail("cross_entropy", "weight must have shape (", classes, "), one per class, got ",
         shape_str(options.weight.shape()));

  // Per row r with target t:  loss_r = -w_t * log_softmax(x_r)_t.  Ignored rows have w = 0.
  std::vector<int64_t> target(rows);
  std::vector<float> row_weight(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float t = targets.data()[r];
    if (t == static_cast<float>(options.ignore_index)) {
      target[r] = -1;
      row_weight[r] = 0;
      continue;
    }
    if (t != std::floor(t) || t < 0 || t >= static_cast<float>(classes))
      fail("cross_entropy", "target ", t, " (row ", r, ") is not a class index in [0, ", classes,
           "); targets hold class numbers, not probabilities");
    target[r] = static_cast<int64_t>(t);
    row_weight[r] = options.weight.defined() ? options.weight.data()[target[r]] : 1.0f;
  }
  Tensor log_probs = empty(logits.shape());
  log_softmax_rows(logits.data(), log_probs.data(), rows, classes);

  Tensor losses = empty(row_shape);
  double total = 0, weight_sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float loss = target[r] < 0 ? 0.0f : -row_weight[r] * log_probs.data()[r * classes + target[r]];
    losses.data()[r] = loss;
    total += loss;
    weight_sum += row_weight[r];
  }
  // mean divides by the summed weights of the rows that count (PyTorch's weighted mean).
  const float scale = options.reduction == Reduction::mean ? static_cast<float>(1 / weight_sum) : 1.0f;
  Tensor out = options.reduction == Reduction::none ? losses : scalar(static_cast<float>(total) * scale);

  const Reduction reduction = options.reduction;
  return record("cross_entropy", out, {logits},
                [log_probs, target, row_weight, scale, reduction, classes](const Tensor& gy, NeedsGrad) -> Grads {
                  // d loss_r / d x_r = w_t (softmax(x_r) - onehot(t))
                  Tensor gx = empty(log_probs.shape());
                  const int64_t rows = static_cast<int64_t>(target.size());
                  parallel_for(rows, classes, [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r) {
                      float* out = gx.data() + r * classes;
                      // An ignored row gets exactly 0, selected, not 0 * scale: when every row is ignored
                      // the mean's scale is 1/0, and a product would poison every weight with NaN.
                      if (row_weight[r] == 0) {
                        std::fill_n(out, classes, 0.0f);
                        continue;
                      }
                      const float g = (reduction == Reduction::none ? gy.data()[r] : gy.data()[0] * scale) * row_weight[r];
                      // exercise: cross_entropy_backward
                      const float* lp = log_probs.data() + r * classes;
                      for (int64_t c = 0; c < classes; ++c) out[c] = g * std::exp(lp[c]);
                      if (target[r] >= 0) out[target[r]] -= g;
                      // end of exercise: cross_entropy_backward
                    }
                  });
                  return {gx};
                });
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape(input, target, "mse_loss");
  const Tensor diff = input - target;
  return reduce_loss(diff * diff, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets, Reduction reduction) {
  check_same_shape(logits, targets, "binary_cross_entropy_with_logits");
  // -[t log s(x) + (1-t) log(1-s(x))] = max(x,0) - x t + log(1 + e^-|x|), stable for any x.
  const Tensor losses = binary_op(
      "binary_cross_entropy_with_logits", logits, targets,
      [](float x, float t) { return std::max(x, 0.0f) - x * t + std::log1p(std::exp(-std::fabs(x))); },
      [](float x, float t, float) { return 1.0f / (1.0f + std::exp(-x)) - t; },
      [](float x, float, float) { return -x; });
  return reduce_loss(losses, reduction);
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  float eps) {
  check_norm_shapes("layer_norm", x, normalized_shape, weight, bias);
  const int64_t cols = numel(normalized_shape), rows = cols == 0 ? 0 : x.numel() / cols;
  Tensor y = empty(x.shape()), mean = empty({rows}), rstd = empty({rows});
  const float* gamma = weight.defined() ? weight.data() : nullptr;
  layer_norm_rows(x.data(), gamma, bias.defined() ? bias.data() : nullptr, y.data(), mean.data(), rstd.data(),
                  rows, cols, eps);
  return record("layer_norm", y, {x, weight, bias}, Saved{x, weight},
                [x = x.detach(), weight = weight.defined() ? weight.detach() : Tensor(), mean, rstd,
                 normalized_shape, rows, cols](const Tensor& gy, NeedsGrad needs) -> Grads {
                  Tensor gx = empty(x.shape());
                  Tensor gw = needs[1] ? empty(normalized_shape) : Tensor();
                  Tensor gb = needs[2] ? empty(normalized_shape) : Tensor();
                  layer_norm_backward_rows(x.data(), weight.defined() ? weight.data() : nullptr, mean.data(),
                                           rstd.data(), gy.data(), gx.data(), gw.defined() ? gw.data() : nullptr,
                                           gb.defined() ? gb.data() : nullptr, rows, cols);
                  return {gx, gw, gb};
                });
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, float eps) {
  check_norm_shapes("rms_norm", x, normalized_shape, weight, Tensor());
  const int64_t cols = numel(normalized_shape), rows = cols == 0 ? 0 : x.numel() / cols;
  Tensor y = empty(x.shape()), rstd = empty({rows});
  rms_norm_rows(x.data(), weight.defined() ? weight.data() : nullptr, y.data(), rstd.data(), rows, cols, eps);
  return record("rms_norm", y, {x, weight}, Saved{x, weight},
                [x = x.detach(), weight = weight.defined() ? weight.detach() : Tensor(), rstd, normalized_shape, rows,
                 cols](const Tensor& gy, NeedsGrad needs) -> Grads {
                  Tensor gx = empty(x.shape());
                  Tensor gw = needs[1] ? empty(normalized_shape) : Tensor();
                  rms_norm_backward_rows(x.data(), weight.defined() ? weight.data() : nullptr, rstd.data(), gy.data(),
                                         gx.data(), gw.defined() ? gw.data() : nullptr, rows, cols);
                  return {gx, gw};
                });
}

Tensor dropout(const Tensor& x, float p, bool training, Generator& gen) {
  if (!(p >= 0 && p <= 1)) fail("dropout", "p must be in [0, 1], got ", p);
  if (!training || p == 0) return x;
  // Keep each value with probability 1-p and scale it by 1/(1-p), so the expected value is unchanged.
  const float scale = p == 1 ? 0.0f : 1.0f / (1.0f - p);
  Tensor mask = empty(x.shape());
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data()[i] = gen.uniform() < p ? 0.0f : scale;
  return x * mask;
}

Tensor cumsum(const Tensor& x, int64_t dim_in) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), "cumsum");
  const int64_t n = x.shape()[dim];
  const int64_t outer = numel(Shape(x.shape().begin(), x.shape().begin() + dim));
  const int64_t inner = numel(Shape(x.shape().begin() + dim + 1, x.shape().end()));
  // Running sums along dim of a tensor seen as (outer, n, inner), forwards or backwards, in double.
  auto running_sum = [outer, n, inner](const float* src, float* dst, bool reverse) {
    parallel_for(outer * inner, n, [&](int64_t begin, int64_t end) {
      for (int64_t line = begin; line < end; ++line) {
        const int64_t base = (line / inner) * n * inner + line % inner;
        double acc = 0;
        for (int64_t step = 0; step < n; ++step) {
          const int64_t k = reverse ? n - 1 - step : step;
          acc += src[base + k * inner];
          dst[base + k * inner] = static_cast<float>(acc);
        }
      }
    });
  };
  Tensor y = empty(x.shape());
  running_sum(x.data(), y.data(), false);
  // y_k = sum_{j<=k} x_j, so dL/dx_j = sum_{k>=j} dL/dy_k: a running sum from the other end.
  return record("cumsum", y, {x}, [running_sum](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = empty(gy.shape());
    running_sum(gy.data(), gx.data(), true);
    return {gx};
  });
}

}  // namespace ladder
