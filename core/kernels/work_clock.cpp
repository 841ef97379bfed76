#include "core/kernels/work_clock.h"

#include <omp.h>

#include <vector>

namespace ladder {

namespace {

using Clock = std::chrono::steady_clock;

// The clock's state: the totals, the open scopes innermost last, and when the innermost one was
// last charged.
struct WorkClock {
  bool recording = false;
  WorkTimes totals;
  std::vector<Work> open;
  Clock::time_point since;
};

WorkClock& clock() {
  static WorkClock state;
  return state;
}

// Charges the time since the last charge to the innermost open scope.
void charge_innermost(WorkClock& c, Clock::time_point now) {
  if (!c.open.empty())
    c.totals.seconds[static_cast<size_t>(c.open.back())] += std::chrono::duration<double>(now - c.since).count();
  c.since = now;
}

// A scope counts on the main thread outside parallel regions, and not inside the attention, which
// keeps its own GEMMs (at one thread they run outside any parallel region, at two inside one: the
// attention's share must not depend on that).
bool counts(const WorkClock& c) {
  return c.recording && !omp_in_parallel() && (c.open.empty() || c.open.back() != Work::attention);
}

}  // namespace

void start_work_clock() {
  WorkClock& c = clock();
  c.recording = true;
  c.totals = {};
  c.open.clear();
}

WorkTimes work_clock_now() { return clock().totals; }

WorkTimes stop_work_clock() {
  WorkClock& c = clock();
  c.recording = false;
  return c.totals;
}

TimedWork::TimedWork(Work kind) : counted_(counts(clock())) {
  if (!counted_) return;
  WorkClock& c = clock();
  charge_innermost(c, Clock::now());
  c.open.push_back(kind);
}

TimedWork::~TimedWork() {
  WorkClock& c = clock();
  if (!counted_ || c.open.empty()) return;  // empty: the clock was started again inside this scope
  charge_innermost(c, Clock::now());
  c.open.pop_back();
}

}  // namespace ladder
