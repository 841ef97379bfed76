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

// Not subject to counts(): the attention's own loops have their waits charged apart too, so that
// the attention's share at two threads is its work, as at one.
LoopWait::LoopWait() : counted_(clock().recording && !omp_in_parallel()) {
  if (counted_) region_start_ = Clock::now();
}

void LoopWait::main_thread_starts() {
  if (counted_) main_start_ = Clock::now();
}

void LoopWait::main_thread_ends() {
  if (counted_) main_end_ = Clock::now();
}

LoopWait::~LoopWait() {
  WorkClock& c = clock();
  if (!counted_ || !c.recording) return;
  const Clock::time_point region_end = Clock::now();
  // The region's time in pieces: the innermost scope gets since..region_start and the main
  // thread's blocks, sync the gap before them and the wait after. (In a region of one thread,
  // scopes inside do count and move `since` past region_start; the first piece then comes out
  // negative and takes back what the scope would otherwise be charged twice.)
  double& sync = c.totals.seconds[static_cast<size_t>(Work::sync)];
  charge_innermost(c, region_start_);
  sync += std::chrono::duration<double>(main_start_ - region_start_).count();
  c.since = main_start_;
  charge_innermost(c, main_end_);
  sync += std::chrono::duration<double>(region_end - main_end_).count();
  c.since = region_end;
}

}  // namespace ladder
