// Reductions. The primitive ones (sum, amax/amin, max/min along a dim) see the input as
// (outer, n, inner) and reduce the middle; mean, var and logsumexp are built from them.
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"

namespace ladder {

namespace {

// The input seen as (outer, n, inner), reducing the n dims [first, last] (consecutive).
struct ReduceView {
  int64_t outer = 1, n = 1, inner = 1;
  ReduceView(const Shape& shape, int64_t first, int64_t last) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      (d < first ? outer : d <= last ? n : inner) *= shape[d];
  }
};

// out (outer, inner) = sum over n of x (outer, n, inner), accumulated in double.
void sum_kernel(const float* x, float* out, const ReduceView& v) {
  if (v.outer == 1 && v.inner == 1) {  // one long sum: per-block partials, added in block order
    std::vector<double> partial(parallel_blocks(v.n, 1), 0.0);
    parallel_for_blocks(v.n, 1, [&](int64_t begin, int64_t end, int block) {
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t k = begin; k < end; ++k) s += x[k];
      partial[block] = s;
    });
    double s = 0;
    for (double p : partial) s += p;
    out[0] = static_cast<float>(s);
    return;
  }
  parallel_for(v.outer * v.inner, v.n, [&](int64_t begin, int64_t end) {
    std::vector<double> acc;
    // Walk the outputs [begin, end) one outer row at a time, reading x row by row (contiguous).
    for (int64_t first = begin; first < end;) {
      const int64_t o = first / v.inner, j0 = first % v.inner;
      const int64_t j1 = std::min(v.inner, j0 + (end - first));
      acc.assign(static_cast<size_t>(j1 - j0), 0.0);
      for (int64_t k = 0; k < v.n; ++k) {
        const float* row = x + (o * v.n + k) * v.inner;
#pragma omp simd
        for (int64_t j = j0; j < j1; ++j) acc[j - j0] += row[j];
      }
      for (int64_t j = j0; j < j1; ++j) out[o * v.inner + j] = static_cast<float>(acc[j - j0]);
      first += j1 - j0;
    }
  });
}

// values and indices (outer, inner) = the largest (or smallest) over n, and its first position.
void extreme_kernel(const float* x, float* values, float* indices, const ReduceView& v, bool largest) {
  parallel_for(v.outer * v.inner, v.n, [&](int64_t begin, int64_t end) {
    for (int64_t out = begin; out < end; ++out) {
      const float* p = x + (out / v.inner) * v.n * v.inner + out % v.inner;
      float best = p[0];
      int64_t at = 0;
      for (int64_t k = 1; k < v.n; ++k) {
        const float value = p[k * v.inner];
        if (std::isnan(best)) break;  // NaN wins, as in PyTorch
        if (std::isnan(value) || (largest ? value > best : value < best)) {
          best = value;
          at = k;
        }
      }
      values[out] = best;
      if (indices) indices[out] = static_cast<float>(at);
    }
  });
}

// Groups sorted dims into runs of consecutive dims: {0,1,3} -> {0,1}, {3}.
std::vector<std::pair<int64_t, int64_t>> consecutive_runs(const Dims& dims) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t d : dims) {
    if (!runs.empty() && runs.back().second + 1 == d) runs.back().second = d;
    else runs.push_back({d, d});
  }
  return runs;
}

Shape dropped_shape(const Shape& shape, const Dims& dims) {  // reduced dims removed
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(shape[d]);
  return out;
}

void check_not_empty(const Tensor& x, const Dims& dims, const char* op) {
  for (int64_t d : dims)
    if (x.shape()[d] == 0) fail(op, "cannot reduce over dim ", d, " of size 0 (shape ", shape_str(x.shape()), ")");
}

// Reduces each run of dims in turn (innermost first), keeping reduced dims as size 1.
template <class Kernel>
Tensor reduce_runs(const Tensor& x, const Dims& dims, Kernel kernel) {
  Tensor current = x;
  const auto runs = consecutive_runs(dims);
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    Shape shape = current.shape();
    const ReduceView view(shape, run->first, run->second);
    for (int64_t d = run->first; d <= run->second; ++d) shape[d] = 1;
    Tensor next = empty(shape);
    kernel(current.data(), next.data(), view);
    current = next;
  }
  return runs.empty() ? x.detach().clone() : current;
}

// amax / amin: the gradient is shared equally by every element equal to the extreme value.
Tensor extreme(const Tensor& x, const Dims& dims_in, bool keepdim, bool largest) {
  const char* op = largest ? "amax" : "amin";
  const Dims dims = normalize_dims(dims_in, x.dim(), op);
  check_not_empty(x, dims, op);
  Tensor kept = reduce_runs(x, dims, [largest](const float* in, float* out, const ReduceView& v) {
    extreme_kernel(in, out, nullptr, v, largest);
  });
  Tensor y = keepdim ? kept.detach() : reshape(kept, dropped_shape(x.shape(), dims));
  return record(op, y, {x}, Saved{x}, [x = x.detach(), kept, dims](const Tensor& gy, NeedsGrad) -> Grads {
    const Tensor hit = expand(kept, x.shape());
    Tensor mask = empty(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) mask.data()[i] = x.data()[i] == hit.data()[i] ? 1.0f : 0.0f;
    const Tensor ties = sum(mask, dims, /*keepdim=*/true);
    return {mask * expand(reshape(gy, kept.shape()) / ties, x.shape())};
  });
}

// max / min along one dim, with the position; the gradient goes to that position only.
ValuesIndices extreme_along(const Tensor& x, int64_t dim_in, bool keepdim, bool largest) {
  const char* op = largest ? "max" : "min";
  const int64_t dim = normalize_dim(dim_in, x.dim(), op);
  check_not_empty(x, {dim}, op);
  Shape shape = x.shape();
  shape[dim] = 1;
  Tensor values = empty(shape), indices = empty(shape);
  const ReduceView view(x.shape(), dim, dim);
  extreme_kernel(x.data(), values.data(), indices.data(), view, largest);
  if (!keepdim) {
    shape.erase(shape.begin() + dim);
    values = reshape(values, shape);
    indices = reshape(indices, shape);
  }
  values = record(op, values, {x}, [x_shape = x.shape(), indices, view](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = zeros(x_shape);
    // output (o, j) took its value from x (o, indices[o, j], j)
    for (int64_t out = 0; out < view.outer * view.inner; ++out) {
      const int64_t o = out / view.inner, j = out % view.inner;
      const auto k = static_cast<int64_t>(indices.data()[out]);
      gx.data()[(o * view.n + k) * view.inner + j] += gy.data()[out];
    }
    return {gx};
  });
  return {values, indices};
}

}  // namespace

Tensor sum(const Tensor& x, const Dims& dims_in, bool keepdim) {
  const Dims dims = normalize_dims(dims_in, x.dim(), "sum");
  Tensor kept = reduce_runs(x, dims, sum_kernel);
  Tensor y = keepdim ? kept : reshape(kept, dropped_shape(x.shape(), dims));
  // d(sum)/dx = 1 for every element: the gradient is gy copied back over the reduced dims.
  return record("sum", y, {x}, [x_shape = x.shape(), kept_shape = kept.shape()](const Tensor& gy, NeedsGrad) -> Grads {
    return {expand(reshape(gy, kept_shape), x_shape)};
  });
}

Tensor mean(const Tensor& x, const Dims& dims_in, bool keepdim) {
  const Dims dims = normalize_dims(dims_in, x.dim(), "mean");
  check_not_empty(x, dims, "mean");
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[d];
  return sum(x, dims, keepdim) / static_cast<float>(count);
}

Tensor var(const Tensor& x, const Dims& dims_in, bool keepdim, int correction) {
  const Dims dims = normalize_dims(dims_in, x.dim(), "var");
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[d];
  if (count - correction <= 0)
    fail("var", "needs more than ", correction, " element(s) per reduction with correction=", correction,
         ", got ", count, " (shape ", shape_str(x.shape()), ")");
  const Tensor centred = x - mean(x, dims, /*keepdim=*/true);
  return sum(centred * centred, dims, keepdim) / static_cast<float>(count - correction);
}

Tensor logsumexp(const Tensor& x, const Dims& dims_in, bool keepdim) {
  const Dims dims = normalize_dims(dims_in, x.dim(), "logsumexp");
  check_not_empty(x, dims, "logsumexp");
  // log sum e^x = m + log sum e^(x - m) with m the max, so that no e^x overflows. m is a constant
  // for autograd: its gradient through the two terms cancels exactly.
  Tensor shift = amax(x.detach(), dims, /*keepdim=*/true);
  for (int64_t i = 0; i < shift.numel(); ++i)
    if (std::isinf(shift.data()[i])) shift.data()[i] = 0;  // all -inf (or +inf): nothing to shift by
  const Tensor y = log(sum(exp(x - shift), dims, /*keepdim=*/true)) + shift;
  return keepdim ? y : reshape(y, dropped_shape(x.shape(), dims));
}

Tensor amax(const Tensor& x, const Dims& dims, bool keepdim) { return extreme(x, dims, keepdim, true); }
Tensor amin(const Tensor& x, const Dims& dims, bool keepdim) { return extreme(x, dims, keepdim, false); }

ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { return extreme_along(x, dim, keepdim, true); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { return extreme_along(x, dim, keepdim, false); }

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return max(x, dim, keepdim).indices;
}

Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return min(x, dim, keepdim).indices;
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());  // dims only x has
  auto cannot = [&] {
    fail("sum_to", "cannot sum ", shape_str(x.shape()), " down to ", shape_str(shape),
         ": the target shape must broadcast to the source shape");
  };
  if (lead < 0) cannot();
  Dims dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
    } else if (shape[d - lead] != x.shape()[d]) {
      if (shape[d - lead] != 1) cannot();
      dims.push_back(d);
    }
  }
  return reshape(sum(x, dims, /*keepdim=*/true), shape);
}

}  // namespace ladder
