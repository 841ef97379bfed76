// Training the long-range lessons' classifier (models/encoder_classifier.h) on a generated task of
// fixed-length sequences, each with one class: lesson 13 with each BigBird variant, lesson 15 with
// each attention kind. AdamW without decay on biases, norms and embeddings; a linear warmup then a
// cosine decay; the gradient clipped to norm 1; every step a fresh batch drawn from the training set.
// The model's auxiliary loss joins the loss backpropagated and after_optimizer_step() follows each
// step (nn/module.h), so layers that learn outside the optimiser need nothing here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "lessons/common/plot.h"
#include "lessons/common/run.h"
#include "models/encoder_classifier.h"

namespace ladder::lessons {

struct LabelledSequences {
  Tensor tokens;  // (N,T) token ids as floats
  Tensor labels;  // (N) the class of each sequence
};

struct ClassifierTraining {
  int64_t steps = 1000, batch = 32, warmup = 100, eval_every = 100;
  float lr = 1e-3f, weight_decay = 0.01f;
  uint64_t seed = 0;  // draws the batches
};

struct ClassifierReport {
  Series val_loss_curve;  // validation cross-entropy (nats) against step
  double train_loss = 0;  // the mean over the steps since the last evaluation
  double val_loss = 0, val_accuracy = 0;
  double seconds = 0;  // training, evaluations excluded
};

// Trains `model` for training.steps steps, evaluating on `val` every training.eval_every steps and
// at the end, with a progress line; writes `csv_name` (step, losses, validation accuracy, lr,
// gradient norm) into the run. `name` labels the curve. Leaves the model in eval mode.
ClassifierReport train_classifier(Run& run, models::EncoderClassifier& model, const LabelledSequences& train,
                                  const LabelledSequences& val, const ClassifierTraining& training,
                                  const std::string& name, const std::string& csv_name);

struct Predictions {
  std::vector<int64_t> classes;  // the predicted class of each sequence
  double loss = 0;               // mean cross-entropy, nats
  double accuracy = 0;
};
// The model's answers for every sequence of `set`, `batch` at a time, in eval mode without a graph.
Predictions predict(models::EncoderClassifier& model, const LabelledSequences& set, int64_t batch);

}  // namespace ladder::lessons
