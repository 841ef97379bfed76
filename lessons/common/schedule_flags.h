// The learning-rate schedule of the lessons that train with AdamW (10 to 15) as flags, checked in one
// place: a linear warmup of --warmup steps, then a cosine decay to a tenth of the rate at the last step.
#pragma once

#include <cstdint>
#include <string>

#include "lessons/common/cli.h"
#include "optim/schedule.h"

namespace ladder::lessons {

struct ScheduleFlags {
  int64_t warmup = 100;

  // --warmup; `part` starts its help ("part 4: ").
  void add_to(LessonCli& cli, const std::string& part = "");
  // Refuses a warmup that leaves no step of `steps` for the decay. After cli.parse().
  void check(const std::string& lesson, int64_t steps) const;
  // The rate of step s (from 0) for a run of `steps` steps at peak rate `lr`.
  optim::Schedule schedule(float lr, int64_t steps) const { return optim::cosine_lr(lr, warmup, steps, lr / 10); }
};

}  // namespace ladder::lessons
