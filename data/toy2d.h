// Seeded 2-D toy data for the classification and regression lessons.
#pragma once

#include <utility>
#include <vector>

#include "core/random.h"
#include "core/tensor.h"

namespace ladder::data {

struct Points {
  Tensor x;  // (N, 2)
  Tensor y;  // (N): class ids (as floats), or regression targets
};

// Gaussian clusters around the centers, n points each, labelled by cluster.
Points blobs(int64_t n_per_class, const std::vector<std::pair<float, float>>& centers, float spread, Generator& gen);
// Two clusters around (-1,-1) and (1,1), keeping only points at least `margin` from the line
// x1 + x2 = 0 on their own side: linearly separable by construction (for the perceptron).
Points separable_blobs(int64_t n_per_class, float spread, float margin, Generator& gen);
// The XOR problem: clusters at (+-1, +-1); the class is 1 when exactly one coordinate is positive.
Points xor_points(int64_t n_per_cluster, float spread, Generator& gen);
// Interleaved spiral arms, one per class (a classic that no linear model can separate); each
// arm winds `turns` times around the centre, and the angle gets N(0, noise^2) jitter.
Points spirals(int64_t n_per_class, int classes, float noise, Generator& gen, float turns = 1.5f);
// x ~ U(-1, 1)^2 and y = x . weights + bias + N(0, noise^2).
Points linear_targets(int64_t n, std::pair<float, float> weights, float bias, float noise, Generator& gen);

}  // namespace ladder::data
