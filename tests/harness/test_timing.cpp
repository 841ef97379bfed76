// harness/timing.h: the median of timed calls after one to warm up, and their spread.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "core/error.h"
#include "harness/timing.h"

using namespace ladder;

TEST_CASE("time_calls warms up once, then times each call: the median lies between the fastest and the slowest") {
  int calls = 0;
  const harness::Timed timed = harness::time_calls(
      [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(calls == 3 ? 20 : 2));  // one slow call among five
      },
      5);
  CHECK(calls == 6);
  CHECK(timed.fastest_ms >= 2);
  CHECK(timed.slowest_ms >= 20);
  CHECK(timed.median_ms < 20);  // one slow call moves the median by nothing: it is not the mean
  CHECK(timed.fastest_ms <= timed.median_ms);
  CHECK(timed.spread() == doctest::Approx((timed.slowest_ms - timed.fastest_ms) / timed.median_ms));
}

TEST_CASE("time_calls refuses to time no call, naming the count") {
  CHECK_THROWS_WITH_AS(harness::time_calls([] {}, 0), "time_calls: needs at least one timed call, got 0", Error);
}
