// Reductions. Each sees its input as (outer, n, inner) and reduces the middle
// (core/kernels/reduce.h); mean and var are built from sum. max and min along a dim, which also
// give the position, keep a simple loop of their own.
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/parallel.h"
#include "core/kernels/reduce.h"
#include "core/ops.h"

namespace ladder {

namespace {

// values and indices (outer, inner) = the largest (or smallest) over n, and its first position.
void extreme_with_index(const float* x, float* values, float* indices, const ReduceShape& v, bool largest) {
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
      indices[out] = static_cast<float>(at);
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

// Sums over each run of dims in turn (innermost first), keeping reduced dims as size 1.
Tensor sum_runs(const Tensor& x, const Dims& dims) {
  Tensor current = x;
  const auto runs = consecutive_runs(dims);
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    Shape shape = current.shape();
    const ReduceShape view = reduce_shape(shape, run->first, run->second);
    for (int64_t d = run->first; d <= run->second; ++d) shape[d] = 1;
    Tensor next = empty(shape);
    sum_reduce(current.data(), next.data(), view);
    current = next;
  }
  return runs.empty() ? x.detach().clone() : current;
}

Shape kept_shape(const Shape& shape, const Dims& dims) {  // reduced dims set to 1
  Shape out = shape;
  for (int64_t d : dims) out[d] = 1;
  return out;
}

// A reduction with its own forward and backward kernels (amax, amin, logsumexp): one pass over
// the input seen as (outer, n, inner). Dims that are not consecutive are first moved to the end
// (a permute and a reshape, through autograd) to make them one run.
template <class Forward, class Backward>
Tensor fused_reduction(const char* op, const Tensor& x, const Dims& dims_in, bool keepdim, Forward forward,
                       Backward backward) {
  const Dims dims = normalize_dims(dims_in, x.dim(), op);
  check_not_empty(x, dims, op);
  // in seen as s; y has `shape`, in's with the reduced dims set to 1.
  auto run = [&](const Tensor& in, const ReduceShape& s, const Shape& shape) {
    Tensor y = empty(shape);
    forward(in.data(), y.data(), s);
    return record(op, y, {in}, Saved{in, y}, [in = in.detach(), y = y.detach(), s, backward](const Tensor& gy, NeedsGrad) -> Grads {
      Tensor gx = empty(in.shape());
      backward(in.data(), y.data(), gy.data(), gx.data(), s);
      return {gx};
    });
  };
  Tensor kept;
  if (dims.empty() || dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size())) {
    kept = run(x, dims.empty() ? ReduceShape{} : reduce_shape(x.shape(), dims.front(), dims.back()),
               kept_shape(x.shape(), dims));
  } else {
    Dims order;
    Shape moved_shape;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
        order.push_back(d);
        moved_shape.push_back(x.shape()[d]);
      }
    order.insert(order.end(), dims.begin(), dims.end());
    moved_shape.push_back(-1);
    const Tensor moved = reshape(permute(x, order), moved_shape);
    const int64_t last = moved.dim() - 1;
    kept = reshape(run(moved, reduce_shape(moved.shape(), last, last), kept_shape(moved.shape(), {last})),
                   kept_shape(x.shape(), dims));
  }
  return keepdim ? kept : reshape(kept, dropped_shape(x.shape(), dims));
}

// max / min along one dim, with the position; the gradient goes to that position only.
ValuesIndices extreme_along(const Tensor& x, int64_t dim_in, bool keepdim, bool largest) {
  const char* op = largest ? "max" : "min";
  const int64_t dim = normalize_dim(dim_in, x.dim(), op);
  check_not_empty(x, {dim}, op);
  Shape shape = x.shape();
  shape[dim] = 1;
  Tensor values = empty(shape), indices = empty(shape);
  const ReduceShape view = reduce_shape(x.shape(), dim, dim);
  extreme_with_index(x.data(), values.data(), indices.data(), view, largest);
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
  Tensor kept = sum_runs(x, dims);
  Tensor y = keepdim ? kept : reshape(kept, dropped_shape(x.shape(), dims));
  // d(sum)/dx = 1 for every element: the gradient is gy over the reduced dims, which the engine
  // broadcasts as it adds it in (no copy written out here).
  return record("sum", y, {x}, [kept_shape = kept.shape()](const Tensor& gy, NeedsGrad) -> Grads {
    return {reshape(gy, kept_shape)};
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

// The gradient, gy * exp(x - y), is the softmax of x times gy.
Tensor logsumexp(const Tensor& x, const Dims& dims, bool keepdim) {
  return fused_reduction("logsumexp", x, dims, keepdim, logsumexp_reduce, logsumexp_backward);
}

// The gradient is shared equally by every element equal to the extreme value.
Tensor amax(const Tensor& x, const Dims& dims, bool keepdim) {
  auto forward = [](const float* in, float* out, const ReduceShape& s) { extreme_reduce(in, out, s, true); };
  return fused_reduction("amax", x, dims, keepdim, forward, extreme_backward);
}

Tensor amin(const Tensor& x, const Dims& dims, bool keepdim) {
  auto forward = [](const float* in, float* out, const ReduceShape& s) { extreme_reduce(in, out, s, false); };
  return fused_reduction("amin", x, dims, keepdim, forward, extreme_backward);
}

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
