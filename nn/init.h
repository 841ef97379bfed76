// Weight initialisation. Each fills a tensor in place from a Generator, so a seed pins it.
#pragma once

#include <utility>

#include "core/random.h"
#include "core/tensor.h"

namespace ladder::nn {

enum class Init {
  pytorch,  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's default for Linear and Conv2d
  xavier,   // U(-a, a), a = sqrt(6 / (fan_in + fan_out)): keeps variance through tanh layers
  kaiming,  // N(0, 2 / fan_in): keeps variance through ReLU layers
  normal,   // N(0, std^2) with a given std (GPT-2 uses 0.02)
};

// fan_in and fan_out of a weight shaped (out, in, kernel...) as in PyTorch.
std::pair<int64_t, int64_t> fans(const Tensor& weight);

void init_uniform(const Tensor& t, float low, float high, Generator& gen);
void init_normal(const Tensor& t, float mean, float std, Generator& gen);
// A random matrix (rows, cols) with orthonormal rows (or columns, whichever are fewer), times
// gain: Gram-Schmidt on Gaussian vectors. Used for recurrent weights, whose powers then neither
// grow nor shrink.
void init_orthogonal(const Tensor& t, Generator& gen, float gain = 1.0f);

// Fills a weight by `scheme`; std is used by Init::normal only.
void init_weight(const Tensor& weight, Init scheme, Generator& gen, float std = 0.02f);

}  // namespace ladder::nn
