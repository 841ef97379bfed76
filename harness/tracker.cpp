#include "harness/tracker.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "core/error.h"

namespace ladder::harness {

namespace {

std::string rate_column(const std::string& unit) {
  if (unit == "tok") return "tokens_per_s";
  if (unit == "ex") return "examples_per_s";
  if (unit == "img") return "images_per_s";
  return unit + "_per_s";
}

// A figure as a checkpoint keeps it: its bits, exact (NaN too, which JSON has no number for).
nlohmann::json bits(double value) { return std::bit_cast<uint64_t>(value); }
double from_bits(const nlohmann::json& value) { return std::bit_cast<double>(value.get<uint64_t>()); }

// A loop's checkpoint name: its CSV's stem, or its name when it writes none ("GRU 2 layers" -> "gru_2_layers").
std::string loop_name(const TrackerOptions& options) {
  if (!options.csv.empty()) return std::filesystem::path(options.csv).stem().string();
  std::string name;
  for (const char c : options.name) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  return name;
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
  curves_.resize(1 + options_.figures.size(), plot::Series{options_.name});
}

int64_t Tracker::resume(LoopState state) {
  if (!options_.checkpoints) return 1;
  state_.emplace(state);
  checkpoint_ = run_.checkpoint_file(loop_name(options_));
  if (!run_.resuming() || !std::filesystem::exists(checkpoint_)) return 1;
  const auto [step, records] = load_loop_checkpoint(checkpoint_, run_.lesson(), *state_);
  if (step > options_.steps)
    fail("resume", checkpoint_, " is after step ", step, ", but the loop runs ", options_.steps, " steps: it is no checkpoint of this run");
  // The evaluations so far, as the checkpoint recorded them: each row starts with its step, and the
  // checkpoint is taken at an evaluation, so the last row's step is the checkpoint's.
  std::vector<std::vector<double>> rows;
  try {
    for (const nlohmann::json& row : records.at("rows")) {
      std::vector<double> values;
      for (const nlohmann::json& value : row) values.push_back(from_bits(value));
      if (values.empty()) fail("resume", "an empty row");
      rows.push_back(values);
    }
    train_loss_ = from_bits(records.at("train_loss"));
    const auto seconds = [](double s) { return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s)); };
    training_ = seconds(records.at("training_seconds")), first_step_ = seconds(records.at("first_step_seconds"));
    steps_timed_ = records.at("steps_timed");
    start_ -= seconds(records.at("seconds"));  // the rate column counts the time before the interruption too
  } catch (const std::exception& e) {
    fail("--resume", checkpoint_, ": its records of the evaluations are not what a run writes (", e.what(),
         "); was the checkpoint changed? Start a new run without --resume");
  }
  if (rows.empty() || rows.back().front() != static_cast<double>(step))
    fail("--resume", checkpoint_, " says step ", step, " but its last evaluation is ",
         rows.empty() ? std::string("none") : cat("at step ", rows.back().front()),
         ": it is no checkpoint of this run; start a new run without --resume");
  for (const std::vector<double>& values : rows) record_row(values);
  std::printf("(%s: resumed after step %lld from %s)\n", options_.name.c_str(), static_cast<long long>(step), checkpoint_.c_str());
  return step + 1;
}

nlohmann::json Tracker::records() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const std::vector<double>& row : rows_) {
    nlohmann::json values = nlohmann::json::array();
    for (const double v : row) values.push_back(bits(v));
    rows.push_back(values);
  }
  const auto seconds = [](std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); };
  return {{"rows", rows}, {"train_loss", bits(train_loss_)}, {"seconds", this->seconds()},
          {"training_seconds", seconds(training_)}, {"first_step_seconds", seconds(first_step_)}, {"steps_timed", steps_timed_}};
}

void Tracker::step(int64_t step, const optim::StepResult& result, double lr) {
  run_.stop_if_asked();
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
  if (options_.stop_if_diverged) check_finite(step, figures);
  train_loss_ = recent_ / static_cast<double>(std::max<int64_t>(1, recent_steps_));
  recent_ = 0, recent_steps_ = 0;
  std::vector<double> row = {static_cast<double>(step), train_loss_};
  row.insert(row.end(), figures.begin(), figures.end());
  row.insert(row.end(), {lr_, static_cast<double>(step * options_.items_per_step) / std::max(seconds(), 1e-9), grad_norm_});
  record_row(row);
  nlohmann::ordered_json reported = {{"step", step}, {"train_loss", train_loss_}};
  for (size_t i = 0; i < figures.size(); ++i) reported[options_.figures[i]] = figures[i];
  run_.evaluated(options_.name, reported);
  if (state_) {
    save_loop_checkpoint(checkpoint_, run_.lesson(), *state_, step, records());
    run_.checkpoint_written(step, options_.name);
  }
  mark_ = std::chrono::steady_clock::now();
}

void Tracker::check_finite(int64_t step, const std::vector<double>& figures) {
  if (state_) {  // the loss is checked before each update: this is the first look at what the update did
    run_.check_finite(step, state_->model.state_dict(), "");
    run_.check_finite(step, state_->optimizer.state_dict(), "the optimizer's ");
  }
  for (size_t i = 0; i < figures.size(); ++i) {
    const std::string& figure = options_.figures[i];
    run_.check_figure(step, figure, figures[i], figure.ends_with("loss") ? options_.loss_kind : LossKind::plain);
  }
}

void Tracker::record_row(const std::vector<double>& row) {
  if (csv_) csv_->row(row);
  for (size_t c = 0; c < curves_.size(); ++c) {
    curves_[c].x.push_back(row[0]);
    curves_[c].y.push_back(row[c + 1]);
  }
  rows_.push_back(row);
}

void Tracker::finish() {
  progress_.finish();
  run_.stop_if_asked();
}

size_t Tracker::column(const std::string& figure) const {
  if (figure == "train_loss") return 0;
  const auto found = std::find(options_.figures.begin(), options_.figures.end(), figure);
  if (found == options_.figures.end()) fail("Tracker", "no figure '", figure, "' is tracked");
  return static_cast<size_t>(found - options_.figures.begin()) + 1;
}

double Tracker::last(const std::string& figure) const {
  const plot::Series& c = curve(figure);
  if (c.y.empty()) fail("Tracker::last", "no evaluation has reported '", figure, "' yet");
  return c.y.back();
}

const plot::Series& Tracker::curve(const std::string& figure) const { return curves_[column(figure)]; }

double Tracker::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Tracker::mean_step_seconds() const {
  if (steps_timed_ == 0) return std::chrono::duration<double>(first_step_).count();
  return std::chrono::duration<double>(training_).count() / static_cast<double>(steps_timed_);
}

}  // namespace ladder::harness
