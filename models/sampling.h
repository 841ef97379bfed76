// What every sampler checks before it draws: logits that are NaN or infinite (weights that
// diverged) give no distribution, and drawing from one would return the same token forever.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/error.h"

namespace ladder::models {

// logits: (V) -- one position's scores for the next token.
inline void check_finite_logits(const char* op, const float* logits, int64_t V) {
  const float* bad = std::find_if(logits, logits + V, [](float v) { return !std::isfinite(v); });
  if (bad != logits + V)
    fail(op, "the model's next-token logits hold ", std::isnan(*bad) ? "nan" : cat(*bad),
         " (at token id ", bad - logits, "): its weights have diverged, so there is nothing to sample from; train again with a smaller --lr");
}

}  // namespace ladder::models
