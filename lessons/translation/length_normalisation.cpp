#include "lessons/translation/length_normalisation.h"

#include <algorithm>
#include <cstdio>

#include "harness/csv_writer.h"
#include "plot/plot.h"
#include "lessons/translation/report.h"

namespace ladder::lessons {

namespace {

// The mean length of the outputs, in tokens.
double mean_length(const std::vector<std::vector<int>>& outputs) {
  double total = 0;
  for (const std::vector<int>& output : outputs) total += static_cast<double>(output.size());
  return total / static_cast<double>(std::max<size_t>(1, outputs.size()));
}

// Greedy decoding and beam search of width 4 by log P and by log P / length^0.75 (models::kLengthNormalisation) on the test pairs.
NormalisationComparison three_decoders(models::EncoderDecoder& model, const data::TranslationTask& task) {
  NormalisationComparison out{models::translate(model, task, task.test, 0), models::translate(model, task, task.test, 4, 0.0f),
                              models::translate(model, task, task.test, 4, models::kLengthNormalisation), {}, {}, {}};
  out.greedy_scores = models::score(out.greedy, task.test);
  out.beam_scores = models::score(out.beam, task.test);
  out.normalised_scores = models::score(out.normalised, task.test);
  return out;
}

// The figures of one row of the table along training.
NormalisationAtStep at_step(const NormalisationComparison& decoders, int64_t step, double fraction) {
  NormalisationAtStep row{step, fraction, decoders.greedy_scores, decoders.beam_scores, decoders.normalised_scores,
                          mean_length(decoders.greedy.outputs), mean_length(decoders.beam.outputs),
                          mean_length(decoders.normalised.outputs), 0};
  for (size_t i = 0; i < decoders.beam.outputs.size(); ++i) row.disagreements += decoders.beam.outputs[i] != decoders.normalised.outputs[i];
  return row;
}

// The mean length of the test targets, in tokens.
double mean_target_length(const data::TranslationTask& task) {
  std::vector<std::vector<int>> targets;
  for (const data::IdPair& pair : task.test) targets.push_back(pair.second);
  return mean_length(targets);
}

// Prints the rows (the watched steps and the end), writes length_normalisation.csv and a chart of
// the mean output length of each decoder against step, beside the targets'.
void report_rows(harness::Run& run, const std::vector<NormalisationAtStep>& rows, double target_length) {
  std::printf("\nthe same along training (exact match, then mean output length; the targets': %.2f):\n", target_length);
  std::printf("%6s   %-30s   %-30s %9s\n", "", "------- exact match --------", "---- mean output length -----", "beams");
  std::printf("%6s %9s %8s %11s   %7s %8s %11s %9s\n", "step", "greedy", "log P", "normalised", "greedy", "log P",
              "normalised", "disagree");
  harness::CsvWriter csv(run.file("length_normalisation.csv"),
                {"step", "fraction", "greedy_exact", "beam_exact", "normalised_exact", "greedy_length", "beam_length",
                 "normalised_length", "target_length", "disagreements"});
  plot::Series greedy{"greedy", {}, {}}, beam{"beam 4, log P", {}, {}}, normalised{"beam 4, log P / length^0.75", {}, {}},
      targets{"the targets", {}, {}};
  for (const NormalisationAtStep& r : rows) {
    std::printf("%6lld %9.3f %8.3f %11.3f   %7.2f %8.2f %11.2f %9lld\n", static_cast<long long>(r.step), r.greedy.exact_match,
                r.beam.exact_match, r.normalised.exact_match, r.greedy_length, r.beam_length, r.normalised_length,
                static_cast<long long>(r.disagreements));
    csv.row({static_cast<double>(r.step), r.fraction, r.greedy.exact_match, r.beam.exact_match, r.normalised.exact_match,
             r.greedy_length, r.beam_length, r.normalised_length, target_length, static_cast<double>(r.disagreements)});
    const auto x = static_cast<double>(r.step);
    for (plot::Series* series : {&greedy, &beam, &normalised, &targets}) series->x.push_back(x);
    greedy.y.push_back(r.greedy_length), beam.y.push_back(r.beam_length), normalised.y.push_back(r.normalised_length);
    targets.y.push_back(target_length);
  }
  run.wrote(plot::save_line_chart(run.path("length_normalisation"), {"Mean output length along training", "step",
                                                               "mean output length (tokens)", {greedy, beam, normalised, targets}}));
}

}  // namespace

NormalisationWatch::NormalisationWatch(int64_t steps) : steps_(steps) {
  const int64_t every = std::max<int64_t>(1, steps / 20);  // TranslationTracker's evaluations
  for (const int64_t evaluation : {2, 4, 8})
    if (evaluation * every < steps) watched_.push_back(evaluation * every);
}

void NormalisationWatch::offer(models::EncoderDecoder& model, const data::TranslationTask& task, int64_t step) {
  if (std::ranges::find(watched_, step) == watched_.end()) return;
  rows_.push_back(at_step(three_decoders(model, task), step, static_cast<double>(step) / static_cast<double>(steps_)));
}

NormalisationComparison compare_length_normalisation(models::EncoderDecoder& model,
                                                     const data::TranslationTask& task) {
  NormalisationComparison out = three_decoders(model, task);
  std::printf("%-34s %12s %8s %14s\n", "decoder", "exact match", "BLEU", "mean length");
  const struct {
    const char* name;
    const models::Translations& translations;
    const models::TranslationScores& scores;
  } rows[] = {{"greedy", out.greedy, out.greedy_scores},
              {"beam 4, log P (alpha 0)", out.beam, out.beam_scores},
              {"beam 4, log P / length^0.75", out.normalised, out.normalised_scores}};
  for (const auto& [name, translations, scores] : rows)
    std::printf("%-34s %12.3f %8.3f %14.2f\n", name, scores.exact_match, scores.bleu, mean_length(translations.outputs));
  std::printf("%-34s %12s %8s %14.2f\n", "the targets", "", "", mean_target_length(task));
  std::vector<size_t> disagree;
  for (size_t i = 0; i < task.test.size() && disagree.size() < 3; ++i)
    if (out.beam.outputs[i] != out.normalised.outputs[i]) disagree.push_back(i);
  if (disagree.empty()) {
    std::printf("the two beam searches chose the same output for every test source\n");
  } else {
    std::printf("\ntest sources where the two beam searches disagree (of %zu):\n", task.test.size());
    print_examples(task, {{"greedy", out.greedy}, {"beam, alpha 0", out.beam}, {"beam, alpha 0.75", out.normalised}}, disagree);
  }
  return out;
}

void report_along_training(harness::Run& run, const NormalisationWatch& watch, const NormalisationComparison& end,
                           const data::TranslationTask& task) {
  std::vector<NormalisationAtStep> rows = watch.rows();
  rows.push_back(at_step(end, watch.steps(), 1.0));
  report_rows(run, rows, mean_target_length(task));
}

}  // namespace ladder::lessons
