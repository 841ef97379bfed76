// --part N: one numbered part of a lesson run alone, as an exercise often needs (lessons 12 to 15).
// summary.json then holds that part's metrics only. A part that draws from the lesson's generator
// after earlier parts starts from another state when run alone, so its random inputs (and figures
// that depend on them) can differ from the whole run's; the trained models' figures do not.
#pragma once

#include "harness/cli.h"

namespace ladder::harness {

class PartFlag {
 public:
  // Adds --part to `cli`: 0 (the default) runs every part, 1 to `parts` that part alone; any other
  // value is refused by the command line before the lesson starts.
  PartFlag(LessonCli& cli, int parts);
  bool runs(int part) const { return chosen_ == 0 || chosen_ == part; }
  bool all() const { return chosen_ == 0; }

 private:
  int64_t chosen_ = 0;
};

}  // namespace ladder::harness
