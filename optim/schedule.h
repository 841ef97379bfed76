// Learning-rate schedules: the learning rate as a function of the step (counting from 0).
// Use: optimizer.set_lr(schedule(step)) before optimizer.step().
#pragma once

#include <cstdint>
#include <functional>

namespace ladder::optim {

using Schedule = std::function<float(int64_t step)>;

Schedule constant_lr(float lr);
// Linear warm-up from lr/warmup to lr over `warmup` steps, then a half cosine down to min_lr
// at total_steps (and min_lr after).
Schedule cosine_lr(float lr, int64_t warmup, int64_t total_steps, float min_lr = 0);

}  // namespace ladder::optim
