#include "lessons/translation/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "data/visible_text.h"
#include "io/small_file.h"
#include "models/bleu.h"

namespace ladder::lessons {

namespace {

// STEM.csv's rows, one curve per model in the order met: model,source_tokens,exact_match.
std::optional<std::vector<plot::Series>> read_curves(const std::string& text, const std::string& csv_path, std::string& why_not) {
  std::istringstream csv(text);
  std::vector<plot::Series> curves;
  std::string line;
  std::getline(csv, line);  // the header
  while (std::getline(csv, line)) {
    const size_t comma = line.find(',');
    std::istringstream numbers(comma == std::string::npos ? "" : line.substr(comma + 1));
    double x, y;
    char separator;
    if (!(numbers >> x >> separator >> y) || separator != ',') {
      why_not = cat(csv_path, " has a line that is not a model and two numbers: '", data::visible(line), "'");
      return std::nullopt;
    }
    const std::string model = line.substr(0, comma);
    if (curves.empty() || curves.back().name != model) curves.push_back({model, {}, {}});
    curves.back().x.push_back(x), curves.back().y.push_back(y);
  }
  return curves;
}

// Whether the test targets are not all of one length (a pairs file), so that length normalisation can matter.
bool targets_differ_in_length(const data::TranslationTask& task) {
  for (const data::IdPair& pair : task.test)
    if (pair.second.size() != task.test.front().second.size()) return true;
  return false;
}

// A chart of shares (exact match, BLEU) whose y axis runs from 0 to 1, so that a model at
// 0.994-1.000 is drawn as the flat line it is, not a W of single mistakes.
plot::LineChart share_chart(std::string title, std::string x_label, std::string y_label, std::vector<plot::Series> series) {
  plot::LineChart chart{std::move(title), std::move(x_label), std::move(y_label), std::move(series)};
  chart.y_floor = 0, chart.y_ceiling = 1;
  return chart;
}

}  // namespace

DecoderComparison compare_decoders(harness::Run& run, models::EncoderDecoder& model, const data::TranslationTask& task) {
  DecoderComparison out{models::translate(model, task, task.test, 0), {}, {"seconds", {}, {}}, {}};
  out.greedy_scores = models::score(out.greedy, task.test);
  std::printf("%-10s %12s %8s %10s\n", "decoder", "exact match", "BLEU", "seconds");
  std::printf("%-10s %12.3f %8.3f %10.2f\n", "greedy", out.greedy_scores.exact_match, out.greedy_scores.bleu,
              out.greedy.seconds);
  plot::Series bleu{"BLEU", {}, {}}, exact{"exact match", {}, {}};
  models::Translations beam4;
  for (const int64_t width : kBeamWidths) {
    models::Translations beam = models::translate(model, task, task.test, width, models::kLengthNormalisation);
    const models::TranslationScores s = models::score(beam, task.test);
    std::printf("beam %-5lld %12.3f %8.3f %10.2f\n", static_cast<long long>(width), s.exact_match, s.bleu, beam.seconds);
    for (plot::Series* series : {&bleu, &exact, &out.seconds}) series->x.push_back(static_cast<double>(width));
    bleu.y.push_back(s.bleu), exact.y.push_back(s.exact_match), out.seconds.y.push_back(beam.seconds);
    out.bleu_by_width["test_bleu_beam" + std::to_string(width)] = s.bleu;
    if (width == 4) beam4 = std::move(beam);
  }
  std::printf("\nexamples (ok: exactly the target; bleu: sentence BLEU):\n");
  print_examples(task, {{"greedy", out.greedy}, {"beam 4", beam4}}, first_test_pairs(task, 6));
  run.wrote(plot::save_line_chart(run.path("beam_search"),
                            share_chart("Test scores against beam width", "beam width", "score", {exact, bleu})));
  if (targets_differ_in_length(task)) {
    std::printf("\nthe targets differ in length: beam search with and without length normalisation\n");
    compare_length_normalisation(model, task);
  }
  return out;
}

LengthChart main_task_chart() {
  return {"exact_match_by_length", "Greedy exact match by source length",
          {"data", "phrasebook", "val", "level", "max-len", "min-freq", "no-buckets", "pad-words", "pairs", "seed", "quick"}};
}

LengthChart number_task_chart() {
  return {"numbers_by_length", "Numbers in words: greedy exact match by source length", {"max-digits", "seed", "quick"}};
}

plot::Series exact_match_by_length(const models::Translations& translations, const std::vector<data::IdPair>& pairs,
                             const std::string& name, int bins) {
  std::vector<size_t> order(pairs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pairs[a].first.size() < pairs[b].first.size(); });
  std::map<std::vector<int>, std::vector<std::vector<int>>> targets_of;  // as models::score(): any target of the source
  for (const auto& [source, target] : pairs) targets_of[source].push_back(target);
  plot::Series series{name, {}, {}};
  const size_t n = order.size(), parts = std::min(n, static_cast<size_t>(bins));
  for (size_t bin = 0; bin < parts; ++bin) {
    double length = 0, exact = 0;
    const size_t begin = bin * n / parts, end = (bin + 1) * n / parts;
    for (size_t k = begin; k < end; ++k) {
      length += static_cast<double>(pairs[order[k]].first.size());
      exact += std::ranges::count(targets_of[pairs[order[k]].first], translations.outputs[order[k]]) > 0;
    }
    series.x.push_back(length / static_cast<double>(end - begin));
    series.y.push_back(exact / static_cast<double>(end - begin));
  }
  return series;
}

OtherRun read_other_run(const std::string& flag, const std::string& folder, const std::string& lesson) {
  namespace fs = std::filesystem;
  OtherRun other{folder, lesson, nullptr, {}};
  std::error_code error;
  const fs::file_status status = fs::status(folder, error);
  if (!fs::exists(status)) return other;
  if (!fs::is_directory(status)) fail(flag.c_str(), folder, ": is not a folder; give the run folder of ", lesson);
  const std::string summary_path = (fs::path(folder) / "summary.json").string();
  if (!fs::exists(fs::symlink_status(summary_path, error))) return other;
  const nlohmann::json summary =
      nlohmann::json::parse(io::read_small_file(flag.c_str(), summary_path), nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object() || !summary.contains("flags") || !summary["flags"].is_object())
    fail(flag.c_str(), summary_path, ": is not a lesson's summary.json (no object of flags); give the run folder of ", lesson);
  other.flags = summary["flags"];
  for (const std::string& name : {std::string("metrics.csv"), main_task_chart().stem + ".csv", number_task_chart().stem + ".csv"}) {
    const std::string path = (fs::path(folder) / name).string();
    if (fs::exists(fs::symlink_status(path, error))) other.files[name] = io::read_small_file(flag.c_str(), path);
  }
  return other;
}

namespace {

// Whether the other run translated the task `cli` does: the same `task_flags`. Else says why not.
bool same_task(const OtherRun& other, const std::vector<std::string>& task_flags, const harness::LessonCli& cli, std::string& why_not) {
  if (other.flags.is_null()) {
    why_not = cat("no finished run in ", other.folder);
    return false;
  }
  const nlohmann::json ours = cli.flags_json();
  for (const std::string& flag : task_flags)
    if (other.flags.value(flag, nlohmann::json()) != ours.value(flag, nlohmann::json())) {
      why_not = cat("the run in ", other.folder, " translated another task (its --", flag, " differs)");
      return false;
    }
  return true;
}

}  // namespace

std::optional<std::vector<plot::Series>> other_run_curves(const OtherRun& other, const LengthChart& chart, const harness::LessonCli& cli,
                                                    std::string& why_not) {
  const auto csv = other.files.find(chart.stem + ".csv");
  if (csv == other.files.end()) {
    why_not = cat("no finished run with ", chart.stem, ".csv in ", other.folder);
    return std::nullopt;
  }
  if (!same_task(other, chart.task_flags, cli, why_not)) return std::nullopt;
  return read_curves(csv->second, cat(other.folder, "/", csv->first), why_not);
}

std::optional<plot::Series> other_run_loss(const OtherRun& other, const harness::LessonCli& cli, const std::string& name, std::string& why_not) {
  if (!same_task(other, main_task_chart().task_flags, cli, why_not)) return std::nullopt;
  const auto csv = other.files.find("metrics.csv");
  if (csv == other.files.end()) {
    why_not = cat("no metrics.csv in ", other.folder);
    return std::nullopt;
  }
  std::istringstream rows(csv->second);
  std::string line;
  std::getline(rows, line);  // the header: step first, val_loss among the columns
  std::vector<std::string> columns;
  std::string name_of_column;
  for (std::istringstream header(line); std::getline(header, name_of_column, ',');) columns.push_back(name_of_column);
  const auto at = std::find(columns.begin(), columns.end(), "val_loss");
  if (columns.empty() || columns.front() != "step" || at == columns.end()) {
    why_not = cat(other.folder, "/metrics.csv has no step and val_loss columns");
    return std::nullopt;
  }
  plot::Series loss{name, {}, {}};
  while (std::getline(rows, line)) {
    std::vector<std::string> cells;
    std::string cell;
    for (std::istringstream row(line); std::getline(row, cell, ',');) cells.push_back(cell);
    const size_t column = static_cast<size_t>(at - columns.begin());
    if (column >= cells.size() || cells[column].empty()) continue;  // a row without an evaluation
    try {
      loss.x.push_back(std::stod(cells[0])), loss.y.push_back(std::stod(cells[column]));
    } catch (const std::exception&) {
      why_not = cat(other.folder, "/metrics.csv has a row that is not numbers: '", data::visible(line), "'");
      return std::nullopt;
    }
  }
  return loss;
}

plot::Series report_exact_match_by_length(harness::Run& run, const harness::LessonCli& cli, const LengthChart& chart, const data::TranslationTask& task,
                                    const models::Translations& greedy, const std::string& name, const std::optional<OtherRun>& other) {
  const plot::Series by_length = exact_match_by_length(greedy, task.test, name);
  for (size_t i = 0; i < by_length.x.size(); ++i)
    std::printf("  sources of %5.1f tokens on average: %.3f\n", by_length.x[i], by_length.y[i]);
  std::vector<plot::Series> curves;
  if (other) {
    std::string why_not;
    if (auto theirs = other_run_curves(*other, chart, cli, why_not)) {
      std::printf("beside %s's run in %s\n", other->lesson.c_str(), other->folder.c_str());
      for (plot::Series& curve : *theirs)
        if (curve.name != name) curves.push_back(std::move(curve));
    } else {
      std::printf("%s is not beside it: %s. Run %s with the same task flags first.\n", other->lesson.c_str(),
                  why_not.c_str(), other->lesson.c_str());
    }
  }
  curves.push_back(by_length);
  harness::CsvWriter csv(run.file(chart.stem + ".csv"), {"model", "source_tokens", "exact_match"});
  for (const plot::Series& curve : curves)
    for (size_t i = 0; i < curve.x.size(); ++i) csv.row({curve.name, cat(std::setprecision(8), curve.x[i]), cat(std::setprecision(8), curve.y[i])});
  run.wrote(plot::save_line_chart(
      run.path(chart.stem),
      share_chart(chart.title, "mean source length of a sixth of the test pairs (tokens)", "exact match", curves)));
  return by_length;
}

std::vector<size_t> first_test_pairs(const data::TranslationTask& task, size_t n) {
  std::vector<size_t> rows(std::min(n, task.test.size()));
  std::iota(rows.begin(), rows.end(), size_t{0});
  return rows;
}

std::vector<size_t> longest_test_pairs(const data::TranslationTask& task, size_t n) {
  std::vector<size_t> rows(task.test.size());
  std::iota(rows.begin(), rows.end(), size_t{0});
  std::stable_sort(rows.begin(), rows.end(),
                   [&](size_t a, size_t b) { return task.test[a].first.size() > task.test[b].first.size(); });
  rows.resize(std::min(n, rows.size()));
  return rows;
}

TranslationSummary translation_summary(const data::TranslationTask& task, const harness::Tracker& training, const DecoderComparison& decoders) {
  const std::vector<double>& losses = training.curve("val_loss").y;  // the kept weights' loss, when kept
  const double val_loss = task.keep_best ? *std::ranges::min_element(losses) : training.last("val_loss");
  TranslationSummary out{{{"train_loss", training.train_loss()}, {"val_loss", val_loss}, {"val_ppl", std::exp(val_loss)},
                          {"test_exact_match", decoders.greedy_scores.exact_match}, {"test_bleu", decoders.greedy_scores.bleu}},
                         {{"train_loss", "mean training loss of the last steps, nats per target token"},
                          {"val_loss", task.keep_best ? "validation pairs, teacher forcing, nats per target token: the kept weights'"
                                                : "validation pairs, teacher forcing, nats per target token"},
                          {"val_ppl", "exp(val_loss)"},
                          {"test_exact_match", "greedy decoding: share of test outputs equal to a target of their source"},
                          {"test_bleu", "greedy decoding: corpus BLEU-4 over the test set's tokens"}}};
  out.metrics.update(decoders.bleu_by_width);
  for (const int64_t width : kBeamWidths)
    out.notes["test_bleu_beam" + std::to_string(width)] = "beam search of width " + std::to_string(width) + ": corpus BLEU-4";
  return out;
}

void TranslationSummary::add(const TranslationSummary& more) {
  metrics.update(more.metrics);
  notes.insert(more.notes.begin(), more.notes.end());
}

TranslationSummary report_number_task(harness::Run& run, const harness::LessonCli& cli, models::EncoderDecoder& model,
                                      const data::TranslationTask& numbers, const harness::Tracker& training, const NormalisationWatch& watch,
                                      const std::string& name, const std::optional<OtherRun>& other) {
  const NormalisationComparison decoders = compare_length_normalisation(model, numbers);
  report_along_training(run, watch, decoders, numbers);
  std::printf("\ngreedy exact match by source length:\n");
  const plot::Series by_length = report_exact_match_by_length(run, cli, number_task_chart(), numbers, decoders.greedy, name, other);
  return {{{"numbers_val_loss", training.last("val_loss")},
           {"numbers_exact_match", decoders.greedy_scores.exact_match},
           {"numbers_exact_match_beam4", decoders.beam_scores.exact_match},
           {"numbers_exact_match_beam4_normalised", decoders.normalised_scores.exact_match},
           {"numbers_exact_match_shortest", by_length.y.front()},
           {"numbers_exact_match_longest", by_length.y.back()}},
          {{"numbers_val_loss", "the number task: validation loss, nats per target character"},
           {"numbers_exact_match", "the number task: greedy test exact match"},
           {"numbers_exact_match_beam4", "the number task: beam search of width 4 by log P"},
           {"numbers_exact_match_beam4_normalised", "the number task: beam search of width 4 by log P / length^0.75"},
           {"numbers_exact_match_shortest", "the number task: greedy, the shortest sixth of the test sources"},
           {"numbers_exact_match_longest", "the number task: greedy, the longest sixth of the test sources"}}};
}

void print_examples(const data::TranslationTask& task, const std::vector<std::pair<std::string, models::Translations>>& decoders,
                    const std::vector<size_t>& rows) {
  const data::Tokenizer& target = task.tokenizers.target;
  for (const size_t i : rows) {
    std::printf("  %s\n      %-18s %s\n", task.test_text[i].source.c_str(), "target", task.test_text[i].target.c_str());
    for (const auto& [name, translations] : decoders) {
      const std::vector<int>& output = translations.outputs[i];
      std::printf("      %-18s %s   bleu %.2f%s\n", name.c_str(), target.decode(output).c_str(),
                  models::bleu_d2l(output, task.test[i].second, 2), output == task.test[i].second ? "  ok" : "");
    }
  }
}

}  // namespace ladder::lessons
