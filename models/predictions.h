// What a trained sequence classifier or tagger answers on a labelled set, in eval mode and without a
// graph, and how those answers score: accuracy, the loss, the standard error of an accuracy, the
// share always answering the most common label would score, and accuracy by group (lessons 13 and 15).
#pragma once

#include <cstdint>
#include <vector>

#include "data/batcher.h"
#include "models/encoder_tagger.h"
#include "models/sequence_classifier.h"

namespace ladder::models {

struct Predictions {
  std::vector<int64_t> classes;  // the predicted class of each sequence (a tagger's: of each asked position)
  double loss = 0;               // mean cross-entropy, nats
  double accuracy = 0;
};
// The model's answers for every sequence of `set` (inputs (N,T), labels (N), valid (N,T) or
// undefined), `batch` at a time, in eval mode without a graph.
Predictions predict(SequenceClassifier& model, const data::LabelledBatch& set, int64_t batch);
// A tagger's answers at every asked position of `set` (labels (N,T), data::kNoAnswer where nothing
// is asked), row by row in the order of the positions.
Predictions predict(EncoderTagger& model, const data::LabelledBatch& set, int64_t batch);

// The binomial standard error of an accuracy p measured on n answers: sqrt(p (1 - p) / n).
double standard_error(double p, int64_t n);

// What always answering the most common label of `train_labels` (N) scores on `test_labels` (M): the
// share of the test set that carries it. Labels are classes in [0, classes); data::kNoAnswer (a
// position where nothing is asked) is left out of both.
double majority_share(const Tensor& train_labels, const Tensor& test_labels, int64_t classes);

// The accuracy of `p` within each group of sequences, group[n] in [0, groups) naming sequence n's
// (lesson 13: how many blocks back its asked key sits); NaN for a group without sequences.
std::vector<double> accuracy_by_group(const Predictions& p, const Tensor& labels, const std::vector<int64_t>& group,
                                      int64_t groups);

}  // namespace ladder::models
