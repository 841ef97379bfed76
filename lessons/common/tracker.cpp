#include "lessons/common/tracker.h"

#include <algorithm>

#include "core/error.h"

namespace ladder::lessons {

namespace {

std::string rate_column(const std::string& unit) {
  if (unit == "tok") return "tokens_per_s";
  if (unit == "ex") return "examples_per_s";
  if (unit == "img") return "images_per_s";
  return unit + "_per_s";
}

}  // namespace

Tracker::Tracker(Run& run, TrackerOptions options)
    : run_(run),
      options_(std::move(options)),
      progress_(options_.steps, options_.unit, options_.loss_kind == LossKind::cross_entropy),
      start_(std::chrono::steady_clock::now()),
      mark_(start_) {
  if (options_.steps < 1 || options_.eval_every < 1)
    fail("Tracker", "steps and eval_every must be >= 1, got ", options_.steps, " and ", options_.eval_every);
  std::vector<std::string> columns = {"step", "train_loss"};
  columns.insert(columns.end(), options_.figures.begin(), options_.figures.end());
  columns.insert(columns.end(), {"lr", rate_column(options_.unit), "grad_norm"});
  if (!options_.csv.empty()) csv_ = std::make_unique<CsvWriter>(run_.file(options_.csv), columns);
  curves_.resize(1 + options_.figures.size(), Series{options_.name});
}

void Tracker::step(int64_t step, const optim::StepResult& result, double lr) {
  const auto now = std::chrono::steady_clock::now();
  (step == 1 ? first_step_ : training_) += now - mark_;
  steps_timed_ += step == 1 ? 0 : 1;
  mark_ = now;
  if (options_.stop_if_diverged)
    run_.check_loss(step, result.loss, options_.loss_kind,
                    options_.name == "train" ? "the loss" : "the " + options_.name + "'s loss");
  recent_ += result.loss, ++recent_steps_;
  lr_ = lr, grad_norm_ = result.grad_norm;
  if (options_.progress) progress_.update(step, result.loss, step * options_.items_per_step);
}

bool Tracker::evaluation_due(int64_t step) const { return step % options_.eval_every == 0 || step == options_.steps; }

void Tracker::evaluated(int64_t step, const std::vector<double>& figures) {
  if (figures.size() != options_.figures.size())
    fail("Tracker::evaluated", figures.size(), " figures for the ", options_.figures.size(), " named");
  train_loss_ = recent_ / static_cast<double>(std::max<int64_t>(1, recent_steps_));
  recent_ = 0, recent_steps_ = 0;
  std::vector<double> row = {static_cast<double>(step), train_loss_};
  row.insert(row.end(), figures.begin(), figures.end());
  row.insert(row.end(), {lr_, static_cast<double>(step * options_.items_per_step) / std::max(seconds(), 1e-9), grad_norm_});
  if (csv_) csv_->row(row);
  for (size_t c = 0; c < curves_.size(); ++c) {
    curves_[c].x.push_back(static_cast<double>(step));
    curves_[c].y.push_back(row[c + 1]);
  }
  mark_ = std::chrono::steady_clock::now();
}

void Tracker::finish() { progress_.finish(); }

size_t Tracker::column(const std::string& figure) const {
  if (figure == "train_loss") return 0;
  const auto found = std::find(options_.figures.begin(), options_.figures.end(), figure);
  if (found == options_.figures.end()) fail("Tracker", "no figure '", figure, "' is tracked");
  return static_cast<size_t>(found - options_.figures.begin()) + 1;
}

double Tracker::last(const std::string& figure) const {
  const Series& c = curve(figure);
  if (c.y.empty()) fail("Tracker::last", "no evaluation has reported '", figure, "' yet");
  return c.y.back();
}

const Series& Tracker::curve(const std::string& figure) const { return curves_[column(figure)]; }

double Tracker::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Tracker::mean_step_seconds() const {
  if (steps_timed_ == 0) return std::chrono::duration<double>(first_step_).count();
  return std::chrono::duration<double>(training_).count() / static_cast<double>(steps_timed_);
}

}  // namespace ladder::lessons
