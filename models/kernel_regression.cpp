#include "models/kernel_regression.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

Tensor leave_one_out(const Tensor& v) {
  if (v.dim() != 1 || v.numel() < 2) fail("leave_one_out", "needs (N) with N >= 2, got ", shape_str(v.shape()));
  const int64_t n = v.numel();
  Tensor out = empty({n, n - 1});
  float* row = out.data();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (j != i) *row++ = v.data()[j];
  return out;
}

Tensor KernelRegression::loss(const RegressionBatch& batch) {
  return mse_loss(forward(batch.queries, batch.keys, batch.values).context, batch.targets);
}

}  // namespace ladder::models
