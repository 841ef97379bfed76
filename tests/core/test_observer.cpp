// core/observer.h: what the autograd engine and the parallel loops tell an installed observer, in
// which order, and that nothing reaches an observer once it is no longer installed.
#include "helpers.h"

#include <omp.h>

#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/kernels/parallel.h"
#include "core/observer.h"

using namespace ladder;

namespace {

// Writes down every notification as "event op" (or "event"), noting any that comes from a
// thread other than the main one or, for a loop's start and end, from inside a parallel region.
class Log final : public Observer {
 public:
  std::vector<std::string> events;
  bool off_main_thread = false;

  void op_recorded(const char* op) override { note(std::string("recorded ") + op); }
  void backward_starts(const char* op) override { note(std::string("backward starts ") + op); }
  void backward_ends(const char* op) override { note(std::string("backward ends ") + op); }
  void loop_starts() override { note("loop starts", /*in_region=*/false); }
  void main_blocks_start() override { note("main blocks start"); }
  void main_blocks_end() override { note("main blocks end"); }
  void loop_ends() override { note("loop ends", /*in_region=*/false); }

  void note(const std::string& event, bool in_region = true) {
    if (omp_get_thread_num() != 0 || (!in_region && omp_in_parallel())) off_main_thread = true;
    events.push_back(event);
  }
};

// Installs `log` while it lives.
class Installed {
 public:
  explicit Installed(Observer& observer) { installed_observer = &observer; }
  ~Installed() { installed_observer = nullptr; }
  Installed(const Installed&) = delete;
  Installed& operator=(const Installed&) = delete;
};

using Events = std::vector<std::string>;

Tensor leaf(Tensor t) { return t.requires_grad_(); }

}  // namespace

TEST_CASE("the engine tells each recorded op, then each backward function's start and end, by name") {
  Generator gen(3);
  const Tensor a = leaf(randn({4, 3}, gen)), b = randn({3, 2}, gen);
  Log log;
  {
    const Installed installed(log);
    const Tensor unrecorded = b * 2.0f;  // no input requires grad: not in the graph, not told
    const Tensor loss = sum(matmul(a, unrecorded));
    loss.backward();
  }
  CHECK(log.events == Events{"recorded matmul", "recorded sum", "backward starts sum", "backward ends sum",
                             "backward starts matmul", "backward ends matmul"});
  CHECK_FALSE(log.off_main_thread);
}

TEST_CASE("nothing is recorded under NoGradGuard, and nothing is told once the observer is removed") {
  const Tensor x = leaf(randn({8}));
  Log log;
  {
    const Installed installed(log);
    const NoGradGuard no_grad;
    const Tensor y = x * 3.0f;
  }
  CHECK(log.events.empty());
  sum(exp(x)).backward();  // no observer installed: nothing may reach the log
  const ladder::testing::TwoThreads two;
  parallel_for(2, kMinParallelWork, [](int64_t, int64_t) {});
  CHECK(log.events.empty());
}

TEST_CASE("a loop that opens a parallel region tells its start, the main thread's blocks and its end, in order") {
  const ladder::testing::TwoThreads two;
  Log log;
  {
    const Installed installed(log);
    parallel_for_blocks(2, kMinParallelWork, [&](int64_t, int64_t, int block) {
      if (block == 0) log.events.push_back("block 0");  // thread 0 always runs block 0
    });
  }
  CHECK(log.events == Events{"loop starts", "main blocks start", "block 0", "main blocks end", "loop ends"});
  CHECK_FALSE(log.off_main_thread);
}

TEST_CASE("a loop that opens no parallel region tells nothing") {
  const ladder::testing::TwoThreads two;
  Log log;
  const Installed installed(log);
  SUBCASE("too little work for a second thread") { parallel_for(2, 1, [](int64_t, int64_t) {}); }
  SUBCASE("one thread running two blocks") {
    set_running_threads(1);
    parallel_for(2, kMinParallelWork, [](int64_t, int64_t) {});
    set_running_threads(2);
  }
  CHECK(log.events.empty());
}

TEST_CASE("a backward function's parallel loops are told between its start and its end") {
  const ladder::testing::TwoThreads two;
  const Shape shape{256, 256};
  ladder::testing::require_threaded(numel(shape), 1);
  const Tensor x = leaf(randn(shape));
  const Tensor y = exp(x);
  Log log;
  {
    const Installed installed(log);
    sum(y).backward();
  }
  const auto at = [&](const std::string& event) {
    return std::find(log.events.begin(), log.events.end(), event) - log.events.begin();
  };
  const auto starts = at("backward starts exp"), ends = at("backward ends exp");
  REQUIRE(ends < static_cast<ptrdiff_t>(log.events.size()));
  // exp's backward, gy * y, runs one loop over the elements
  CHECK(Events(log.events.begin() + starts + 1, log.events.begin() + ends) ==
        Events{"loop starts", "main blocks start", "main blocks end", "loop ends"});
  CHECK_FALSE(log.off_main_thread);
}
