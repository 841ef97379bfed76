#include "lessons/common/schedule_flags.h"

#include "core/error.h"

namespace ladder::lessons {

void ScheduleFlags::add_to(LessonCli& cli, const std::string& part) {
  cli.option("--warmup", warmup, part + "steps of linear learning-rate warmup before the cosine decay", non_negative);
  cli.option("--lr-floor", floor, part + "where the cosine decay ends, as a fraction of --lr (1: a constant rate)", {0.0f, 1.0f});
}

void ScheduleFlags::check(const std::string& lesson, int64_t steps) const {
  if (warmup >= steps)
    fail(lesson.c_str(), "--warmup ", warmup, " leaves no step of --steps ", steps,
         " for the cosine decay; give a smaller --warmup");
}

}  // namespace ladder::lessons
