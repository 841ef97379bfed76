// The learning-rate schedule of the lessons that train with AdamW (10 to 16) as flags, checked in one
// place: a linear warmup of --warmup steps, then a decay of --decay's shape to --lr-floor times the
// rate at the last step. nanoGPT's recipe is the default (cosine to a floor of 0.1); makemore's
// constant rate is --warmup 0 --decay constant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "optim/schedule.h"

namespace ladder::harness {

struct ScheduleFlags {
  int64_t warmup = 100;
  float floor = 0.1f;             // the decay ends at floor * lr
  std::string decay = "cosine";   // after the warmup: cosine or linear down to the floor, or constant at lr

  static const std::vector<std::string>& decays();  // the shapes --decay takes
  // --warmup, --lr-floor and --decay; `part` starts their help ("part 4: ").
  void add_to(LessonCli& cli, const std::string& part = "");
  // Refuses a warmup that leaves no step of `steps` after it. After cli.parse().
  void check(const std::string& lesson, int64_t steps) const;
  // The same in a lesson whose --quick cuts the steps and the warmup, after the cuts: a --warmup the
  // user gave is judged against the --steps they gave (their own numbers must fit), the default
  // warmup against what --quick runs, which the message then names.
  void check_after_quick(const std::string& lesson, const LessonCli& cli) const;
  // The rate of step s (from 0) for a run of `steps` steps at peak rate `lr`.
  optim::Schedule schedule(float lr, int64_t steps) const;
};

}  // namespace ladder::harness
