// Assertions shared by the test suites.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"
#include "core/tensor.h"

namespace ladder::testing {

// Whether this executable is the suite linked against the sanitized library (NAME_sanitized). A case
// that runs one path for seconds (a training run, a 10 MB text) is skipped there,
// `* doctest::skip(kSanitized)`: the short cases reach the same code, and the plain suite runs it whole.
extern const bool kSanitized;

// The tensor has this shape and these values, each within tol (absolute, or relative when large).
inline void check_tensor(const Tensor& t, const Shape& shape, const std::vector<float>& expected, float tol = 1e-5f) {
  REQUIRE(t.defined());
  CHECK_MESSAGE(t.shape() == shape, "shape ", shape_str(t.shape()), " expected ", shape_str(shape));
  REQUIRE(static_cast<size_t>(t.numel()) == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const float a = t.data()[i], e = expected[i];
    const bool same = (std::isnan(a) && std::isnan(e)) || a == e || std::fabs(a - e) <= tol * std::max(1.0f, std::fabs(e));
    CHECK_MESSAGE(same, "element ", i, ": got ", a, " expected ", e);
  }
}

// Two tensors agree in shape and, element by element, to within atol + rtol * |b|.
inline void check_close(const Tensor& a, const Tensor& b, float atol, float rtol = 0) {
  REQUIRE(a.shape() == b.shape());
  float worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float excess = std::fabs(a.data()[i] - b.data()[i]) - (atol + rtol * std::fabs(b.data()[i]));
    if (excess > worst || std::isnan(excess)) {
      worst = excess;
      at = i;
    }
  }
  CHECK_MESSAGE(at < 0, "element ", at, ": ", (at < 0 ? 0 : a.data()[at]), " vs ", (at < 0 ? 0 : b.data()[at]));
}

inline bool all_finite(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.data()[i])) return false;
  return true;
}

inline float max_abs(const Tensor& t) {
  float m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(t.data()[i]));
  return m;
}

// A fast path against its reference: finite, and within 1e-5 relative to the reference's largest
// element (fp32 sums taken in different orders).
inline void check_agree(const Tensor& fast, const Tensor& reference, const char* what) {
  INFO(std::string(what));  // doctest shows a char* as its address
  CHECK(all_finite(fast));
  check_close(fast, reference, 1e-5f * std::max(1.0f, max_abs(reference)), 1e-5f);
}

// An attention-like op's output and the gradients of sum(out * gout) for q, k and v, taken on
// copies of the inputs: f(q, k, v) -> out.
struct AttentionRun {
  Tensor out, dq, dk, dv;
};
template <class F>
AttentionRun run_attention(const F& f, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& gout) {
  Tensor q1 = q.clone(), k1 = k.clone(), v1 = v.clone();
  q1.requires_grad_();
  k1.requires_grad_();
  v1.requires_grad_();
  const Tensor out = f(q1, k1, v1);
  out.backward(gout);
  return {out.detach(), q1.grad(), k1.grad(), v1.grad()};
}

// The output and all three gradients agree (check_agree).
inline void check_runs_agree(const AttentionRun& fast, const AttentionRun& reference) {
  check_agree(fast.out, reference.out, "out");
  check_agree(fast.dq, reference.dq, "dq");
  check_agree(fast.dk, reference.dk, "dk");
  check_agree(fast.dv, reference.dv, "dv");
}

// Two threads while it lives, whatever the machine has, so that the threaded paths run even on one core.
class TwoThreads {
 public:
  TwoThreads() : before_(num_threads()) { set_num_threads(2); }
  ~TwoThreads() { set_num_threads(before_); }
  TwoThreads(const TwoThreads&) = delete;
  TwoThreads& operator=(const TwoThreads&) = delete;

 private:
  int before_;
};

// A loop parallel_for(n, work_per_item, ...) over this shape really splits across the threads: a
// later change of kMinParallelWork must not quietly turn a test of the threaded path into a serial one.
inline void require_threaded(int64_t n, int64_t work_per_item) {
  REQUIRE_MESSAGE(parallel_blocks(n, work_per_item) > 1, n, " items of work ", work_per_item,
                  " stay on one thread (kMinParallelWork = ", kMinParallelWork, ", threads = ", num_threads(), ")");
}

// f throws ladder::Error and its message contains every fragment.
template <class F>
void check_error(F f, std::initializer_list<std::string> fragments) {
  bool thrown = false;
  try {
    f();
  } catch (const Error& e) {
    thrown = true;
    const std::string message = e.what();
    for (const std::string& fragment : fragments)
      CHECK_MESSAGE(message.find(fragment) != std::string::npos, "message \"", message, "\" lacks \"", fragment, "\"");
  }
  CHECK_MESSAGE(thrown, "expected a ladder::Error containing \"", *fragments.begin(), "\"");
}

}  // namespace ladder::testing
