// Copies values between two layouts of the same sizes: for every index (i_0, ..., i_r-1) of
// `sizes`, dst[sum i_d * dst_strides[d]] = src[sum i_d * src_strides[d]]. This is the copy
// behind permute and transpose (src strides permuted, dst contiguous), slice (src strides stepped)
// and slice's backward (dst strides stepped). Distinct indices must reach distinct dst elements.
#pragma once

#include "core/shape.h"

namespace ladder {

// Dims of size 1 are dropped and dims that both layouts step through as one block are merged
// first. Then one of three loops runs, threads splitting the work:
//   - the innermost dim has stride 1 on both sides: contiguous rows, copied as such;
//   - dst's innermost dim has stride 1 and src has stride 1 on another dim (a transpose): square
//     tiles of those two dims, so that both sides' reads and writes stay within a few cache lines;
//   - anything else: rows read and written with their strides.
void strided_copy(const float* src, const Shape& src_strides, float* dst, const Shape& dst_strides,
                  const Shape& sizes);

// Naive twin: one element at a time, its offsets computed from its index.
void strided_copy_naive(const float* src, const Shape& src_strides, float* dst, const Shape& dst_strides,
                        const Shape& sizes);

}  // namespace ladder
