// Timing a piece of work on a machine that other programs share: one call first to warm up
// (caches, the allocator, OpenMP's threads), then `repeats` timed calls. Their median is the
// figure; the fastest and the slowest say how far one call moved from the next.
#pragma once

#include <functional>

namespace ladder::harness {

struct Timed {
  double median_ms, fastest_ms, slowest_ms;
  double spread() const { return (slowest_ms - fastest_ms) / median_ms; }  // 0.05: calls within 5% of the median
};

Timed time_calls(const std::function<void()>& call, int repeats);

}  // namespace ladder::harness
