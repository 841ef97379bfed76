#include "bench/work_observer.h"

#include <cblas.h>
#include <omp.h>

#include <cstring>

namespace ladder::bench {

namespace {

WorkObserver* recording = nullptr;  // the observer the cblas_sgemm wrapper reports to

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool is_attention(const char* op) { return std::strcmp(op, "scaled_dot_product_attention") == 0; }

}  // namespace

WorkObserver::WorkObserver() { installed_observer = recording = this; }

WorkObserver::~WorkObserver() { installed_observer = recording = nullptr; }

WorkTimes WorkObserver::now() {
  end_interval(std::nullopt);
  return totals_;
}

void WorkObserver::end_interval(std::optional<Work> owner) {
  const Clock::time_point end = Clock::now();
  const double interval = seconds(end - interval_start_);
  const auto charge = [this](Work kind, double s) { totals_.seconds[static_cast<size_t>(kind)] += s; };
  charge(Work::sync, interval_sync_);
  if (owner == Work::attention) {
    charge(Work::attention, interval - interval_sync_);  // the GEMMs inside it included
  } else {
    charge(Work::gemm, interval_gemm_);
    if (owner) charge(*owner, interval - interval_gemm_ - interval_sync_);
  }
  interval_start_ = end;
  interval_gemm_ = interval_sync_ = 0;
}

// A forward op's interval runs from the previous record (or reading) to its own record.
void WorkObserver::op_recorded(const char* op) {
  end_interval(is_attention(op) ? std::optional(Work::attention) : std::nullopt);
}

// The engine's work between two backward functions is nobody's (print_breakdown: the engine).
void WorkObserver::backward_starts(const char*) { end_interval(std::nullopt); }

void WorkObserver::backward_ends(const char* op) {
  end_interval(is_attention(op) ? Work::attention : Work::op_backward);
}

void WorkObserver::loop_starts() { loop_start_ = Clock::now(); }
void WorkObserver::main_blocks_start() { main_start_ = Clock::now(); }
void WorkObserver::main_blocks_end() { main_end_ = Clock::now(); }

void WorkObserver::loop_ends() {
  interval_sync_ += seconds(main_start_ - loop_start_) + seconds(Clock::now() - main_end_);
}

void WorkObserver::gemm_took(double s) { interval_gemm_ += s; }

}  // namespace ladder::bench

// Every cblas_sgemm of the program lands here (ladder's gemm() and the bench's raw reference
// alike); it is timed only while a WorkObserver records, and only outside parallel regions.
extern "C" {
void __real_cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, blasint m, blasint n,
                        blasint k, float alpha, const float* a, blasint lda, const float* b, blasint ldb, float beta,
                        float* c, blasint ldc);

void __wrap_cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, blasint m, blasint n,
                        blasint k, float alpha, const float* a, blasint lda, const float* b, blasint ldb, float beta,
                        float* c, blasint ldc) {
  using ladder::bench::recording;
  if (!recording || omp_in_parallel()) {
    __real_cblas_sgemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  __real_cblas_sgemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  recording->gemm_took(ladder::bench::seconds(std::chrono::steady_clock::now() - start));
}
}
