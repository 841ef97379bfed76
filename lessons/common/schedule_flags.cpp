#include "lessons/common/schedule_flags.h"

#include "core/error.h"

namespace ladder::lessons {

void ScheduleFlags::add_to(LessonCli& cli, const std::string& part) {
  cli.option("--warmup", warmup, part + "steps of linear learning-rate warmup before the cosine decay", non_negative);
  cli.option("--lr-floor", floor, part + "where the cosine decay ends, as a fraction of --lr (1: a constant rate)", {0.0f, 1.0f});
}

namespace {

void check_warmup(const std::string& lesson, int64_t warmup, int64_t steps) {
  if (warmup >= steps)
    fail(lesson.c_str(), "--warmup ", warmup, " leaves no step of --steps ", steps,
         " for the cosine decay; give a smaller --warmup");
}

}  // namespace

void ScheduleFlags::check(const std::string& lesson, int64_t steps) const { check_warmup(lesson, warmup, steps); }

void ScheduleFlags::check_after_quick(const std::string& lesson, const LessonCli& cli) const {
  if (!cli.common.quick || cli.given("--warmup")) {
    const nlohmann::json& given = cli.flags_at_start();
    return check_warmup(lesson, given.at("warmup").get<int64_t>(), given.at("steps").get<int64_t>());
  }
  const int64_t steps = cli.common.steps;
  if (warmup >= steps)
    fail(lesson.c_str(), "--quick runs ", steps, " step", steps == 1 ? "" : "s", " with a warmup of ", warmup,
         " steps, which leaves none for the cosine decay; give --steps ", warmup + 1, " or more, or --warmup 0");
}

}  // namespace ladder::lessons
