#include "lessons/common/classifier_training.h"

#include <algorithm>
#include <chrono>

#include "core/autograd.h"
#include "core/ops.h"
#include "core/peak_memory.h"
#include "lessons/common/progress.h"
#include "optim/adam.h"
#include "optim/schedule.h"

namespace ladder::lessons {

namespace {

// The rows `rows` (1-d) of x, or undefined when x is.
Tensor rows_of(const Tensor& x, const Tensor& rows) { return x.defined() ? index_select(x, 0, rows) : Tensor(); }
Tensor narrow_rows(const Tensor& x, int64_t first, int64_t count) { return x.defined() ? narrow(x, 0, first, count) : Tensor(); }

}  // namespace

Predictions predict(models::SequenceClassifier& model, const LabelledSequences& set, int64_t batch) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const int64_t n = set.tokens.size(0);
  Predictions p;
  double correct = 0;
  for (int64_t first = 0; first < n; first += batch) {
    const int64_t rows = std::min(batch, n - first);
    const Tensor labels = narrow(set.labels, 0, first, rows);  // (rows)
    const Tensor logits =
        model.forward(narrow(set.tokens, 0, first, rows), narrow_rows(set.valid, first, rows));  // (rows,classes)
    p.loss += cross_entropy(logits, labels).item() * static_cast<double>(rows);
    const Tensor predicted = argmax(logits, 1);  // (rows)
    for (int64_t r = 0; r < rows; ++r) {
      p.classes.push_back(static_cast<int64_t>(predicted.data()[r]));
      correct += predicted.data()[r] == labels.data()[r] ? 1 : 0;
    }
  }
  p.loss /= static_cast<double>(n);
  p.accuracy = correct / static_cast<double>(n);
  return p;
}

ClassifierReport train_classifier(Run& run, models::SequenceClassifier& model, const LabelledSequences& train,
                                  const LabelledSequences& val, const ClassifierTraining& t, const std::string& name,
                                  const std::string& csv_name) {
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), t.weight_decay), {.lr = t.lr});
  const optim::Schedule schedule = optim::cosine_lr(t.lr, t.warmup, t.steps, t.lr / 10);
  const int64_t examples = train.tokens.size(0);
  Generator gen(t.seed);
  CsvWriter metrics(run.file(csv_name), {"step", "train_loss", "val_loss", "val_acc", "lr", "grad_norm"});
  Progress progress(t.steps, "ex", /*show_ppl=*/false);
  ClassifierReport report{.train_loss_curve = {.name = name}, .val_loss_curve = {.name = name}};
  std::chrono::steady_clock::duration training{};
  double recent = 0;
  int64_t recent_steps = 0;
  model.train();
  for (int64_t step = 1; step <= t.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    adamw.set_lr(schedule(step - 1));
    const Tensor rows = randint(0, examples, {t.batch}, gen);  // (B): a fresh batch
    Tensor loss;
    const auto forward_backward = [&] {
      loss = cross_entropy(model.forward(rows_of(train.tokens, rows), rows_of(train.valid, rows)),
                           rows_of(train.labels, rows));
      adamw.zero_grad();
      nn::with_auxiliary_loss(model, loss).backward();  // + what the layers add (vq: the commitment loss)
    };
    if (step == 1) report.peak_bytes = peak_bytes_added(forward_backward);
    else forward_backward();
    const float norm = optim::clip_grad_norm(model.parameters(), 1.0f);
    adamw.step();
    model.after_optimizer_step();  // the updates outside the optimiser (vq: the codebook's EMA step)
    if (step > 1 || t.steps == 1) training += std::chrono::steady_clock::now() - start;
    const double value = loss.item();
    run.check_loss(step, value, LossKind::cross_entropy, "the " + name + " classifier's loss");
    recent += value, ++recent_steps;
    progress.update(step, value, step * t.batch);
    if (step % t.eval_every != 0 && step != t.steps) continue;
    report.train_loss = recent / static_cast<double>(recent_steps);
    recent = 0, recent_steps = 0;
    const Predictions v = predict(model, val, t.batch);
    report.val_loss = v.loss, report.val_accuracy = v.accuracy;
    metrics.row({static_cast<double>(step), report.train_loss, v.loss, v.accuracy, adamw.lr(), norm});
    report.train_loss_curve.x.push_back(static_cast<double>(step));
    report.train_loss_curve.y.push_back(report.train_loss);
    report.val_loss_curve.x.push_back(static_cast<double>(step));
    report.val_loss_curve.y.push_back(v.loss);
  }
  progress.finish();
  report.step_seconds = std::chrono::duration<double>(training).count() / static_cast<double>(std::max<int64_t>(1, t.steps - 1));
  model.eval();
  return report;
}

}  // namespace ladder::lessons
