#include "optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"

namespace ladder::optim {

Schedule constant_lr(float lr) {
  return [lr](int64_t) { return lr; };
}

Schedule cosine_lr(float lr, int64_t warmup, int64_t total_steps, float min_lr) {
  if (warmup < 0 || total_steps <= warmup)
    fail("cosine_lr", "needs 0 <= warmup < total_steps, got warmup=", warmup, ", total_steps=", total_steps);
  return [=](int64_t step) {
    if (step < warmup) return lr * static_cast<float>(step + 1) / static_cast<float>(warmup);
    const double progress = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(total_steps - warmup));
    return static_cast<float>(min_lr + 0.5 * (lr - min_lr) * (1 + std::cos(std::numbers::pi * progress)));
  };
}

}  // namespace ladder::optim
