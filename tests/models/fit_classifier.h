// For the tests that check a sequence classifier (models/sequence_classifier.h) can learn a small
// task: train it with Adam on generated batches, then count its right answers on fresh ones.
#pragma once

#include <cstdint>
#include <utility>

#include "core/ops.h"
#include "models/sequence_classifier.h"
#include "optim/adam.h"

namespace ladder::testing {

// `batch(B)` gives a pair (ids (B,T), labels (B)). Returns how many of 200 fresh sequences the
// model answers right after `steps` steps of 32.
template <class Batches>
int64_t fit_and_count(models::SequenceClassifier& model, Batches batch, int steps, float lr) {
  optim::Adam adam(model.named_parameters(), {.lr = lr});
  for (int step = 0; step < steps; ++step) {
    const auto [ids, labels] = batch(32);
    const Tensor loss = cross_entropy(model.forward(ids), labels);
    adam.zero_grad();
    loss.backward();
    adam.step();
  }
  const auto [ids, labels] = batch(200);
  const Tensor predicted = argmax(model.forward(ids), 1);
  int64_t right = 0;
  for (int64_t i = 0; i < 200; ++i) right += predicted.data()[i] == labels.data()[i];
  return right;
}

}  // namespace ladder::testing
