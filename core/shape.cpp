#include "core/shape.h"

#include <algorithm>

#include "core/error.h"

namespace ladder {

int64_t numel(const Shape& shape) {
  // The product of the sizes other than 0 must fit, so that strides never overflow either.
  int64_t n = 1;
  bool empty = false;
  for (int64_t size : shape) {
    if (size == 0) empty = true;
    else if (__builtin_mul_overflow(n, size, &n))
      fail("numel", "shape ", shape_str(shape), " has more elements than a 64-bit count can hold");
  }
  return empty ? 0 : n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Walk both shapes from the right; a missing dim counts as size 1.
    const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(op, "shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast: dim ",
           static_cast<int64_t>(rank - 1 - i), " of the result would need ", sa, " and ", sb,
           " to agree (sizes must match or be 1)");
    out[rank - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

int64_t normalize_dim(int64_t dim, int64_t rank, const char* op) {
  if (dim < -rank || dim >= rank) {
    if (rank == 0) fail(op, "dim ", dim, " given for a scalar (0-d) tensor, which has no dims");
    fail(op, "dim ", dim, " is out of range for a ", rank, "-d tensor (valid: ", -rank, " to ",
         rank - 1, ")");
  }
  return dim < 0 ? dim + rank : dim;
}

Dims normalize_dims(const Dims& dims, int64_t rank, const char* op) {
  Dims out;
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(normalize_dim(d, rank, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    fail(op, "dim ", *std::adjacent_find(out.begin(), out.end()), " is listed twice");
  return out;
}

}  // namespace ladder
