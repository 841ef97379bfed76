#include "core/gradcheck.h"

#include <cmath>

#include "core/autograd.h"
#include "core/error.h"

namespace ladder {

namespace {

double projected(const Tensor& y, const Tensor& w) {
  double total = 0;
  for (int64_t i = 0; i < y.numel(); ++i) total += static_cast<double>(y.data()[i]) * w.data()[i];
  return total;
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  std::vector<Tensor> xs;
  for (const Tensor& x : inputs) {
    Tensor copy = x.detach().clone();
    xs.push_back(copy.requires_grad_(x.requires_grad()));
  }
  GradcheckResult result;

  // Analytic: one backward pass with w as the output gradient gives dL/dx for every input.
  const Tensor y = f(xs);
  Generator gen(20240611);
  const Tensor w = uniform(y.shape(), 0.5f, 1.5f, gen);
  if (!y.requires_grad()) fail("gradcheck", "the function's output does not require grad; nothing to check");
  y.backward(w);

  // Numeric: nudge one element at a time by +-h.
  NoGradGuard no_grad;
  double worst_excess = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].requires_grad()) {
      result.analytic.emplace_back();
      result.numeric.emplace_back();
      continue;
    }
    if (!xs[k].grad().defined()) xs[k].set_grad(zeros(xs[k].shape()));  // backward never reached it
    result.analytic.push_back(xs[k].grad());
    Tensor numeric = empty(xs[k].shape());
    float* p = xs[k].data();
    for (int64_t i = 0; i < xs[k].numel(); ++i) {
      const float saved = p[i];
      p[i] = saved + options.step;
      const double up = projected(f(xs), w);
      p[i] = saved - options.step;
      const double down = projected(f(xs), w);
      p[i] = saved;
      // Divide by the step actually taken: saved +- step is rounded to float.
      const double taken = static_cast<double>(saved + options.step) - static_cast<double>(saved - options.step);
      numeric.data()[i] = static_cast<float>((up - down) / taken);

      const double a = xs[k].grad().data()[i], n = numeric.data()[i];
      const double excess = std::fabs(a - n) - (options.atol + options.rtol * std::fabs(n));
      if (!(excess <= 0)) {  // written so that a NaN on either side fails too
        result.ok = false;
        if (!(excess < worst_excess)) {
          worst_excess = excess;
          result.worst = cat("input ", k, " element ", i, ": backward gives ", a, ", finite differences give ", n);
        }
      }
    }
    result.numeric.push_back(numeric);
  }
  return result;
}

}  // namespace ladder
