// Nadaraya-Watson kernel regression (lesson 08): attention before deep learning. A prediction at
// x_q is the average of the training targets y_i, each weighted by how close its x_i is to x_q:
//
//   weights(q, i) = softmax_i(-((x_q - x_i) * w)^2 / 2),   prediction(q) = sum_i weights(q, i) * y_i
//
// The weight is a Gaussian kernel exp(-u^2 / 2) of the distance u = (x_q - x_i) * w, normalised;
// w = 1/h is the inverse of the kernel's bandwidth h. With w fixed (w = 1) this is the
// non-parametric estimator; learning w (NadarayaWatson) makes it parametric attention, with the
// queries x_q, the keys x_i and the values y_i.
#pragma once

#include "nn/attention/scoring.h"
#include "nn/module.h"

namespace ladder::nn {

// queries (Q); keys (S), shared by every query, or (Q,S), each query its own (as when training
// leaves each point out of its own keys); values shaped like keys; w a one-element tensor.
// -> context (Q): the predictions, weights (Q,S).
AttentionOutput nadaraya_watson(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& w);
// The non-parametric estimator: a fixed w (1 is the standard Gaussian kernel).
AttentionOutput nadaraya_watson(const Tensor& queries, const Tensor& keys, const Tensor& values, float w = 1);

// The parametric estimator: the same formula with w a parameter, learned by gradient descent.
class NadarayaWatson : public Module {
 public:
  explicit NadarayaWatson(Generator& gen = default_generator());  // w drawn from U(0, 1), as d2l does
  AttentionOutput forward(const Tensor& queries, const Tensor& keys, const Tensor& values);

  Tensor w;  // (1)
};

}  // namespace ladder::nn
