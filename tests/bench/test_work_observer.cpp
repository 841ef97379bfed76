// bench/work_observer.h: the wall time the benchmark's breakdown charges to each kind of work, from
// core's notifications and the cblas_sgemm wrapper (linked with --wrap, as in the bench). Only
// lower bounds and sums are asserted (time slept is at least what was asked for; the charges never
// exceed the wall time around them), never how fast anything runs.
#include "helpers.h"

#include <cblas.h>
#include <omp.h>

#include <chrono>
#include <thread>

#include "bench/work_observer.h"
#include "core/kernels/parallel.h"
#include "core/observer.h"

using namespace ladder;
using ladder::bench::Work;
using ladder::bench::WorkObserver;
using ladder::bench::WorkTimes;

namespace {

using Clock = std::chrono::steady_clock;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

TEST_CASE("a WorkObserver is core's observer while it lives") {
  CHECK(installed_observer == nullptr);
  {
    WorkObserver work;
    CHECK(installed_observer == &work);
  }
  CHECK(installed_observer == nullptr);
}

TEST_CASE("a forward op's GEMMs go to GEMM, the rest of its interval to nobody; the attention keeps its GEMMs") {
  WorkObserver work;
  sleep_ms(10);
  work.gemm_took(0.004);
  work.op_recorded("linear");
  const WorkTimes after_linear = work.now();
  CHECK(after_linear[Work::gemm] == 0.004);
  CHECK(after_linear[Work::attention] == 0);
  CHECK(after_linear[Work::op_backward] == 0);
  sleep_ms(10);
  work.gemm_took(0.004);
  work.op_recorded("scaled_dot_product_attention");
  const WorkTimes t = work.now();
  CHECK(t[Work::gemm] == 0.004);  // the attention's GEMM stayed with it
  CHECK(t[Work::attention] >= 0.010);
}

TEST_CASE("a backward function is charged its time less its GEMMs; the engine's time between them to nobody") {
  WorkObserver work;
  const Clock::time_point start = Clock::now();
  sleep_ms(10);  // the engine
  work.backward_starts("mul");
  sleep_ms(20);
  work.gemm_took(0.005);
  work.backward_ends("mul");
  const double wall = seconds_since(start);
  const WorkTimes t = work.now();
  CHECK(t[Work::gemm] == 0.005);
  CHECK(t[Work::op_backward] >= 0.015);
  CHECK(t[Work::op_backward] + t[Work::gemm] <= wall - 0.010);  // the engine's 10 ms went to no kind
}

TEST_CASE("a loop's waits go to sync, whoever runs it, the attention included") {
  WorkObserver work;
  const Clock::time_point start = Clock::now();
  work.backward_starts("scaled_dot_product_attention");
  work.loop_starts();
  sleep_ms(5);  // the other thread starting
  work.main_blocks_start();
  sleep_ms(10);
  work.main_blocks_end();
  sleep_ms(5);  // waiting for it
  work.loop_ends();
  work.backward_ends("scaled_dot_product_attention");
  const double wall = seconds_since(start);
  const WorkTimes t = work.now();
  CHECK(t[Work::sync] >= 0.010);
  CHECK(t[Work::attention] >= 0.010);
  CHECK(t[Work::attention] + t[Work::sync] <= wall);  // the waits were not charged to the attention too
}

TEST_CASE("a matmul's forward and backward GEMMs are timed through the wrapper; GEMMs in a parallel region are not") {
  Generator gen(1);
  Tensor a = randn({64, 64}, gen), b = randn({64, 64}, gen);
  a.requires_grad_();
  WorkObserver work;
  const Tensor c = matmul(a, b);
  const double forward_gemm = work.now()[Work::gemm];
  sum(c).backward();
  const WorkTimes t = work.now();
  CHECK(forward_gemm > 0);
  CHECK(t[Work::gemm] > forward_gemm);  // the backward's product with b
  CHECK(t[Work::op_backward] > 0);
  CHECK(a.grad().defined());
  Tensor out = empty({64, 64});
  bool in_parallel = false;
#pragma omp parallel num_threads(2)
  if (omp_get_thread_num() == 0) {
    in_parallel = omp_in_parallel();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, 64, 64, 1.0f, a.data(), 64, b.data(), 64, 0.0f,
                out.data(), 64);
  }
  REQUIRE_MESSAGE(in_parallel, "OpenMP gave the region one thread: the GEMM inside a parallel region is not exercised");
  CHECK(work.now()[Work::gemm] == t[Work::gemm]);
}

TEST_CASE("a parallel loop's wait for the other thread goes to sync, its own blocks to the backward around it") {
  const ladder::testing::TwoThreads two;
  int block_one_thread = -1;  // which thread ran the slow block
  WorkObserver work;
  work.backward_starts("mul");
  // Two blocks: the main thread's takes 1 ms, the other's 40 ms, so the main thread waits.
  parallel_for_blocks(2, kMinParallelWork, [&](int64_t, int64_t, int block) {
    if (block == 1) block_one_thread = omp_get_thread_num();
    sleep_ms(block == 0 ? 1 : 40);
  });
  work.backward_ends("mul");
  const WorkTimes t = work.now();
  REQUIRE_MESSAGE(block_one_thread != 0, "the parallel region ran on one thread: the wait is not exercised");
  CHECK(t[Work::op_backward] < 0.040);
  CHECK(t[Work::sync] >= 0.040 - t[Work::op_backward]);
}
