#include "nn/attention/nadaraya_watson.h"

#include "core/error.h"
#include "core/ops.h"
#include "nn/init.h"

namespace ladder::nn {

AttentionOutput nadaraya_watson(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& w) {
  if (queries.dim() != 1 || !(keys.dim() == 1 || (keys.dim() == 2 && keys.size(0) == queries.size(0))))
    fail("nadaraya_watson", "queries ", shape_str(queries.shape()), " must be (Q) and keys ", shape_str(keys.shape()),
         " (S) or (Q,S)");
  if (values.shape() != keys.shape())
    fail("nadaraya_watson", "values ", shape_str(values.shape()), " must have the shape of keys ",
         shape_str(keys.shape()), ": one target per key");
  if (w.numel() != 1) fail("nadaraya_watson", "w must hold one number, got shape ", shape_str(w.shape()));
  const Tensor distance = (unsqueeze(queries, 1) - keys) * w;  // (Q,1) - (S) or (Q,S) -> (Q,S)
  const Tensor weights = softmax(distance * distance * -0.5f, -1);
  return {sum(weights * values, {-1}), weights};  // (Q)
}

AttentionOutput nadaraya_watson(const Tensor& queries, const Tensor& keys, const Tensor& values, float w) {
  return nadaraya_watson(queries, keys, values, scalar(w));
}

NadarayaWatson::NadarayaWatson(Generator& gen) : Module("NadarayaWatson") {
  w = register_parameter("w", empty({1}));
  init_uniform(w, 0, 1, gen);
}

AttentionOutput NadarayaWatson::forward(const Tensor& queries, const Tensor& keys, const Tensor& values) {
  return nadaraya_watson(queries, keys, values, w);
}

}  // namespace ladder::nn
