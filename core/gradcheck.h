// Checking backward() against finite differences: the test every differentiable op must pass.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ladder {

struct GradcheckOptions {
  float step = 5e-3f;  // h in (L(x + h) - L(x - h)) / 2h; about the cube root of float epsilon
  float atol = 1e-3f;  // an element passes when |analytic - numeric| <= atol + rtol * |numeric|
  float rtol = 1e-2f;
};

struct GradcheckResult {
  bool ok = true;
  std::vector<Tensor> analytic;  // per input: from backward(); undefined for inputs without grad
  std::vector<Tensor> numeric;   // per input: from central differences
  std::string worst;             // the element furthest outside the tolerance, described
};

// f maps the inputs to any tensor. Checks d L / d input for L = sum(f(inputs) * w), w a fixed
// random tensor (so every output element counts, with a different weight), for every input that
// requires grad. L is summed in double, so only f's own float rounding limits the estimate.
// The inputs are copied; f may be called many times and must be deterministic.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace ladder
