// The small convolutional network of lesson 04 (and of `./ladder bench cnn`).
#pragma once

#include <memory>

#include "nn/sequential.h"

namespace ladder::models {

// LeNet-style: two 3x3 convolutions (16 and 32 channels, zero padding 1), each followed by batch
// normalisation, ReLU and 2x2 max pooling; then a global max pool over what is left of the image
// and a linear classifier. (The convolutions have no bias: the batch norm right after adds one.)
// The global pool makes the answer independent of where in the image a feature was found.
// Input (N, 1, canvas, canvas) with canvas a multiple of 4; output (N, classes) logits.
std::shared_ptr<nn::Sequential> glyph_cnn(int64_t canvas, int64_t classes, Generator& gen = default_generator());

}  // namespace ladder::models
