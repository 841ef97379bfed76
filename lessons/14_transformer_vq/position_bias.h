// The position term a GPT with Transformer-VQ attention learned inside each query's window
// (nn::RelativePositions): per layer and head, the score it adds to key j for query i, averaged over
// the queries of some validation windows, against the offset i - j. Lesson 14 draws it once its VQ
// model is trained.
#pragma once

#include "core/tensor.h"
#include "harness/run.h"
#include "lessons/14_transformer_vq/codebook.h"
#include "models/gpt.h"

namespace ladder::lessons {

// Prints the bias at a few offsets for every head and draws vq_position_bias: one curve per layer
// and head over the offsets 0 .. L, averaged over the real queries of the sample. Nothing for a
// model whose VQ layers have no position term.
void position_bias_report(harness::Run& run, models::GPT& model, const KeySample& sample);

}  // namespace ladder::lessons
