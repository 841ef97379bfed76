// Ops that move values around without computing with them. Tensors are always contiguous, so
// all of these copy, except reshape (and what is built on it), which shares the values. permute,
// transpose and slice copy through core/kernels/strided_copy.h.
#include <algorithm>
#include <numeric>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/parallel.h"
#include "core/kernels/strided_copy.h"
#include "core/ops.h"
#include "core/ops/elementwise.h"

namespace ladder {

namespace {

Shape inferred_shape(const Tensor& x, const Shape& shape) {
  Shape out = shape;
  int64_t known = 1, unknown = -1;
  for (int64_t d = 0; d < static_cast<int64_t>(out.size()); ++d) {
    if (out[d] == -1) {
      if (unknown >= 0) fail("reshape", "only one size may be -1, got ", shape_str(shape));
      unknown = d;
    } else if (out[d] < 0) {
      fail("reshape", "negative size in ", shape_str(shape));
    } else {
      known *= out[d];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail("reshape", "cannot infer the -1 in ", shape_str(shape), " for ", x.numel(), " elements (shape ",
           shape_str(x.shape()), ")");
    out[unknown] = x.numel() / known;
  }
  if (numel(out) != x.numel())
    fail("reshape", "shape ", shape_str(x.shape()), " has ", x.numel(), " elements; ", shape_str(shape),
         " would need ", numel(out));
  return out;
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = inferred_shape(x, shape);
  impl->storage = x.impl()->storage;  // same values: a row-major buffer reads the same in any shape
  impl->version = x.impl()->version;
  return record("reshape", Tensor(std::move(impl)), {x}, [x_shape = x.shape()](const Tensor& gy, NeedsGrad) -> Grads {
    return {reshape(gy, x_shape)};
  });
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  if (x.dim() == 0) return reshape(x, {1});
  const int64_t first = normalize_dim(start_dim, x.dim(), "flatten"), last = normalize_dim(end_dim, x.dim(), "flatten");
  if (first > last) fail("flatten", "start_dim ", start_dim, " comes after end_dim ", end_dim);
  Shape shape(x.shape().begin(), x.shape().begin() + first);
  shape.push_back(-1);
  shape.insert(shape.end(), x.shape().begin() + last + 1, x.shape().end());
  return reshape(x, shape);
}

Tensor permute(const Tensor& x, const Dims& order) {
  const int64_t rank = x.dim();
  if (static_cast<int64_t>(order.size()) != rank)
    fail("permute", "order has ", order.size(), " dims but the tensor has shape ", shape_str(x.shape()));
  Dims dims(order.size());
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < order.size(); ++i) {
    dims[i] = normalize_dim(order[i], rank, "permute");
    if (seen[dims[i]]) fail("permute", "dim ", order[i], " appears twice in the order ", shape_str(order));
    seen[dims[i]] = true;
  }
  // out[i0..] = x[...] where out dim i walks x dim dims[i].
  const Shape x_strides = contiguous_strides(x.shape());
  Shape sizes(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    sizes[i] = x.shape()[dims[i]];
    strides[i] = x_strides[dims[i]];
  }
  Tensor out = empty(sizes);
  strided_copy(x.data(), strides, out.data(), contiguous_strides(sizes), sizes);
  return record("permute", out, {x}, [dims](const Tensor& gy, NeedsGrad) -> Grads {
    Dims inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = static_cast<int64_t>(i);
    return {permute(gy, inverse)};
  });
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  Dims order(x.dim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[normalize_dim(dim0, x.dim(), "transpose")], order[normalize_dim(dim1, x.dim(), "transpose")]);
  return permute(x, order);
}

Tensor slice(const Tensor& x, int64_t dim_in, int64_t start, int64_t end, int64_t step) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), "slice");
  if (step <= 0) fail("slice", "step must be positive, got ", step);
  const int64_t size = x.shape()[dim];
  // Python semantics: negative positions count from the end; out-of-range positions clip.
  auto position = [size](int64_t p) { return p < 0 ? std::max<int64_t>(p, -size) + size : std::min(p, size); };
  const int64_t first = position(start), last = std::max(first, position(end));
  Shape sizes = x.shape(), strides = contiguous_strides(x.shape());
  sizes[dim] = last == first ? 0 : (last - first - 1) / step + 1;  // no overflow, even for a huge step
  const int64_t base = first * strides[dim];
  if (sizes[dim] > 1) strides[dim] *= step;  // then step < size: no overflow
  Tensor out = empty(sizes);
  strided_copy(x.data() + base, strides, out.data(), contiguous_strides(sizes), sizes);
  return record("slice", out, {x}, [x_shape = x.shape(), sizes, strides, base](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = zeros(x_shape);  // the elements the slice skipped get no gradient
    strided_copy(gy.data(), contiguous_strides(sizes), gx.data() + base, strides, sizes);
    return {gx};
  });
}

Tensor narrow(const Tensor& x, int64_t dim_in, int64_t start, int64_t length) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), "narrow");
  const int64_t size = x.shape()[dim];
  if (start < 0 || length < 0 || start > size || length > size - start)  // never start + length: it may overflow
    fail("narrow", "start ", start, " and length ", length, " do not fit in dim ", dim_in, " of size ", size,
         " (shape ", shape_str(x.shape()), ")");
  return slice(x, dim, start, start + length);
}

Tensor concat(const std::vector<Tensor>& xs, int64_t dim_in) {
  if (xs.empty()) fail("concat", "needs at least one tensor");
  const Shape& first = xs[0].shape();
  const int64_t dim = normalize_dim(dim_in, xs[0].dim(), "concat");
  Shape out_shape = first;
  out_shape[dim] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Shape& s = xs[i].shape();
    bool fits = s.size() == first.size();
    for (size_t d = 0; fits && d < s.size(); ++d) fits = static_cast<int64_t>(d) == dim || s[d] == first[d];
    if (!fits)
      fail("concat", "tensor ", i, " has shape ", shape_str(s), " but tensor 0 has ", shape_str(first),
           "; all sizes must match except along dim ", dim_in);
    out_shape[dim] += s[dim];
  }
  Tensor out = empty(out_shape);
  // Seen as (outer, size along dim * inner): each input fills one slab of every outer row.
  const int64_t outer = numel(Shape(first.begin(), first.begin() + dim));
  const int64_t inner = numel(Shape(first.begin() + dim + 1, first.end()));
  const int64_t row = out_shape[dim] * inner;
  int64_t at = 0;
  std::vector<int64_t> lengths;
  for (const Tensor& x : xs) {
    const int64_t slab = x.shape()[dim] * inner;
    const float* src = x.data();
    float* dst = out.data() + at;
    parallel_for(outer, slab, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) std::copy_n(src + o * slab, slab, dst + o * row);
    });
    at += slab;
    lengths.push_back(x.shape()[dim]);
  }
  return record("concat", out, xs, Saved{}, [dim, lengths](const Tensor& gy, NeedsGrad needs) -> Grads {
    Grads grads;
    int64_t start = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      grads.push_back(needs[i] ? narrow(gy, dim, start, lengths[i]) : Tensor());
      start += lengths[i];
    }
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) fail("stack", "needs at least one tensor");
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].shape() != xs[0].shape())
      fail("stack", "tensor ", i, " has shape ", shape_str(xs[i].shape()), " but tensor 0 has ",
           shape_str(xs[0].shape()), "; all must be the same");
    expanded.push_back(unsqueeze(xs[i], dim));
  }
  return concat(expanded, dim);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim_in) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), "split");
  if (split_size <= 0) fail("split", "split_size must be positive, got ", split_size);
  std::vector<Tensor> parts;
  for (int64_t start = 0; start < x.shape()[dim]; start += split_size)
    parts.push_back(narrow(x, dim, start, std::min(split_size, x.shape()[dim] - start)));
  return parts;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  if (chunks <= 0) fail("chunk", "chunks must be positive, got ", chunks);
  const int64_t size = x.shape()[normalize_dim(dim, x.dim(), "chunk")];
  return split(x, std::max<int64_t>(1, (size + chunks - 1) / chunks), dim);
}

Tensor squeeze(const Tensor& x, int64_t dim_in) {
  const int64_t dim = normalize_dim(dim_in, x.dim(), "squeeze");
  if (x.shape()[dim] != 1) return x;  // as in PyTorch: a dim that is not 1 stays
  Shape shape = x.shape();
  shape.erase(shape.begin() + dim);
  return reshape(x, shape);
}

Tensor unsqueeze(const Tensor& x, int64_t dim_in) {
  const int64_t dim = normalize_dim(dim_in, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape();
  shape.insert(shape.begin() + dim, 1);
  return reshape(x, shape);
}

Tensor expand(const Tensor& x, const Shape& shape_in) {
  Shape shape = shape_in;
  const int64_t lead = static_cast<int64_t>(shape.size()) - x.dim();
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (shape[d] == -1 && d >= lead) shape[d] = x.shape()[d - lead];  // -1 keeps the size
  if (lead < 0 || broadcast_shapes(x.shape(), shape, "expand") != shape)
    fail("expand", "cannot expand shape ", shape_str(x.shape()), " to ", shape_str(shape_in),
         "; only dims of size 1 can grow, and new dims go in front");
  if (x.shape() == shape) return x;
  const Broadcast plan(x.shape(), shape, "expand");
  Tensor out = empty(shape);
  const float* px = x.data();
  float* po = out.data();
  parallel_for(out.numel(), 1, [&](int64_t begin, int64_t end) {
    plan.for_range(begin, end, [&](int64_t i, int64_t ix, int64_t) { po[i] = px[ix]; });
  });
  return record("expand", out, {x}, [x_shape = x.shape()](const Tensor& gy, NeedsGrad) -> Grads {
    return {sum_to(gy, x_shape)};
  });
}

}  // namespace ladder
