#include "models/predictions.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

namespace {

Tensor narrow_rows(const Tensor& x, int64_t first, int64_t count) { return x.defined() ? narrow(x, 0, first, count) : Tensor(); }

}  // namespace

namespace {

// What both predictions share: `logits_of(first, rows)` (rows, ..., classes) against the labels of
// those rows (rows, ...), batch by batch; labels equal to kNoAnswer are skipped.
template <class Model, class Logits>
Predictions predict_rows(Model& model, const data::LabelledBatch& set, int64_t batch, Logits logits_of) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const int64_t n = set.inputs.size(0);
  Predictions p;
  double correct = 0;
  int64_t asked = 0;
  for (int64_t first = 0; first < n; first += batch) {
    const int64_t rows = std::min(batch, n - first);
    const Tensor labels = flatten(narrow(set.labels, 0, first, rows));  // (K)
    const Tensor logits = logits_of(first, rows);
    const Tensor flat = reshape(logits, {labels.numel(), logits.size(-1)});  // (K,classes)
    const Tensor predicted = argmax(flat, 1);                               // (K)
    int64_t batch_asked = 0;
    for (int64_t r = 0; r < labels.numel(); ++r) {
      if (labels.data()[r] == static_cast<float>(data::kNoAnswer)) continue;
      ++batch_asked;
      p.classes.push_back(static_cast<int64_t>(predicted.data()[r]));
      correct += predicted.data()[r] == labels.data()[r] ? 1 : 0;
    }
    if (batch_asked > 0)
      p.loss += cross_entropy(flat, labels, {.ignore_index = data::kNoAnswer}).item() * static_cast<double>(batch_asked);
    asked += batch_asked;
  }
  p.loss /= static_cast<double>(std::max<int64_t>(1, asked));
  p.accuracy = correct / static_cast<double>(std::max<int64_t>(1, asked));
  return p;
}

}  // namespace

Predictions predict(SequenceClassifier& model, const data::LabelledBatch& set, int64_t batch) {
  return predict_rows(model, set, batch, [&](int64_t first, int64_t rows) {
    return model.forward(narrow(set.inputs, 0, first, rows), narrow_rows(set.valid, first, rows));  // (rows,classes)
  });
}

Predictions predict(EncoderTagger& model, const data::LabelledBatch& set, int64_t batch) {
  if (set.labels.shape() != set.inputs.shape())
    fail("predict", "a tagger's labels must be (N,T), one per position as the inputs ", shape_str(set.inputs.shape()),
         ", got ", shape_str(set.labels.shape()));
  return predict_rows(model, set, batch, [&](int64_t first, int64_t rows) {
    return model.forward(narrow(set.inputs, 0, first, rows), narrow_rows(set.valid, first, rows));  // (rows,T,classes)
  });
}

double standard_error(double p, int64_t n) {
  if (n < 1) fail("standard_error", "needs at least one answer, got ", n);
  return std::sqrt(p * (1 - p) / static_cast<double>(n));
}

double majority_share(const Tensor& train_labels, const Tensor& test_labels, int64_t classes) {
  std::vector<int64_t> counts(static_cast<size_t>(classes));
  for (int64_t n = 0; n < train_labels.numel(); ++n) {
    const auto label = static_cast<int64_t>(train_labels.data()[n]);
    if (label == data::kNoAnswer) continue;
    if (label < 0 || label >= classes) fail("majority_share", "label ", label, " is outside [0, ", classes, ")");
    ++counts[static_cast<size_t>(label)];
  }
  const auto most = static_cast<float>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  int64_t right = 0, asked = 0;
  for (int64_t n = 0; n < test_labels.numel(); ++n) {
    if (test_labels.data()[n] == static_cast<float>(data::kNoAnswer)) continue;
    ++asked;
    right += test_labels.data()[n] == most;
  }
  return static_cast<double>(right) / static_cast<double>(std::max<int64_t>(1, asked));
}

std::vector<double> accuracy_by_group(const Predictions& p, const Tensor& labels, const std::vector<int64_t>& group,
                                      int64_t groups) {
  const auto n = static_cast<size_t>(labels.numel());
  if (p.classes.size() != n || group.size() != n)
    fail("accuracy_by_group", p.classes.size(), " predictions and ", group.size(), " groups for ", n, " labels");
  std::vector<double> right(static_cast<size_t>(groups)), count(static_cast<size_t>(groups));
  for (size_t i = 0; i < n; ++i) {
    if (group[i] < 0 || group[i] >= groups) fail("accuracy_by_group", "group ", group[i], " is outside [0, ", groups, ")");
    const auto g = static_cast<size_t>(group[i]);
    right[g] += p.classes[i] == static_cast<int64_t>(labels.data()[i]) ? 1 : 0;
    count[g] += 1;
  }
  for (size_t g = 0; g < right.size(); ++g) right[g] = count[g] > 0 ? right[g] / count[g] : NAN;
  return right;
}

}  // namespace ladder::models
