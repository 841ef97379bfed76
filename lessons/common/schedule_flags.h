// The learning-rate schedule of the lessons that train with AdamW (10 to 15) as flags, checked in one
// place: a linear warmup of --warmup steps, then a cosine decay to --lr-floor times the rate at the
// last step. nanoGPT's recipe is the default (a floor of 0.1); makemore's constant rate is
// --warmup 0 --lr-floor 1 (a cosine from the rate to itself stays flat).
#pragma once

#include <cstdint>
#include <string>

#include "lessons/common/cli.h"
#include "optim/schedule.h"

namespace ladder::lessons {

struct ScheduleFlags {
  int64_t warmup = 100;
  float floor = 0.1f;  // the cosine ends at floor * lr

  // --warmup and --lr-floor; `part` starts their help ("part 4: ").
  void add_to(LessonCli& cli, const std::string& part = "");
  // Refuses a warmup that leaves no step of `steps` for the decay. After cli.parse().
  void check(const std::string& lesson, int64_t steps) const;
  // The same in a lesson whose --quick cuts the steps and the warmup, after the cuts: a --warmup the
  // user gave is judged against the --steps they gave (their own numbers must fit), the default
  // warmup against what --quick runs, which the message then names.
  void check_after_quick(const std::string& lesson, const LessonCli& cli) const;
  // The rate of step s (from 0) for a run of `steps` steps at peak rate `lr`.
  // (lr / (1 / floor) rather than floor * lr: the default floor then gives lr / 10 to the bit, as before the flag.)
  optim::Schedule schedule(float lr, int64_t steps) const { return optim::cosine_lr(lr, warmup, steps, lr / (1.0f / floor)); }
};

}  // namespace ladder::lessons
