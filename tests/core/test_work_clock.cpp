// core/kernels/work_clock.h: the wall time charged to kinds of work while the clock records. Only
// lower bounds and sums are asserted (time slept is at least what was asked for; the charges never
// exceed the wall time around them), never how fast anything runs.
#include "helpers.h"

#include <omp.h>

#include <chrono>
#include <thread>

#include "core/kernels/parallel.h"
#include "core/kernels/work_clock.h"

using namespace ladder;

namespace {

using Clock = std::chrono::steady_clock;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

TEST_CASE("a scope is charged its wall time only while the clock records") {
  {
    const TimedWork idle(Work::gemm);
    sleep_ms(5);
  }
  start_work_clock();
  CHECK(work_clock_now()[Work::gemm] == 0);  // nothing from before the start
  {
    const TimedWork timed(Work::gemm);
    sleep_ms(10);
  }
  const WorkTimes recorded = stop_work_clock();
  CHECK(recorded[Work::gemm] >= 0.010);
  CHECK(recorded[Work::attention] == 0);
  {
    const TimedWork after(Work::gemm);
    sleep_ms(5);
  }
  CHECK(work_clock_now()[Work::gemm] == recorded[Work::gemm]);  // stopped: nothing more
}

TEST_CASE("nested scopes: each kind gets its own time, and the charges add up to at most the wall time") {
  start_work_clock();
  const Clock::time_point start = Clock::now();
  {
    const TimedWork outer(Work::op_backward);
    sleep_ms(10);
    {
      const TimedWork inner(Work::gemm);
      sleep_ms(30);
    }
    sleep_ms(10);
  }
  const double wall = seconds_since(start);
  const WorkTimes t = stop_work_clock();
  CHECK(t[Work::gemm] >= 0.030);
  CHECK(t[Work::op_backward] >= 0.020);
  CHECK(t[Work::op_backward] <= wall - t[Work::gemm]);  // the inner GEMM was not charged to the backward too
  CHECK(t[Work::op_backward] + t[Work::gemm] <= wall);
}

TEST_CASE("the attention keeps the GEMMs inside it, whether or not they run in a parallel region") {
  start_work_clock();
  {
    const TimedWork attention(Work::attention);
    sleep_ms(5);
    {
      const TimedWork inner(Work::gemm);  // as the kernel's GEMMs at one thread: no parallel region
      sleep_ms(10);
    }
  }
  const WorkTimes t = stop_work_clock();
  CHECK(t[Work::gemm] == 0);
  CHECK(t[Work::attention] >= 0.015);
}

TEST_CASE("scopes inside a parallel region are not charged: the region belongs to the scope that started it") {
  start_work_clock();
#pragma omp parallel num_threads(2)
  {
    const TimedWork timed(Work::attention);
    sleep_ms(5);
  }
  const WorkTimes t = stop_work_clock();
  CHECK(t[Work::attention] == 0);
}

TEST_CASE("starting the clock again zeroes the totals") {
  start_work_clock();
  {
    const TimedWork timed(Work::attention);
    sleep_ms(5);
  }
  CHECK(work_clock_now()[Work::attention] >= 0.005);
  start_work_clock();
  CHECK(work_clock_now()[Work::attention] == 0);
  stop_work_clock();
}

TEST_CASE("gemm and the backward of a matmul are charged to GEMM, the backward function to op_backward") {
  Generator gen(1);
  Tensor a = randn({64, 64}, gen), b = randn({64, 64}, gen);
  a.requires_grad_();
  start_work_clock();
  const Tensor c = matmul(a, b);
  const double forward_gemm = work_clock_now()[Work::gemm];
  sum(c).backward();
  const WorkTimes t = stop_work_clock();
  CHECK(forward_gemm > 0);
  CHECK(t[Work::gemm] > forward_gemm);  // the backward's product with b
  CHECK(t[Work::op_backward] > 0);
  CHECK(a.grad().defined());
}

TEST_CASE("a parallel loop's waits are charged to sync, its own work to the scope around it") {
  const ladder::testing::TwoThreads two;
  int block_one_thread = -1;  // which thread ran the slow block
  start_work_clock();
  {
    const TimedWork outer(Work::op_backward);
    // Two blocks: the main thread's takes 1 ms, the other's 40 ms, so the main thread waits.
    parallel_for_blocks(2, kMinParallelWork, [&](int64_t, int64_t, int block) {
      if (block == 1) block_one_thread = omp_get_thread_num();
      sleep_ms(block == 0 ? 1 : 40);
    });
  }
  const WorkTimes t = stop_work_clock();
  if (block_one_thread == 0) {  // OpenMP gave the region one thread: nothing to wait for
    MESSAGE("the parallel region ran on one thread; the wait was not exercised");
    return;
  }
  // The region lasts at least 40 ms; what of it is not the main thread's own block goes to sync.
  CHECK(t[Work::sync] > 0);
  CHECK(t[Work::op_backward] < 0.040);
  CHECK(t[Work::sync] >= 0.040 - t[Work::op_backward]);
}
