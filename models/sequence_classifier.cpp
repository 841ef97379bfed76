#include "models/sequence_classifier.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

namespace {

// (B,T): 1 at each row's last real position (its last 1 in valid, or T-1 without padding), else 0.
Tensor last_real(int64_t rows, int64_t length, const Tensor& valid) {
  Tensor one_hot = zeros({rows, length});
  for (int64_t r = 0; r < rows; ++r) {
    int64_t last = length - 1;
    while (valid.defined() && last > 0 && valid.data()[r * length + last] == 0) --last;
    one_hot.data()[r * length + last] = 1;
  }
  return one_hot;
}

}  // namespace

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::mean: return "mean";
    case Pooling::first: return "first";
    case Pooling::last: return "last";
  }
  return "?";  // not reached: every pooling is listed above
}

Tensor pool(const Tensor& x, const Tensor& valid, Pooling pooling) {
  if (pooling == Pooling::first) return squeeze(narrow(x, 1, 0, 1), 1);
  if (pooling == Pooling::last) return sum(x * unsqueeze(last_real(x.size(0), x.size(1), valid), 2), {1});
  if (!valid.defined()) return mean(x, {1});
  const Tensor weights = unsqueeze(valid, 2);  // (B,T,1)
  return sum(x * weights, {1}) / clamp(sum(weights, {1}), 1.0f, INFINITY);
}

Tensor SequenceClassifier::loss(const data::LabelledBatch& batch) {
  return cross_entropy(forward(batch.inputs, batch.valid), batch.labels);
}

void SequenceClassifier::check_inputs(const Tensor& ids, const Tensor& valid) const {
  if (ids.dim() != 2) fail(type_name().c_str(), "ids must be (B,T) token ids, got ", shape_str(ids.shape()));
  if (valid.defined() && valid.shape() != ids.shape())
    fail(type_name().c_str(), "valid must have the shape of ids ", shape_str(ids.shape()),
         " (1 = token, 0 = padding), got ", shape_str(valid.shape()));
}

}  // namespace ladder::models
