// The seed of a draw that one attention layer makes on its own, apart from the model's generator:
// BigBird's random blocks (one draw per query block) and FAVOR+'s projection (one per redraw).
// The same (seed, layer, draw) gives the same numbers, so a model rebuilt from its settings, or
// loaded from a checkpoint, draws them again; each layer of a model passes its own index.
#pragma once

#include <cstdint>

namespace ladder::nn {

inline uint64_t layer_seed(uint64_t seed, int64_t layer, uint64_t draw) {
  // The golden-ratio multiplier and the prime keep nearby seeds and layers apart; the Generator's
  // splitmix64 then spreads the sum over its state.
  return seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(layer) * 1000003u + draw;
}

}  // namespace ladder::nn
