// Shapes: how many elements, how they print, how two shapes broadcast.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder {

using Shape = std::vector<int64_t>;
using Dims = std::vector<int64_t>;  // a list of dimensions, negative ones count from the end

// The number of elements; throws when the sizes multiply beyond 64 bits.
int64_t numel(const Shape& shape);

// "(2,3,4)"; a scalar prints as "()".
std::string shape_str(const Shape& shape);

// Row-major strides in elements: (2,3,4) -> (12,4,1).
Shape contiguous_strides(const Shape& shape);

// NumPy broadcasting: align from the right; each pair of sizes must be equal or one of them 1.
// Throws naming `op` and both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Maps dim in [-rank, rank) to [0, rank); throws naming `op` otherwise.
int64_t normalize_dim(int64_t dim, int64_t rank, const char* op);

// Normalised, sorted, duplicate-free dims; an empty list means every dim.
Dims normalize_dims(const Dims& dims, int64_t rank, const char* op);

}  // namespace ladder
