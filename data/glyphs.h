// Small generated images for the CNN lesson: the digits 0-9 from a 5x7 bitmap font, drawn at a
// chosen range of positions on a blank canvas, with varying ink and noise.
#pragma once

#include <cstdint>

#include "core/random.h"
#include "core/tensor.h"

namespace ladder::data {

struct Images {
  Tensor x;  // (N, 1, H, W), values around 0 (paper) and 1 (ink)
  Tensor y;  // (N): the digit
};

struct GlyphOptions {
  int64_t canvas = 20;             // H = W
  int64_t scale = 2;               // each font pixel becomes scale x scale pixels: a 10 x 14 digit
  int64_t min_x = 0, max_x = 4;    // the digit's left edge is drawn at a column in [min_x, max_x]
  int64_t min_y = 0, max_y = 3;    // and its top edge at a row in [min_y, max_y]
  float noise = 0.15f;             // standard deviation of the Gaussian noise on every pixel
};

// n images with uniformly drawn digits and positions. Throws if the range puts a digit off the canvas.
Images glyph_images(int64_t n, const GlyphOptions& options, Generator& gen);

}  // namespace ladder::data
