#include "core/kernels/strided_copy.h"

#include <algorithm>
#include <vector>

#include "core/kernels/parallel.h"

namespace ladder {

namespace {

struct Dim {
  int64_t size, src, dst;  // the dim's size and its stride on each side
};

// The dims worth walking, outermost first: size-1 dims dropped, and a dim merged into the one
// inside it when both sides step through the two as one block.
std::vector<Dim> merged_dims(const Shape& src_strides, const Shape& dst_strides, const Shape& sizes) {
  std::vector<Dim> dims;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    const Dim next{sizes[d], src_strides[d], dst_strides[d]};
    if (!dims.empty() && dims.back().src == next.src * next.size && dims.back().dst == next.dst * next.size)
      dims.back() = {dims.back().size * next.size, next.src, next.dst};
    else
      dims.push_back(next);
  }
  return dims;
}

// The src and dst offsets of the positions of `dims` in row-major order, from position `start`
// on, one step at a time: computing each from scratch would cost a division per dim.
class Walker {
 public:
  Walker(const std::vector<Dim>& dims, int64_t start) : dims_(dims), index_(dims.size()) {
    for (size_t d = dims.size(); d-- > 0;) {
      index_[d] = start % dims[d].size;
      start /= dims[d].size;
      src += index_[d] * dims[d].src;
      dst += index_[d] * dims[d].dst;
    }
  }
  void next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      src += dims_[d].src;
      dst += dims_[d].dst;
      if (++index_[d] < dims_[d].size) return;
      src -= dims_[d].size * dims_[d].src;
      dst -= dims_[d].size * dims_[d].dst;
      index_[d] = 0;
    }
  }
  int64_t src = 0, dst = 0;

 private:
  const std::vector<Dim>& dims_;
  std::vector<int64_t> index_;
};

int64_t count_of(const std::vector<Dim>& dims) {
  int64_t count = 1;
  for (const Dim& d : dims) count *= d.size;
  return count;
}

constexpr int64_t kTile = 16;  // a 16x16 tile of floats: 16 cache lines on each side

// dst's innermost dim `inner` (dst stride 1) and the dim `across` that src holds with stride 1,
// copied in kTile x kTile tiles; `outer` are the remaining dims.
void tiled_transpose(const float* src, float* dst, const std::vector<Dim>& outer, const Dim& across,
                     const Dim& inner) {
  const int64_t tiles = (across.size + kTile - 1) / kTile;  // per outer position, each kTile rows of dst
  parallel_for(count_of(outer) * tiles, kTile * inner.size, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const Walker at(outer, item / tiles);
      const int64_t i0 = (item % tiles) * kTile, i1 = std::min(across.size, i0 + kTile);
      for (int64_t j0 = 0; j0 < inner.size; j0 += kTile) {
        const int64_t j1 = std::min(inner.size, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          const float* s = src + at.src + i;  // across.src == 1
          float* d = dst + at.dst + i * across.dst;
          for (int64_t j = j0; j < j1; ++j) d[j] = s[j * inner.src];
        }
      }
    }
  });
}

}  // namespace

void strided_copy(const float* src, const Shape& src_strides, float* dst, const Shape& dst_strides,
                  const Shape& sizes) {
  if (numel(sizes) == 0) return;
  std::vector<Dim> outer = merged_dims(src_strides, dst_strides, sizes);
  if (outer.empty()) {  // one element
    dst[0] = src[0];
    return;
  }
  const Dim inner = outer.back();
  outer.pop_back();
  if (inner.dst == 1 && inner.src != 1) {
    const auto across = std::find_if(outer.begin(), outer.end(), [](const Dim& d) { return d.src == 1; });
    if (across != outer.end()) {
      const Dim tiled = *across;
      outer.erase(across);
      tiled_transpose(src, dst, outer, tiled, inner);
      return;
    }
  }
  parallel_for(count_of(outer), inner.size, [&](int64_t begin, int64_t end) {
    Walker at(outer, begin);
    for (int64_t row = begin; row < end; ++row, at.next()) {
      const float* s = src + at.src;
      float* d = dst + at.dst;
      if (inner.src == 1 && inner.dst == 1)
#pragma omp simd
        for (int64_t j = 0; j < inner.size; ++j) d[j] = s[j];
      else
        for (int64_t j = 0; j < inner.size; ++j) d[j * inner.dst] = s[j * inner.src];
    }
  });
}

void strided_copy_naive(const float* src, const Shape& src_strides, float* dst, const Shape& dst_strides,
                        const Shape& sizes) {
  const int64_t count = numel(sizes);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, s = 0, d = 0;
    for (size_t k = sizes.size(); k-- > 0;) {
      const int64_t at = rest % sizes[k];
      rest /= sizes[k];
      s += at * src_strides[k];
      d += at * dst_strides[k];
    }
    dst[d] = src[s];
  }
}

}  // namespace ladder
