// masked_softmax: a softmax over the keys each query may see, fused (one kernel
// forward, one backward) so that masked keys are skipped, never filled with -inf and exponentiated.
#include <memory>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/masked_softmax.h"
#include "core/ops.h"

namespace ladder {

namespace {

// For each row of x (one per position in its leading dims, row-major), the row of `visible` it
// reads: visible's leading dims are aligned right with x's and broadcast where they are 1 or absent.
std::vector<int64_t> mask_rows(const Shape& x_leading, const Shape& visible_leading) {
  const size_t rank = x_leading.size(), offset = rank - visible_leading.size();
  std::vector<int64_t> stride(rank, 0);
  int64_t step = 1;
  for (size_t d = rank; d-- > offset;) {
    const int64_t size = visible_leading[d - offset];
    stride[d] = size == 1 ? 0 : step;
    step *= size;
  }
  std::vector<int64_t> rows(numel(x_leading)), index(rank, 0);
  int64_t at = 0;
  for (int64_t& row : rows) {
    row = at;
    for (size_t d = rank; d-- > 0;) {  // the next position, an odometer over x's leading dims
      at += stride[d];
      if (++index[d] < x_leading[d]) break;
      at -= index[d] * stride[d];
      index[d] = 0;
    }
  }
  return rows;
}

void check_visible(const Tensor& x, const Tensor& visible) {
  if (x.dim() == 0) fail("masked_softmax", "x must have a keys dim (the last one), got a scalar");
  if (visible.dim() == 0 || visible.size(-1) != x.size(-1))
    fail("masked_softmax", "visible ", shape_str(visible.shape()), " must end in the keys dim of x ",
         shape_str(x.shape()), " (", x.size(-1), " keys); a key padding mask (B,S) for scores (B,Q,S) is passed as (B,1,S)");
  if (broadcast_shapes(x.shape(), visible.shape(), "masked_softmax") != x.shape())
    fail("masked_softmax", "visible ", shape_str(visible.shape()), " does not broadcast to x ", shape_str(x.shape()),
         " without growing x");
  for (int64_t i = 0; i < visible.numel(); ++i) {
    const float v = visible.data()[i];
    if (v != 0 && v != 1)
      fail("masked_softmax", "visible holds ", v, " at element ", i, "; it must hold 1 (visible key) or 0 (masked)");
  }
}

}  // namespace

Tensor masked_softmax(const Tensor& x, const Tensor& visible) {
  check_visible(x, visible);
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  const Shape x_leading(x.shape().begin(), x.shape().end() - 1);
  const Shape visible_leading(visible.shape().begin(), visible.shape().end() - 1);
  auto row_of = std::make_shared<const std::vector<int64_t>>(mask_rows(x_leading, visible_leading));
  Tensor y = empty(x.shape());
  masked_softmax_rows(x.data(), visible.data(), row_of->data(), y.data(), rows, cols);
  // The mask is a constant: only x gets a gradient.
  return record("masked_softmax", y, {x}, Saved{y, visible},
                [y = y.detach(), visible = visible.detach(), row_of, rows, cols](const Tensor& gy, NeedsGrad) -> Grads {
                  Tensor gx = empty(y.shape());
                  masked_softmax_backward_rows(y.data(), gy.data(), visible.data(), row_of->data(), gx.data(), rows, cols);
                  return {gx};
                });
}

}  // namespace ladder
