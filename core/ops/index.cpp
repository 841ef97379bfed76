// Indexing: pick values by position (index_select, embedding, gather), choose between values
// (masked_fill, where), and the index-made tensors (one_hot, triangular masks).
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"
#include "core/ops/elementwise.h"

namespace ladder {

namespace {

// Index tensors hold whole numbers as floats; check one and turn it into a position.
int64_t position(float value, int64_t size, const char* op, const char* what) {
  if (value != std::floor(value) || std::isinf(value))
    fail(op, what, " ", value, " is not a whole number; indices must be whole numbers stored as floats");
  // Compared as floats first: casting a value beyond int64 would be undefined.
  if (value < 0 || value >= static_cast<float>(size))
    fail(op, what, " ", value, " is out of range for size ", size, " (valid: 0 to ", size - 1, ")");
  return static_cast<int64_t>(value);
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim_in, const Tensor& index) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), "index_select");
  if (index.dim() != 1)
    fail("index_select", "index must be 1-d, got shape ", shape_str(index.shape()), "; flatten it first");
  const int64_t size = x.shape()[dim], count = index.numel();
  std::vector<int64_t> rows(count);
  for (int64_t i = 0; i < count; ++i) rows[i] = position(index.data()[i], size, "index_select", "index");
  // x seen as (outer, size, inner); out (outer, count, inner) with out[o, i, :] = x[o, rows[i], :]
  const int64_t outer = numel(Shape(x.shape().begin(), x.shape().begin() + dim));
  const int64_t inner = numel(Shape(x.shape().begin() + dim + 1, x.shape().end()));
  Shape out_shape = x.shape();
  out_shape[dim] = count;
  Tensor out = empty(out_shape);
  const float* px = x.data();
  float* po = out.data();
  parallel_for(outer * count, inner, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      std::copy_n(px + ((r / count) * size + rows[r % count]) * inner, inner, po + r * inner);
  });
  return record("index_select", out, {x}, [x_shape = x.shape(), rows, outer, size, inner](const Tensor& gy, NeedsGrad) -> Grads {
    // Scatter-add: a row picked twice gets both gradients. Threads split the columns, never the
    // rows, so no two threads add into the same element.
    Tensor gx = zeros(x_shape);
    const int64_t count = static_cast<int64_t>(rows.size());
    const float* pg = gy.data();
    float* pd = gx.data();
    parallel_for(inner, outer * count, [&](int64_t j0, int64_t j1) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < count; ++i) {
          const float* src = pg + (o * count + i) * inner;
          float* dst = pd + (o * size + rows[i]) * inner;
          for (int64_t j = j0; j < j1; ++j) dst[j] += src[j];
        }
    });
    return {gx};
  });
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  if (weight.dim() != 2)
    fail("embedding", "weight must be 2-d (vocabulary, dim), got shape ", shape_str(weight.shape()));
  Shape out_shape = ids.shape();
  out_shape.push_back(weight.size(1));
  return reshape(index_select(weight, 0, reshape(ids, {-1})), out_shape);
}

Tensor gather(const Tensor& x, int64_t dim_in, const Tensor& index) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), "gather");
  if (index.dim() != x.dim())
    fail("gather", "index has shape ", shape_str(index.shape()), " but x has ", shape_str(x.shape()),
         "; they need the same number of dims");
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim && index.shape()[d] > x.shape()[d])
      fail("gather", "index shape ", shape_str(index.shape()), " is larger than x shape ", shape_str(x.shape()),
           " in dim ", d);
  // out[i] = x at the coordinates of i, with coordinate `dim` replaced by index[i].
  const Shape x_strides = contiguous_strides(x.shape());
  const int64_t n = index.numel();
  std::vector<int64_t> offsets(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, offset = 0;
    for (int64_t d = x.dim() - 1; d >= 0; --d) {
      const int64_t coord = rest % index.shape()[d];
      rest /= index.shape()[d];
      offset += (d == dim ? position(index.data()[i], x.shape()[dim], "gather", "index") : coord) * x_strides[d];
    }
    offsets[i] = offset;
  }
  Tensor out = empty(index.shape());
  for (int64_t i = 0; i < n; ++i) out.data()[i] = x.data()[offsets[i]];
  return record("gather", out, {x}, [x_shape = x.shape(), offsets](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = zeros(x_shape);
    for (size_t i = 0; i < offsets.size(); ++i) gx.data()[offsets[i]] += gy.data()[i];  // repeats add up
    return {gx};
  });
}

namespace {

// out = condition != 0 ? a : b, the three broadcast together. Backward: each output element sends
// its gradient to the one of a and b it came from, and the other gets exactly 0: selected, never
// multiplied by 0, so that an inf or NaN gradient of a discarded value (log(0) under a mask) stays out.
Tensor select(const char* op, const Tensor& condition, const Tensor& a, const Tensor& b) {
  const BroadcastN<3> plan({condition.shape(), a.shape(), b.shape()}, op);
  Tensor out = empty(plan.out_shape());
  const float *pc = condition.data(), *pa = a.data(), *pb = b.data();
  float* po = out.data();
  parallel_for(out.numel(), 1, [&](int64_t begin, int64_t end) {
    plan.for_range(begin, end,
                   [&](int64_t i, int64_t ic, int64_t ia, int64_t ib) { po[i] = pc[ic] != 0 ? pa[ia] : pb[ib]; });
  });
  if (!any_requires_grad({a, b})) return out;
  return record(op, out, {a, b}, Saved{condition},
                [op, c = condition.detach(), a_shape = a.shape(), b_shape = b.shape(), out_shape = out.shape()](
                    const Tensor& gy, NeedsGrad needs) -> Grads {
                  // gy where the condition is `taken` (a's elements) or not (b's), 0 elsewhere,
                  // summed back to the input's shape.
                  auto routed = [&](bool taken, const Shape& shape) {
                    const Broadcast walk(c.shape(), out_shape, op);
                    Tensor g = empty(out_shape);
                    const float *pc = c.data(), *pg = gy.data();
                    float* pd = g.data();
                    parallel_for(g.numel(), 1, [&](int64_t begin, int64_t end) {
                      walk.for_range(begin, end, [&](int64_t i, int64_t ic, int64_t) {
                        pd[i] = (pc[ic] != 0) == taken ? pg[i] : 0.0f;
                      });
                    });
                    return sum_to(g, shape);
                  };
                  return {needs[0] ? routed(true, a_shape) : Tensor(), needs[1] ? routed(false, b_shape) : Tensor()};
                });
}

}  // namespace

Tensor masked_fill(const Tensor& x, const Tensor& mask, float value) {
  if (broadcast_shapes(x.shape(), mask.shape(), "masked_fill") != x.shape())
    fail("masked_fill", "mask of shape ", shape_str(mask.shape()), " does not broadcast to x of shape ",
         shape_str(x.shape()), " without growing x");
  // The filled positions are constants: no gradient flows back through them.
  return select("masked_fill", mask, scalar(value), x);
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) { return select("where", condition, a, b); }

Tensor one_hot(const Tensor& index, int64_t num_classes) {
  if (num_classes <= 0) fail("one_hot", "num_classes must be positive, got ", num_classes);
  Shape shape = index.shape();
  shape.push_back(num_classes);
  Tensor out = zeros(shape);
  for (int64_t i = 0; i < index.numel(); ++i)
    out.data()[i * num_classes + position(index.data()[i], num_classes, "one_hot", "class")] = 1;
  return out;
}

namespace {

template <class Keep>
Tensor triangle(int64_t rows, int64_t cols, const char* op, Keep keep) {
  if (rows < 0 || cols < 0) fail(op, "negative size (", rows, ", ", cols, ")");
  Tensor out = empty({rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out.data()[i * cols + j] = keep(i, j) ? 1.0f : 0.0f;
  return out;
}

}  // namespace

Tensor tril_mask(int64_t rows, int64_t cols, int64_t diagonal) {
  return triangle(rows, cols, "tril_mask", [diagonal](int64_t i, int64_t j) { return j - i <= diagonal; });
}

Tensor triu_mask(int64_t rows, int64_t cols, int64_t diagonal) {
  return triangle(rows, cols, "triu_mask", [diagonal](int64_t i, int64_t j) { return j - i >= diagonal; });
}

}  // namespace ladder
