#include "harness/part_flag.h"

#include <string>

namespace ladder::harness {

PartFlag::PartFlag(LessonCli& cli, int parts) {
  cli.option("--part", chosen_, "run this part alone, 1 to " + std::to_string(parts) + " (0: every part)",
             Range<int64_t>{0, parts});
}

}  // namespace ladder::harness
