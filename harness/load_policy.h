// How many threads a lesson run without --threads runs: as many as other programs leave cores
// free. Beside a busy program, the second thread of a parallel loop waits for a core and every
// loop stalls at its end until it gets one: lessons ran 10-50x slower than with --threads 1. Core
// keeps cutting loops into num_threads() blocks however many threads run them, so ladder's own
// loops give the same results bit for bit (core/kernels/parallel.h).
#pragma once

#include <thread>

namespace ladder::harness {

// Cores that no other program is using now: the machine's cores less the tasks of other programs
// that are running or ready to run (all of the machine's, from /proc/loadavg, less this process's
// own running threads, from /proc/self/task: an OpenMP worker still spinning after a region is not
// a busy core). 0 when every core is taken; -1 when /proc cannot be read.
int free_cores();

// The rule that turns looks at the machine into a thread count between 1 and max_threads: fewer
// at once when a core is taken; more only after two looks agree, so that a program that runs for
// an instant does not make the count flicker.
class LoadPolicy {
 public:
  explicit LoadPolicy(int max_threads);
  int look(int free_cores);  // the count to run after one more look (free_cores < 0: no change)

 private:
  int max_threads_, running_;
  int free_looks_ = 0;  // consecutive looks that found more free cores than threads running
};

// While it lives, a thread of its own looks at the machine every 100 ms and tells core how many
// threads may run (set_running_threads); the main thread takes the count up at its next parallel
// loop or BLAS call. When it is destroyed, every thread may run again.
class LoadWatcher {
 public:
  LoadWatcher();
  ~LoadWatcher();
  LoadWatcher(const LoadWatcher&) = delete;
  LoadWatcher& operator=(const LoadWatcher&) = delete;

 private:
  std::jthread thread_;
};

// A LoadWatcher for the rest of the process (a lesson run without --threads); again: no change.
void adapt_threads_to_load();

}  // namespace ladder::harness
