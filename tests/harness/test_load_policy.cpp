// harness/load_policy.h: the rule that turns looks at the machine into a thread count, and the
// watcher that makes core run fewer threads beside busy programs, with the same blocks and results.
#include "helpers.h"

#include <omp.h>

#include <chrono>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/load_policy.h"

using namespace ladder;
using ladder::harness::LoadPolicy;
using ladder::harness::LoadWatcher;

TEST_CASE("the policy drops at once, rises only after two looks agree, and stays within 1..max") {
  LoadPolicy policy(2);
  CHECK(policy.look(2) == 2);
  CHECK(policy.look(0) == 1);   // a core taken: fewer at once, never none
  CHECK(policy.look(-1) == 1);  // /proc unreadable: no change
  CHECK(policy.look(2) == 1);   // one look at a free core is not enough
  CHECK(policy.look(1) == 1);   // and a look that disagrees starts the count again
  CHECK(policy.look(2) == 1);
  CHECK(policy.look(5) == 2);   // the second look in a row: up, but not beyond max
  CHECK(policy.look(5) == 2);
}

TEST_CASE("while other programs keep the cores busy, the watcher has one thread run the same blocks") {
  // Two spinning child processes are two runnable tasks of other programs: on a machine with two
  // cores none is free, so the watcher asks for one thread. Core still cuts loops into two blocks
  // (num_threads() is 2), so every sum is added in the same order as with two threads. (Threads of
  // this process do not count: an OpenMP worker still spinning after a region is not a busy core.)
  if (omp_get_num_procs() != 2) return;  // the arithmetic below is for two cores
  const ladder::testing::TwoThreads two;
  const Tensor x = randn({513, 129});
  const Tensor fixed = sum(softmax(x, -1) * x, {0});
  std::vector<pid_t> busy;
  for (int i = 0; i < 2; ++i) {
    const pid_t child = fork();
    if (child == 0)
      for (;;) asm volatile("");  // spin until killed (an empty loop the compiler keeps)
    busy.push_back(child);
  }
  int running = 0, level = -1, free = 0;
  Tensor adapted;
  {
    const LoadWatcher watcher;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // it looks every 100 ms
    free = harness::free_cores();
    running = running_threads();
    adapted = sum(softmax(x, -1) * x, {0});
    // One thread opens no parallel region: a BLAS call in the body then sees it is not inside one
    // and uses its own (one) thread, instead of starting a team of new threads on every call.
    parallel_for(2, kMinParallelWork, [&](int64_t, int64_t) { level = omp_get_level(); });
  }
  for (const pid_t child : busy) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  CHECK(free == 0);
  CHECK(num_threads() == 2);
  CHECK(running == 1);
  CHECK(level == 0);
  CHECK(adapted.to_vector() == fixed.to_vector());
  CHECK(running_threads() == 2);  // the watcher gone, every thread runs again
}
