// Bahdanau's additive scores from projected queries and keys, one pass each way: the kernels of
// additive_scores_projected (core/ops/additive_scores.cpp). Its naive twin is composed of ops
// (additive_scores_projected_naive), which the tests compare it against.
#pragma once

#include <cstdint>

namespace ladder {

// q (N,Q,H), k (N,S,H), w (H) -> scores (N,Q,S), scores[n,i,j] = sum_h w[h] tanh(q[n,i,h] + k[n,j,h]),
// and features (N,Q,S,H): the tanh values, which the backward reads.
void additive_scores_forward(const float* q, const float* k, const float* w, float* scores, float* features, int64_t N,
                             int64_t Q, int64_t S, int64_t H);

// g (N,Q,S): the gradient of the scores. With d = g w (1 - t^2) for t the saved tanh values:
// dq (N,Q,H) = d summed over the keys, dk (N,S,H) = d summed over the queries, dw (H) = g t summed
// over every pair. A pair whose g is 0 (a masked key) is skipped: it adds nothing.
void additive_scores_backward(const float* g, const float* features, const float* w, float* dq, float* dk, float* dw,
                              int64_t N, int64_t Q, int64_t S, int64_t H);

}  // namespace ladder
