// Image ops on (N,C,H,W) tensors: convolution (im2col + one GEMM), pooling, batch norm.
#include <cmath>
#include <limits>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/conv.h"
#include "core/kernels/gemm.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"

namespace ladder {

namespace {

void check_image(const Tensor& x, const char* op) {
  if (x.dim() != 4) fail(op, "expects input (N,C,H,W), got shape ", shape_str(x.shape()), "; unsqueeze a single image");
}

ConvGeometry geometry(const Tensor& x, int64_t kh, int64_t kw, int64_t stride, int64_t padding, const char* op) {
  if (stride < 1) fail(op, "stride must be at least 1, got ", stride);
  if (padding < 0) fail(op, "padding must not be negative, got ", padding);
  const ConvGeometry g{x.size(1), x.size(2), x.size(3), kh, kw, stride, padding};
  if (g.H + 2 * padding < kh || g.W + 2 * padding < kw)
    fail(op, "kernel ", kh, "x", kw, " is larger than the padded input ", g.H + 2 * padding, "x", g.W + 2 * padding,
         " (input shape ", shape_str(x.shape()), ", padding ", padding, ")");
  return g;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Conv2dOptions options) {
  check_image(x, "conv2d");
  if (weight.dim() != 4 || weight.size(1) != x.size(1))
    fail("conv2d", "weight must be (out_channels, ", x.size(1), ", KH, KW) for input ", shape_str(x.shape()),
         ", got ", shape_str(weight.shape()));
  const int64_t N = x.size(0), O = weight.size(0);
  if (bias.defined() && bias.shape() != Shape{O})
    fail("conv2d", "bias must have shape (", O, "), got ", shape_str(bias.shape()));
  const ConvGeometry g = geometry(x, weight.size(2), weight.size(3), options.stride, options.padding, "conv2d");
  const int64_t P = g.patch(), L = g.pixels(), NL = N * L;

  // cols (P, N*L): the patch under every output pixel of every image, side by side.
  Tensor cols = empty({P, NL});
  parallel_for(N, P * L, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) im2col(x.data() + n * g.C * g.H * g.W, g, cols.data() + n * L, NL);
  });
  // One GEMM for the whole batch: (O, P) @ (P, N*L) -> (O, N*L), then reorder to (N, O, OH, OW).
  Tensor y_t = empty({O, NL});
  gemm(false, false, O, NL, P, 1.0f, weight.data(), P, cols.data(), NL, 0.0f, y_t.data(), NL);
  Tensor out = empty({N, O, g.out_h(), g.out_w()});
  parallel_for(N * O, L, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / O, o = r % O;
      const float b = bias.defined() ? bias.data()[o] : 0.0f;
      const float* src = y_t.data() + o * NL + n * L;
      float* dst = out.data() + r * L;
      for (int64_t l = 0; l < L; ++l) dst[l] = src[l] + b;
    }
  });
  return record("conv2d", out, {x, weight, bias}, Saved{weight},
                [weight = weight.detach(), cols, g, N, O](const Tensor& gy, NeedsGrad needs) -> Grads {
                  const int64_t P = g.patch(), L = g.pixels(), NL = N * L;
                  Tensor gy_t = empty({O, NL});  // gy reordered to (O, N*L), the layout of the forward GEMM
                  parallel_for(N * O, L, [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r)
                      std::copy_n(gy.data() + r * L, L, gy_t.data() + (r % O) * NL + (r / O) * L);
                  });
                  Tensor gx, gw, gb;
                  if (needs[0]) {  // dcols = W^T dY, then each column goes back to its pixels
                    Tensor gcols = empty({P, NL});
                    gemm(true, false, P, NL, O, 1.0f, weight.data(), P, gy_t.data(), NL, 0.0f, gcols.data(), NL);
                    gx = zeros({N, g.C, g.H, g.W});
                    parallel_for(N, P * L, [&](int64_t begin, int64_t end) {
                      for (int64_t n = begin; n < end; ++n)
                        col2im(gcols.data() + n * L, g, NL, gx.data() + n * g.C * g.H * g.W);
                    });
                  }
                  if (needs[1]) {  // dW = dY cols^T
                    gw = empty(weight.shape());
                    gemm(false, true, O, P, NL, 1.0f, gy_t.data(), NL, cols.data(), NL, 0.0f, gw.data(), P);
                  }
                  if (needs[2]) gb = sum(gy_t, {1});
                  return {gx, gw, gb};
                });
}

namespace {

// The output size of a pooling window sliding over the input, with the options checked.
ConvGeometry pool_geometry(const Tensor& x, Pool2dOptions& options, const char* op) {
  check_image(x, op);
  if (options.kernel < 1) fail(op, "kernel must be at least 1, got ", options.kernel);
  if (options.stride == 0) options.stride = options.kernel;
  if (options.padding > options.kernel / 2)
    fail(op, "padding ", options.padding, " is more than half the kernel ", options.kernel);
  return geometry(x, options.kernel, options.kernel, options.stride, options.padding, op);
}

}  // namespace

Tensor max_pool2d(const Tensor& x, Pool2dOptions options) {
  const ConvGeometry g = pool_geometry(x, options, "max_pool2d");
  const int64_t planes = x.size(0) * g.C, oh = g.out_h(), ow = g.out_w();
  Tensor out = empty({x.size(0), g.C, oh, ow});
  std::vector<int64_t> argmax(static_cast<size_t>(out.numel()));  // where in x each output came from
  const float* px = x.data();
  float* po = out.data();
  parallel_for(planes, oh * ow * g.KH * g.KW, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float* plane = px + p * g.H * g.W;
      for (int64_t oi = 0; oi < oh; ++oi)
        for (int64_t oj = 0; oj < ow; ++oj) {
          // The window, clipped to the image: padding never wins.
          const int64_t i0 = std::max<int64_t>(oi * g.stride - g.padding, 0), i1 = std::min(oi * g.stride - g.padding + g.KH, g.H);
          const int64_t j0 = std::max<int64_t>(oj * g.stride - g.padding, 0), j1 = std::min(oj * g.stride - g.padding + g.KW, g.W);
          int64_t at = i0 * g.W + j0;
          float best = plane[at];
          for (int64_t i = i0; i < i1; ++i)
            for (int64_t j = j0; j < j1; ++j)
              if (plane[i * g.W + j] > best || plane[i * g.W + j] != plane[i * g.W + j])  // NaN wins, as in PyTorch
                best = plane[i * g.W + j], at = i * g.W + j;
          const int64_t o = (p * oh + oi) * ow + oj;
          po[o] = best;
          argmax[static_cast<size_t>(o)] = p * g.H * g.W + at;
        }
    }
  });
  return record("max_pool2d", out, {x}, [x_shape = x.shape(), argmax](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = zeros(x_shape);  // each output sends its gradient to the input that won its window
    float* pd = gx.data();
    const float* pg = gy.data();
    for (size_t o = 0; o < argmax.size(); ++o) pd[argmax[o]] += pg[o];
    return {gx};
  });
}

Tensor avg_pool2d(const Tensor& x, Pool2dOptions options) {
  const ConvGeometry g = pool_geometry(x, options, "avg_pool2d");
  const int64_t planes = x.size(0) * g.C, oh = g.out_h(), ow = g.out_w();
  const float inv_area = 1.0f / static_cast<float>(g.KH * g.KW);  // padding counts, as in PyTorch's default
  // Visits (output, input) pairs of every window; shared by forward and backward.
  auto for_each_window = [g, planes, oh, ow](auto&& visit) {
    parallel_for(planes, oh * ow * g.KH * g.KW, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p)
        for (int64_t oi = 0; oi < oh; ++oi)
          for (int64_t oj = 0; oj < ow; ++oj)
            for (int64_t ki = 0; ki < g.KH; ++ki)
              for (int64_t kj = 0; kj < g.KW; ++kj) {
                const int64_t i = oi * g.stride - g.padding + ki, j = oj * g.stride - g.padding + kj;
                if (i >= 0 && i < g.H && j >= 0 && j < g.W) visit((p * oh + oi) * ow + oj, (p * g.H + i) * g.W + j);
              }
    });
  };
  Tensor out = zeros({x.size(0), g.C, oh, ow});
  for_each_window([&](int64_t o, int64_t in) { out.data()[o] += x.data()[in] * inv_area; });
  return record("avg_pool2d", out, {x}, [x_shape = x.shape(), for_each_window, inv_area](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = zeros(x_shape);
    for_each_window([&](int64_t o, int64_t in) { gx.data()[in] += gy.data()[o] * inv_area; });
    return {gx};
  });
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, float momentum, float eps) {
  if (x.dim() < 2) fail("batch_norm", "expects input (N,C) or (N,C,H,W), got shape ", shape_str(x.shape()));
  const int64_t N = x.size(0), C = x.size(1), L = x.numel() / std::max<int64_t>(N * C, 1), count = N * L;
  for (const Tensor* p : {&running_mean, &running_var, &weight, &bias})
    if (p->defined() && p->shape() != Shape{C})
      fail("batch_norm", "running statistics, weight and bias must have shape (", C, "), one per channel of ",
           shape_str(x.shape()), ", got ", shape_str(p->shape()));
  if (running_mean.defined() != running_var.defined())
    fail("batch_norm", "give both running_mean and running_var, or neither");
  const bool use_batch_stats = training || !running_mean.defined();
  if (use_batch_stats && count < 2)
    fail("batch_norm", "training needs more than one value per channel to compute a variance, got input shape ",
         shape_str(x.shape()));

  // x seen as (N, C, L): channel c owns the N slabs x[n, c, :] of L contiguous values.
  const float* px = x.data();
  Tensor mean = empty({C}), rstd = empty({C});
  if (training && running_mean.defined()) {  // updated in place below
    running_mean.mark_modified();
    running_var.mark_modified();
  }
  parallel_for(C, count, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double mu, var;
      if (use_batch_stats) {
        double s = 0, ss = 0;
        for (int64_t n = 0; n < N; ++n) {
          const float* slab = px + (n * C + c) * L;
          float part = 0;
#pragma omp simd reduction(+ : part)
          for (int64_t l = 0; l < L; ++l) part += slab[l];
          s += part;
        }
        mu = s / static_cast<double>(count);
        const auto m = static_cast<float>(mu);
        for (int64_t n = 0; n < N; ++n) {  // a second pass on centred values: no cancellation
          const float* slab = px + (n * C + c) * L;
          float part = 0;
#pragma omp simd reduction(+ : part)
          for (int64_t l = 0; l < L; ++l) part += (slab[l] - m) * (slab[l] - m);
          ss += part;
        }
        var = ss / static_cast<double>(count);
        if (training && running_mean.defined()) {  // running_var tracks the unbiased variance
          float& rm = running_mean.data()[c];
          float& rv = running_var.data()[c];
          rm = static_cast<float>((1 - momentum) * rm + momentum * mu);
          rv = static_cast<float>((1 - momentum) * rv + momentum * var * static_cast<double>(count) / static_cast<double>(count - 1));
        }
      } else {
        mu = running_mean.data()[c];
        var = running_var.data()[c];
      }
      mean.data()[c] = static_cast<float>(mu);
      rstd.data()[c] = static_cast<float>(1 / std::sqrt(var + eps));
    }
  });
  Tensor y = empty(x.shape());
  float* py = y.data();
  parallel_for(N * C, L, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t c = r % C;
      const float scale = rstd.data()[c] * (weight.defined() ? weight.data()[c] : 1.0f);
      const float shift = (bias.defined() ? bias.data()[c] : 0.0f) - mean.data()[c] * scale;
#pragma omp simd
      for (int64_t l = 0; l < L; ++l) py[r * L + l] = px[r * L + l] * scale + shift;
    }
  });
  return record("batch_norm", y, {x, weight, bias}, Saved{x, weight},
                [x = x.detach(), weight = weight.defined() ? weight.detach() : Tensor(), mean, rstd, use_batch_stats, N, C,
                 L](const Tensor& gy, NeedsGrad needs) -> Grads {
                  // Per channel, with xhat = (x - mean) rstd and m = N*L values:
                  //   gw = sum(gy xhat), gb = sum(gy),
                  //   gx = gamma rstd (gy - [sum(gy) + xhat sum(gy xhat)] / m)  with batch statistics,
                  //   gx = gamma rstd gy                                        with fixed running ones.
                  Tensor gx = needs[0] ? empty(x.shape()) : Tensor();
                  Tensor gw = needs[1] ? empty({C}) : Tensor(), gb = needs[2] ? empty({C}) : Tensor();
                  const float *px = x.data(), *pg = gy.data();
                  const auto m = static_cast<float>(N * L);
                  parallel_for(C, N * L, [&](int64_t begin, int64_t end) {
                    for (int64_t c = begin; c < end; ++c) {
                      const float mu = mean.data()[c], rs = rstd.data()[c];
                      double sum_g = 0, sum_gx = 0;
                      for (int64_t n = 0; n < N; ++n) {
                        // Slab pointers, not pg[at + l]: with the offset GCC emitted gathers here.
                        const float *g_slab = pg + (n * C + c) * L, *x_slab = px + (n * C + c) * L;
                        float part_g = 0, part_gx = 0;
#pragma omp simd reduction(+ : part_g, part_gx)
                        for (int64_t l = 0; l < L; ++l) {
                          part_g += g_slab[l];
                          part_gx += g_slab[l] * (x_slab[l] - mu) * rs;
                        }
                        sum_g += part_g;
                        sum_gx += part_gx;
                      }
                      if (gw.defined()) gw.data()[c] = static_cast<float>(sum_gx);
                      if (gb.defined()) gb.data()[c] = static_cast<float>(sum_g);
                      if (!gx.defined()) continue;
                      const float scale = (weight.defined() ? weight.data()[c] : 1.0f) * rs;
                      const float mean_g = use_batch_stats ? static_cast<float>(sum_g) / m : 0.0f;
                      const float mean_gx = use_batch_stats ? static_cast<float>(sum_gx) / m : 0.0f;
                      for (int64_t n = 0; n < N; ++n) {
                        const int64_t at = (n * C + c) * L;
                        const float *g_slab = pg + at, *x_slab = px + at;
                        float* out = gx.data() + at;
#pragma omp simd
                        for (int64_t l = 0; l < L; ++l)
                          out[l] = scale * (g_slab[l] - mean_g - (x_slab[l] - mu) * rs * mean_gx);
                      }
                    }
                  });
                  return {gx, gw, gb};
                });
}

}  // namespace ladder
