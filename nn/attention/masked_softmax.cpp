#include "nn/attention/masked_softmax.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

namespace {

// Checks that valid lengths are whole numbers in [0, keys] and returns them as integers.
std::vector<int64_t> lengths_of(const Tensor& lengths, int64_t keys) {
  std::vector<int64_t> out(lengths.numel());
  for (int64_t i = 0; i < lengths.numel(); ++i) {
    const float v = lengths.data()[i];
    if (v != std::floor(v) || v < 0 || v > static_cast<float>(keys))
      fail("KeyMask", "valid_lengths holds ", v, " at element ", i, "; lengths count real keys: whole numbers from 0 to ",
           keys, " (the number of keys)");
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

}  // namespace

Tensor KeyMask::visible(const Shape& scores) const {
  if (empty()) return {};
  if (valid_lengths.defined() && key_padding.defined())
    fail("KeyMask", "set valid_lengths or key_padding, not both");
  const auto rank = static_cast<int64_t>(scores.size());
  if (rank < 2)
    fail("KeyMask", "scores ", shape_str(scores), " need at least a batch dim and a keys dim: (B, ..., Q, S)");
  const int64_t batch = scores.front(), keys = scores.back();
  Shape shape(rank, 1);  // (B, 1.., 1, S), or (B, 1.., Q, S) for lengths per query
  shape.front() = batch;
  shape.back() = keys;

  if (key_padding.defined()) {
    if (key_padding.shape() != Shape{batch, keys})
      fail("KeyMask", "key_padding ", shape_str(key_padding.shape()), " must be (B,S) = (", batch, ",", keys,
           ") for scores ", shape_str(scores));
    return reshape(key_padding.detach(), shape);  // masked_softmax checks that it holds 0s and 1s
  }
  if (valid_lengths.dim() == 2 && rank >= 3) {
    shape[rank - 2] = scores[rank - 2];
    if (valid_lengths.shape() != Shape{batch, shape[rank - 2]})
      fail("KeyMask", "valid_lengths per query ", shape_str(valid_lengths.shape()), " must be (B,Q) = (", batch, ",",
           shape[rank - 2], ") for scores ", shape_str(scores), " (B, ..., Q, S)");
  } else if (valid_lengths.shape() != Shape{batch}) {
    fail("KeyMask", "valid_lengths ", shape_str(valid_lengths.shape()), " must be (B) = (", batch,
         ") or, one per query, (B,Q); the scores are ", shape_str(scores), " (B, ..., Q, S)");
  }
  const std::vector<int64_t> lengths = lengths_of(valid_lengths, keys);
  Tensor mask = ladder::empty(shape);
  float* out = mask.data();
  for (const int64_t length : lengths)  // one row of keys per length, in the order of the lengths
    for (int64_t j = 0; j < keys; ++j) *out++ = j < length ? 1.0f : 0.0f;
  return mask;
}

Tensor masked_softmax(const Tensor& scores, const KeyMask& mask) {
  if (mask.empty()) return softmax(scores, -1);
  return ladder::masked_softmax(scores, mask.visible(scores.shape()));
}

Tensor masked_softmax_naive(const Tensor& x, const Tensor& visible) {
  const Tensor hidden = 1.0f - visible;
  const Tensor weights = softmax(masked_fill(x, hidden, std::numeric_limits<float>::lowest()), -1);
  // A row with every key masked came out uniform (all its scores were equal): where() sets it to 0.
  return where(visible, weights, scalar(0));
}

}  // namespace ladder::nn
