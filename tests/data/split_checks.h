// The checks every seeded generator of train/val/test parts passes (data/listops.h,
// data/retrieval.h): the same seed gives the same parts, each part draws from its own generator,
// another seed gives other examples, and the test part does not move when the training part grows.
#pragma once

#include <algorithm>

#include <doctest/doctest.h>

#include "core/tensor.h"

namespace ladder::testing {

inline bool same_values(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::equal(a.data(), a.data() + a.numel(), b.data());
}

// `make(options)` gives the parts (.train, .val, .test), `same(a, b)` compares two parts, and
// `first(part)` is a part's first example in a comparable form; the options have .seed and .train.
template <class Options, class Make, class Same, class First>
void check_seeded_splits(const Options& options, Make make, Same same, First first) {
  const auto a = make(options), b = make(options);
  CHECK(same(a.train, b.train));
  CHECK(same(a.val, b.val));
  CHECK(same(a.test, b.test));
  CHECK(first(a.train) != first(a.val));  // each part draws from its own generator
  CHECK(first(a.val) != first(a.test));
  Options other = options;
  other.seed = options.seed + 1;
  CHECK(!same(make(other).train, a.train));
  Options more_train = options;
  more_train.train = options.train + 200;
  CHECK(same(make(more_train).test, a.test));  // the test part does not move
}

}  // namespace ladder::testing
