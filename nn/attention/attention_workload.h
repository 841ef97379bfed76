// The work an attention kind is timed on against the length, written once so that ./ladder bench
// attention and the lessons (lessons/attention_kinds/layer_cost.h, lesson 13's timing) measure the same
// thing: one training step of a layer at B=1, H=4, D=64, and one generated token.
#pragma once

#include <cstdint>
#include <functional>

#include "core/random.h"
#include "nn/attention/attention_kind.h"

namespace ladder::nn {

inline constexpr int64_t kWorkloadHeads = 4, kWorkloadHeadDim = 64;

// One training step of a layer of `settings` over `length` positions, causal or not. The kind (for
// H=4 heads of D=64) and its inputs, q, k, v (1,H,T,D) and the output's gradient, are made once, in
// that order, from gen; each call resets the gradients, runs forward and backward, backpropagates
// the auxiliary losses the layer recorded and calls after_optimizer_step() (vq: the codebook's EMA
// step), as optim::train_step does.
std::function<void()> layer_training_step(const AttentionSettings& settings, int64_t length, bool causal,
                                          Generator& gen);

// One generated token after a context of `context` positions: the kind (eval mode, no gradients) is
// fed the context once; each call steps one new token on a copy of that state, so that every call
// sees the same context.
std::function<void()> generated_token(const AttentionSettings& settings, int64_t context, Generator& gen);

}  // namespace ladder::nn
