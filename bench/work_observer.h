// Where a training step's wall time goes, by kind of work: what print_breakdown (bench.h) prints.
// Measured from outside core: a WorkObserver is core's observer (core/observer.h) and reads the
// clock at its notifications, and a wrapper of cblas_sgemm, linked in place of OpenBLAS's own
// (-Wl,--wrap=cblas_sgemm, bench/CMakeLists.txt), times each GEMM. While one lives it charges
//  - GEMM: each cblas_sgemm called outside a parallel region, the waits inside OpenBLAS included
//    (a GEMM inside one of ladder's parallel loops belongs to whatever started the loop);
//  - attention: the fused attention op, scaled_dot_product_attention: its forward (from the op
//    recorded before it to its own record) and its backward function, the GEMMs inside included;
//  - the ops' backward: every other op's backward function, less its GEMMs;
//  - sync: in each of ladder's parallel loops, wherever it runs (the attention's too), the main
//    thread's time starting the other threads and waiting for them at the loop's end.
// The kinds never overlap, so they add up to at most the wall time.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>

#include "core/observer.h"

namespace ladder::bench {

enum class Work { gemm, attention, op_backward, sync, count };

// Seconds per kind of work.
struct WorkTimes {
  std::array<double, static_cast<size_t>(Work::count)> seconds{};
  double operator[](Work kind) const { return seconds[static_cast<size_t>(kind)]; }
};

class WorkObserver final : public Observer {
 public:
  WorkObserver();   // installs itself as core's observer, with every total at zero
  ~WorkObserver();  // uninstalls itself
  WorkObserver(const WorkObserver&) = delete;
  WorkObserver& operator=(const WorkObserver&) = delete;

  WorkTimes now();  // the totals so far

  void op_recorded(const char* op) override;
  void backward_starts(const char* op) override;
  void backward_ends(const char* op) override;
  void loop_starts() override;
  void main_blocks_start() override;
  void main_blocks_end() override;
  void loop_ends() override;
  void gemm_took(double seconds);  // from the cblas_sgemm wrapper

 private:
  using Clock = std::chrono::steady_clock;
  // Charges the interval since the last one ended: its sync to sync, its GEMMs to GEMM (unless
  // `owner` is the attention, which keeps them), the rest to `owner` when there is one.
  void end_interval(std::optional<Work> owner);

  WorkTimes totals_;
  Clock::time_point interval_start_ = Clock::now();
  double interval_gemm_ = 0, interval_sync_ = 0;  // seconds in the interval so far
  Clock::time_point loop_start_, main_start_, main_end_;
};

}  // namespace ladder::bench
