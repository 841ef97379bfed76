// Training the long-range lessons' classifiers (models/sequence_classifier.h: the encoder with any
// attention kind, or the LSTM baseline) on a generated task of fixed-length sequences, each with one
// class, possibly padded: lesson 13 with each BigBird variant, lesson 15 with each attention kind.
// AdamW without decay on biases, norms and embeddings; a linear warmup then a cosine decay; the
// gradient clipped to norm 1; every step a fresh batch drawn from the training set. On the way it
// measures what a training step costs: its time and the memory its forward and backward add.
// The model's auxiliary loss joins the loss backpropagated and after_optimizer_step() follows each
// step (nn/module.h), so layers that learn outside the optimiser need nothing here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "lessons/common/plot.h"
#include "lessons/common/run.h"
#include "models/sequence_classifier.h"

namespace ladder::lessons {

struct LabelledSequences {
  Tensor tokens;  // (N,T) token ids as floats
  Tensor labels;  // (N) the class of each sequence
  Tensor valid;   // (N,T) 1 on real tokens, 0 on the padding after them; undefined: all real
};

struct ClassifierTraining {
  int64_t steps = 1000, batch = 32, warmup = 100, eval_every = 100;
  float lr = 1e-3f, weight_decay = 0.01f;
  uint64_t seed = 0;  // draws the batches
};

struct ClassifierReport {
  Series train_loss_curve;  // the mean training cross-entropy (nats) since the evaluation before, against step
  Series val_loss_curve;    // validation cross-entropy (nats) against step
  double train_loss = 0;    // the mean over the steps since the last evaluation
  double val_loss = 0, val_accuracy = 0;
  double step_seconds = 0;  // a training step's mean time, evaluations excluded, the first step too
                            // when there are others (it also measures the memory)
  int64_t peak_bytes = 0;   // what the first step's forward and backward add at their peak (core/peak_memory.h)
};

// Trains `model` for training.steps steps, evaluating on `val` every training.eval_every steps and
// at the end, with a progress line; writes `csv_name` (step, losses, validation accuracy, lr,
// gradient norm) into the run. `name` labels the curve. Leaves the model in eval mode.
ClassifierReport train_classifier(Run& run, models::SequenceClassifier& model, const LabelledSequences& train,
                                  const LabelledSequences& val, const ClassifierTraining& training,
                                  const std::string& name, const std::string& csv_name);

struct Predictions {
  std::vector<int64_t> classes;  // the predicted class of each sequence
  double loss = 0;               // mean cross-entropy, nats
  double accuracy = 0;
};
// The model's answers for every sequence of `set`, `batch` at a time, in eval mode without a graph.
Predictions predict(models::SequenceClassifier& model, const LabelledSequences& set, int64_t batch);

}  // namespace ladder::lessons
