// Lesson 13's flags, by part: the drawn pattern, the retrieval task, the timed lengths, the
// classifier and its schedule, the patterns trained. Declared with their ranges and the rules
// between them (blocks that divide the drawn length, a distance below the task's length, heads
// that divide the width); after parse, settle() shrinks them for --quick, chooses the patterns and
// refuses before any work what the rules cannot see: a pattern so short that every block sees every
// block, one with tiles too small to draw, a task that cannot be drawn, a run too large for the memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/retrieval.h"
#include "harness/cli.h"
#include "harness/schedule_flags.h"

namespace ladder::lessons {

struct BigBirdFlags {
  int64_t length = 128, block = 8, random = 3;  // part 1's pattern; block and random shape part 4's too
  data::RetrievalTaskOptions task{.length = 128, .min_distance = 8, .train = 20000, .val = 500, .test = 2000};
  int64_t examples = 2, sample = 1000;        // part 2: sequences printed, and measured
  int64_t max_n = 8192;                       // part 3
  int64_t width = 64, layers = 1, heads = 4;  // part 4's classifier
  std::string patterns_given = "all";
  std::vector<std::string> patterns;  // part 4's rows, from --patterns
  harness::ScheduleFlags schedule{.warmup = 50};

  void add_to(harness::LessonCli& cli);
  // After cli.parse(): the warmup and --quick's sizes, the patterns chosen, the task seeded; fails on
  // what cannot run.
  void settle(harness::LessonCli& cli);

 private:
  void shrink_for_quick(harness::LessonCli& cli);
  void check(const harness::LessonCli& cli) const;
};

}  // namespace ladder::lessons
