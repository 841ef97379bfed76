// The translation task of lessons 07, 09 and 10: its flags, its pairs (the generated date task or a
// pairs file), the validation loss, and scoring what a model translates (exact match and BLEU,
// greedy and beam search, by source length). Each lesson brings its model and shows its training
// loop; the same task, budget, metric names and files make the lessons' summary.json files directly
// comparable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "data/batcher.h"
#include "data/pairs.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/run.h"
#include "lessons/common/tracker.h"
#include "models/encoder_decoder.h"
#include "models/seq2seq.h"
#include "nn/module.h"

namespace ladder::lessons {

struct TranslationFlags {
  std::string data;           // a pairs file (source<TAB>target); empty: the generated date task
  std::string val;            // validation pairs; empty: held out from data
  std::string level = "word";  // pairs files: word or char (the date task is always characters)
  int64_t max_len = 0;        // pairs files: drop pairs longer than this many tokens (0: keep all)
  int64_t pad_words = 0;      // date task: up to this many filler words around each date
  int64_t pairs = 20000;      // date task: training pairs
};
// --data, --val, --level, --max-len, --pad-words, --pairs.
void add_translation_options(LessonCli& cli, TranslationFlags& flags);

// --embed, --hidden, --layers, --dropout: the sizes of lessons 07's and 09's GRU encoder-decoders.
void add_model_options(LessonCli& cli, models::Seq2SeqConfig& config);

struct TranslationTask {
  std::string description;
  data::PairTokenizers tokenizers;
  std::vector<data::TextPair> test_text;     // the test pairs as written, for the example table
  std::vector<data::IdPair> train, val, test;  // as token ids
  int64_t longest_target = 0;                // tokens, over every part: how long decoding may run
  // Tokens, over every part: every batch pads its sources to this width. The recurrent encoders
  // read the padding too, so with one width for all a source is encoded the same in any batch
  // (and beam search of width 1 chooses what greedy decoding chooses).
  int64_t source_width = 0;
  int64_t dropped = 0;                       // pairs over --max-len
};
// The date task or the pairs file, split, tokenized and checked against the batch size. --quick
// keeps a small part of it. Throws ladder::Error for bad flags or data, before any training.
TranslationTask load_translation_task(const TranslationFlags& flags, const CommonFlags& common, const std::string& lesson);

// The mean loss per target token over `pairs` (sources padded to source_width), teacher forcing,
// without a graph.
double translation_loss(models::EncoderDecoder& model, const std::vector<data::IdPair>& pairs, int64_t source_width);

// What the training loops of lessons 07, 09 and 10 record, alike in all three: an evaluation every
// twentieth of the run into `csv` (validation_figures: val_loss, val_ppl), the progress in pairs per
// second, the curves and divergence messages named `name`.
Tracker translation_tracker(Run& run, const CommonFlags& flags, const std::string& name, const std::string& csv);
// An evaluation of those loops, in eval mode: {the translation_loss of the validation pairs, its exp}.
std::vector<double> validation_figures(nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task);

struct Translations {
  std::vector<std::vector<int>> outputs;  // one per pair, without <bos> and <eos>
  double seconds = 0;
};
// Translates the sources of `pairs` (pairs of `task`): beam = 0 greedy (in batches), else beam search
// of that width, for at most the task's longest target. The model is put in eval mode.
Translations translate(nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task,
                       const std::vector<data::IdPair>& pairs, int64_t beam);

struct TranslationScores {
  double exact_match = 0;  // the share of outputs equal to their target, token for token
  double bleu = 0;         // corpus BLEU-4 over the task's tokens (characters for the date task)
};
TranslationScores score(const Translations& translations, const std::vector<data::IdPair>& pairs);

// Exact match by source length: the test pairs grouped into `bins` ranges of source tokens of about
// equal counts. x: the mean source length of each bin, y: its exact match.
Series exact_match_by_length(const Translations& translations, const std::vector<data::IdPair>& pairs,
                             const std::string& name, int bins = 6);

// The exact_match_by_length.csv of another lesson's run folder (lesson 09 reads lesson 07's), when
// that run exists and translated the same task: its summary.json names the same task flags (and
// seed) as `cli`. Else says why not in `why_not`.
std::optional<Series> other_run_by_length(const std::string& folder, const LessonCli& cli, const std::string& name,
                                          std::string& why_not);

// What the task is: its source, the sizes of its parts and vocabularies, the pairs left out.
void print_task(const TranslationTask& task);

// Beam widths every translation lesson compares with greedy decoding.
inline constexpr int64_t kBeamWidths[] = {1, 2, 4, 8};

struct DecoderComparison {
  Translations greedy;
  TranslationScores greedy_scores;
  Series seconds;                       // seconds to translate the test set, against beam width
  nlohmann::ordered_json bleu_by_width;  // {"test_bleu_beam1": ..., ...}
};
// Greedy decoding and beam search of every kBeamWidths width on the test pairs: prints the table
// and six examples, writes beam_search.png (exact match and BLEU against beam width).
DecoderComparison compare_decoders(Run& run, nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task);

// Another lesson's run whose exact match by length is plotted beside ours: its folder, the name of
// its curve, and the lesson as the messages call it ("lesson 07").
struct OtherRun {
  std::string folder, name, lesson;
};
// Prints the greedy exact match by source length of `greedy` (translations of the test pairs),
// writes exact_match_by_length.csv and exact_match_by_length.png (named `name`), with `other`'s
// curve beside it when that run translated the same task (else says why not).
void report_exact_match_by_length(Run& run, const LessonCli& cli, const TranslationTask& task, const Translations& greedy,
                                  const std::string& name, const std::optional<OtherRun>& other);

// The metrics every translation lesson reports, in summary.json's order, and their notes:
// train_loss, val_loss, val_ppl, test_exact_match, test_bleu, test_bleu_beam1 .. test_bleu_beam8.
struct TranslationSummary {
  nlohmann::ordered_json metrics;
  MetricNotes notes;
};
// From the tracker of the model's training: its train_loss and its last val_loss.
TranslationSummary translation_summary(const Tracker& training, const DecoderComparison& decoders);

// Prints the first `rows` test pairs: source, target, and each decoder's output ("ok" when exact).
void print_examples(const TranslationTask& task, const std::vector<std::pair<std::string, Translations>>& decoders,
                    size_t rows);

}  // namespace ladder::lessons
