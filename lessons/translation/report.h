// What lessons 07, 09 and 10 print, write and plot from their translations, alike in all three: the
// table of greedy decoding against beam search (with and without length normalisation:
// length_normalisation.h), examples beside their references, exact match by source length on one
// chart across the lessons, and the metrics of summary.json.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "lessons/translation/length_normalisation.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "data/translation_task.h"
#include "lessons/translation/task_flags.h"
#include "models/translate.h"

namespace ladder::lessons {

// Beam widths every translation lesson compares with greedy decoding.
inline constexpr int64_t kBeamWidths[] = {1, 2, 4, 8};

struct DecoderComparison {
  models::Translations greedy;
  models::TranslationScores greedy_scores;
  plot::Series seconds;                       // seconds to translate the test set, against beam width
  nlohmann::ordered_json bleu_by_width;  // {"test_bleu_beam1": ..., ...}
};
// Greedy decoding and beam search of every kBeamWidths width on the test pairs: prints the table
// and six examples, writes beam_search.png (exact match and BLEU against beam width). When the test
// targets differ in length (a pairs file), compare_length_normalisation follows.
DecoderComparison compare_decoders(harness::Run& run, models::EncoderDecoder& model, const data::TranslationTask& task);

// A chart of greedy exact match by source length that lessons 07, 09 and 10 each extend with their
// model's curve: STEM.csv (model, source_tokens, exact_match) and STEM.png in the run folder.
struct LengthChart {
  std::string stem;   // "exact_match_by_length" (the date task or a pairs file), "numbers_by_length"
  std::string title;
  std::vector<std::string> task_flags;  // the flags that make the task: another run joins when all agree
};
LengthChart main_task_chart();    // part 4 of lessons 07 and 09 (part 3 of lesson 10)
LengthChart number_task_chart();  // the number task's part

// Exact match by source length: the test pairs grouped into `bins` ranges of source tokens of about
// equal counts. x: the mean source length of each bin, y: its exact match (as models::score(): an output
// equal to any target of its source).
plot::Series exact_match_by_length(const models::Translations& translations, const std::vector<data::IdPair>& pairs,
                             const std::string& name, int bins = 6);

// Another lesson's run whose curves join ours (lesson 09 reads lesson 07's, lesson 10 reads lesson
// 09's, which holds 07's too), read before any training.
struct OtherRun {
  std::string folder, lesson;  // the lesson as the messages call it: "lesson 07"
  nlohmann::json flags;        // the flags its summary.json records; null when no finished run is there
  std::map<std::string, std::string> files;  // its metrics.csv and charts' CSV files that exist, by name
};
// Reads the run in `folder`, given as `flag` (--compare), through the bounded reader
// (io/small_file.h): its summary.json, metrics.csv and the CSV files of main_task_chart() and
// number_task_chart(). A folder or file that is not there is left out (the charts then say so); a
// path that is not a folder, a FIFO or device in its place, a file too large or a summary.json that
// is not a lesson's fails naming `flag`, so that a bad --compare stops the run before training.
OtherRun read_other_run(const std::string& flag, const std::string& folder, const std::string& lesson);

// The curves of the other run's STEM.csv, when it translated the same task: its summary.json names
// the same task flags (and seed) as `cli`. Else says why not in `why_not`.
std::optional<std::vector<plot::Series>> other_run_curves(const OtherRun& other, const LengthChart& chart, const harness::LessonCli& cli,
                                                    std::string& why_not);
// Its validation loss against step (metrics.csv's val_loss), named `name`, when it translated the
// same task as `cli` (main_task_chart()'s flags). Else says why not in `why_not`.
std::optional<plot::Series> other_run_loss(const OtherRun& other, const harness::LessonCli& cli, const std::string& name, std::string& why_not);
// Prints the greedy exact match by source length of `greedy` (translations of the test pairs),
// writes STEM.csv and STEM.png with our curve (named `name`) after `other`'s curves, when that run
// translated the same task (else says why not). Returns our curve.
plot::Series report_exact_match_by_length(harness::Run& run, const harness::LessonCli& cli, const LengthChart& chart, const data::TranslationTask& task,
                                    const models::Translations& greedy, const std::string& name, const std::optional<OtherRun>& other);

// The indices of the first `n` test pairs (or all, when there are fewer), and of the `n` with the
// longest sources (the first of equally long ones), longest first.
std::vector<size_t> first_test_pairs(const data::TranslationTask& task, size_t n);
std::vector<size_t> longest_test_pairs(const data::TranslationTask& task, size_t n);

// The metrics every translation lesson reports, in summary.json's order, and their notes:
// train_loss, val_loss, val_ppl, test_exact_match, test_bleu, test_bleu_beam1 .. test_bleu_beam8.
struct TranslationSummary {
  nlohmann::ordered_json metrics;
  harness::MetricNotes notes;
  void add(const TranslationSummary& more);  // its metrics after ours, with their notes
};
// From the tracker of the model's training: its train_loss and its last val_loss (the lowest, when
// the task keeps the weights of the lowest: BestWeights).
TranslationSummary translation_summary(const data::TranslationTask& task, const harness::Tracker& training, const DecoderComparison& decoders);
// The number task's part after its training (part 5 of lessons 07 and 09, part 6 of lesson 10):
// compare_length_normalisation, the same along training (`watch`'s rows and the end's: printed,
// length_normalisation.csv and .png), then report_exact_match_by_length on number_task_chart()
// beside `other`'s curves, and its metrics: numbers_val_loss, numbers_exact_match (greedy),
// numbers_exact_match_beam4 (alpha 0), numbers_exact_match_beam4_normalised, and the greedy exact
// match of the shortest and the longest sixth of the test sources (numbers_exact_match_shortest,
// numbers_exact_match_longest).
TranslationSummary report_number_task(harness::Run& run, const harness::LessonCli& cli, models::EncoderDecoder& model,
                                      const data::TranslationTask& numbers, const harness::Tracker& training, const NormalisationWatch& watch,
                                      const std::string& name, const std::optional<OtherRun>& other);

// Prints test pairs `rows` (indices): source, target, and each decoder's output with its sentence
// BLEU (models::bleu_d2l, k = 2, as d2l prints its examples) and "ok" when exact.
void print_examples(const data::TranslationTask& task, const std::vector<std::pair<std::string, models::Translations>>& decoders,
                    const std::vector<size_t>& rows);

}  // namespace ladder::lessons
