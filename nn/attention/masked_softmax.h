// Which keys a query may attend to, and the softmax that respects it (lessons 07-09, and the masks
// every later attention kind takes). The convention: 1 = a real key,
// 0 = padding. Scores are (B, ..., Q, S): batch first, keys last, any dims between (heads).
#pragma once

#include "core/tensor.h"

namespace ladder::nn {

// Set at most one of the two; none means every key is visible.
//   KeyMask{.valid_lengths = lens}    lens (B): row b has lens[b] real keys, the first ones, for every
//                                     query; or (B,Q): each query its own length (d2l's valid_lens)
//   KeyMask{.key_padding = mask}      mask (B,S): 1 = real key, 0 = padding (PyTorch's key_padding_mask
//                                     with the opposite sign: there True means padding)
struct KeyMask {
  Tensor valid_lengths;
  Tensor key_padding;

  bool empty() const { return !valid_lengths.defined() && !key_padding.defined(); }
  // The 0/1 tensor of visible keys that broadcasts to scores of this shape (B, ..., Q, S):
  // (B, 1.., 1, S) for valid lengths (B) and a key padding mask, (B, 1.., Q, S) for lengths (B,Q).
  // Undefined when the mask is empty. No grad.
  Tensor visible(const Shape& scores) const;
};

// Softmax of scores (B, ..., Q, S) over the keys (the last dim) that `mask` leaves visible. Masked
// keys get weight exactly 0 and no gradient; a query with no visible key gets weights all 0 (it
// attends to nothing, its context is 0) and passes no gradient, never a NaN. The fused op
// ladder::masked_softmax (core/ops.h) does the work.
Tensor masked_softmax(const Tensor& scores, const KeyMask& mask);

// The same formula composed of existing ops, as d2l writes it: masked scores are replaced by the
// lowest float (so that exp gives 0), a plain softmax, then the weights of masked keys, and of rows
// with no visible key, set to 0. visible as for ladder::masked_softmax. The tests hold the fused op to it.
Tensor masked_softmax_naive(const Tensor& x, const Tensor& visible);

}  // namespace ladder::nn
