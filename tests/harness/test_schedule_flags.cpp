// The learning-rate schedule as flags (harness/schedule_flags.h): each decay shape against its
// formula, and a shape that is none refused by name.
#include "helpers.h"

#include <cmath>
#include <string>

#include "harness/schedule_flags.h"

using namespace ladder;

TEST_CASE("ScheduleFlags: each decay shape's rate at a few steps, against the formula by hand") {
  // 100 steps at 1e-3, a warmup of 10 then down to a floor of 0.1: step s (from 0) of the warmup is lr (s + 1) / 10.
  const float lr = 1e-3f, floor = 1e-4f;
  const double pi = 3.14159265358979323846;
  for (const std::string shape : {"cosine", "linear", "constant"}) {
    CAPTURE(shape);
    const optim::Schedule rate = harness::ScheduleFlags{.warmup = 10, .floor = 0.1f, .decay = shape}.schedule(lr, 100);
    CHECK(rate(0) == doctest::Approx(1e-4));
    CHECK(rate(4) == doctest::Approx(5e-4));
    CHECK(rate(9) == doctest::Approx(1e-3));
    for (const int64_t step : {10, 30, 55, 99, 100, 150}) {
      const double progress = std::min(1.0, (step - 10) / 90.0);
      const double expected = shape == "cosine"   ? floor + 0.5 * (lr - floor) * (1 + std::cos(pi * progress))
                              : shape == "linear" ? lr - (lr - floor) * progress
                                                  : lr;
      CHECK(rate(step) == doctest::Approx(expected).epsilon(1e-5));
    }
  }
}

TEST_CASE("ScheduleFlags::schedule refuses a decay that is no shape (--decay itself is a choice CLI11 checks)") {
  const harness::ScheduleFlags bad{.decay = "step"};
  CHECK_THROWS_WITH_AS(bad.schedule(1e-3f, 1000), doctest::Contains("no decay shape 'step'"), Error);
}
