// What the attention building-block suites (tests/nn/test_attention_blocks_*.cpp) share: fresh
// leaves, and what a masked row of weights must hold.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace ladder::testing {

using Inputs = const std::vector<Tensor>&;

inline Tensor leaf(const Tensor& t) {
  Tensor copy = t.detach().clone();
  return copy.requires_grad_();
}

// Every row of weights (..., S) sums to 1 over the keys visible[row] leaves open and is exactly 0
// elsewhere; a row with no visible key is all 0. visible has the weights' shape.
inline void check_weights_respect(const Tensor& weights, const Tensor& visible) {
  REQUIRE(weights.shape() == visible.shape());
  const int64_t keys = weights.size(-1);
  for (int64_t row = 0; row < weights.numel() / keys; ++row) {
    double total = 0;
    bool any = false;
    for (int64_t j = 0; j < keys; ++j) {
      const float w = weights.data()[row * keys + j];
      if (visible.data()[row * keys + j] != 0) {
        any = true;
        total += w;
        CHECK(w >= 0);
      } else {
        CHECK_MESSAGE(w == 0.0f, "row ", row, " key ", j, " is masked but has weight ", w);
      }
    }
    CHECK_MESSAGE(std::fabs(total - (any ? 1.0 : 0.0)) < 1e-5, "row ", row, " sums to ", total);
  }
}

}  // namespace ladder::testing
