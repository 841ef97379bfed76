// What the threaded suites (tests/core/test_threaded_*.cpp) share. Each runs threaded loops of the
// core on two threads, on a shape large enough to split, forward and backward, against a naive
// twin: the *_naive kernel where there is one, else plain loops written in the suite (double
// accumulation). Each case first requires that its shapes really take the threaded path:
// parallel_blocks(n, work) > 1, i.e. n * work >= kMinParallelWork (32768) for the n and the work
// per item the kernel passes to parallel_for. Sizes are odd where they can be, so that the split
// between the two threads falls inside a row.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "core/tensor.h"

namespace ladder::testing {

inline Tensor leaf(const Tensor& values) {
  Tensor t = values.clone();
  t.requires_grad_();
  return t;
}

inline Tensor to_tensor(const std::vector<double>& values, const Shape& shape) {
  Tensor t = empty(shape);
  for (size_t i = 0; i < values.size(); ++i) t.data()[i] = static_cast<float>(values[i]);
  return t;
}

inline int64_t at(const Tensor& index, int64_t i) { return static_cast<int64_t>(index.data()[i]); }

// The sizes before dim, at dim and after it: a tensor seen as (outer, size, inner).
struct Around {
  int64_t outer = 1, size = 1, inner = 1;
  Around(const Shape& shape, int64_t dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      (d < dim ? outer : d == dim ? size : inner) *= shape[d];
  }
};

}  // namespace ladder::testing
