#include "harness/timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/error.h"

namespace ladder::harness {

Timed time_calls(const std::function<void()>& call, int repeats) {
  if (repeats < 1) fail("time_calls", "needs at least one timed call, got ", repeats);
  call();  // the warm-up, not timed
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    call();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const size_t middle = ms.size() / 2;
  const double median = ms.size() % 2 ? ms[middle] : (ms[middle - 1] + ms[middle]) / 2;
  return {median, ms.front(), ms.back()};
}

}  // namespace ladder::harness
