// Nadaraya-Watson kernel regression as a model the shared training step trains (lesson 08): the
// kernel with its learned width w, and the mean squared error of its predictions on a batch.
#pragma once

#include "core/tensor.h"
#include "nn/attention/nadaraya_watson.h"

namespace ladder::models {

// Points to predict and what to predict them from: queries (Q) and their targets (Q); keys and
// values (S), shared by every query, or (Q,S), each query its own.
struct RegressionBatch {
  Tensor queries, keys, values, targets;
};

// Row i holds every entry of v but the i-th: (N) -> (N,N-1). As keys and values, each training
// point is predicted from the others only (leave-one-out).
Tensor leave_one_out(const Tensor& v);

// The parametric estimator (w, its one parameter, drawn from U(0, 1)) with a loss for train_step.
class KernelRegression : public nn::NadarayaWatson {
 public:
  using nn::NadarayaWatson::NadarayaWatson;
  // The mean squared error of the predictions at batch.queries against batch.targets.
  Tensor loss(const RegressionBatch& batch);
};

}  // namespace ladder::models
