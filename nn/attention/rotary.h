// Rotary position embedding (RoPE, Su et al. 2021, "RoFormer"): instead of adding a position vector
// to the input, rotate the queries and keys. Feature pair (i, i + D/2) of the vector at position p is
// turned by the angle p * theta_i, theta_i = base^(-2i/D). A rotation by p times one by r^-1 is a
// rotation by p - r, so q_p . k_r depends on the positions only through p - r: attention sees
// relative positions, and rotations keep every vector's norm.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace ladder::nn {

// x (..., T, D) with D even, row t at position offset + t -> (..., T, D). Differentiable in x; the
// angles are constants. The pairs are (i, i + D/2), the "rotate half" layout of GPT-NeoX and LLaMA.
Tensor rotary_embedding(const Tensor& x, int64_t offset = 0, float base = 10000.0f);

}  // namespace ladder::nn
