// The translation tasks of lessons 07, 09 and 10: their flags, their pairs (the generated date
// task, the generated number task, or a pairs file), batches, the validation loss, the weights to
// keep, and translating (greedy and beam search) and scoring what a model writes. Each lesson
// brings its model and shows its training loop; the same tasks, budgets, metric names and files
// make the lessons' summary.json files directly comparable. What the lessons print and plot from
// the translations is in translation_report.h.
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "data/batcher.h"
#include "data/pairs.h"
#include "harness/cli.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "models/encoder_decoder.h"
#include "models/seq2seq.h"
#include "nn/module.h"
#include "optim/adam.h"
#include "optim/train_step.h"

namespace ladder::lessons {

struct TranslationFlags {
  std::string data;           // a pairs file (source<TAB>target); empty: the generated date task
  std::string phrasebook;     // write data/phrasebook.h's generated pairs file here and read it as --data
  std::string val;            // validation pairs; empty: held out from data
  std::string level = "word";  // pairs files: word or char (the date task is always characters)
  int64_t max_len = 0;        // pairs files: drop pairs longer than this many tokens (0: keep all)
  int64_t min_freq = 2;       // pairs files at word level: rarer words read as <unk>
  bool no_buckets = false;    // pairs files: pad every source to the longest instead of bucketing
  int64_t pad_words = 0;      // date task: up to this many filler words around each date
  int64_t pairs = 20000;      // date task: training pairs
  int64_t number_steps = 0;   // the number task's part: training steps (0: skip it); the lesson's default
  int64_t max_digits = 12;    // the number task: numbers of 1 to this many digits
  bool from_file() const { return !data.empty() || !phrasebook.empty(); }  // else the date task
};
// --data, --phrasebook, --val, --level, --max-len, --min-freq, --no-buckets, --pad-words, --pairs, and the number task's
// --number-steps and --max-digits.
void add_translation_options(harness::LessonCli& cli, TranslationFlags& flags);

// --embed, --hidden, --layers, --dropout: the sizes of lessons 07's and 09's GRU encoder-decoders.
void add_model_options(harness::LessonCli& cli, models::Seq2SeqConfig& config);

struct TranslationTask;
// `config` with the vocabulary sizes of `task`'s tokenizers.
models::Seq2SeqConfig sized_for(models::Seq2SeqConfig config, const TranslationTask& task);

struct TranslationTask {
  std::string description;
  data::PairTokenizers tokenizers;
  std::vector<data::TextPair> test_text;     // the test pairs as written, for the example table
  std::vector<data::IdPair> train, val, test;  // as token ids
  int64_t longest_target = 0;                // tokens, over every part: how long decoding may run
  int64_t source_width = 0;                  // the longest source, in tokens, over every part
  // How batches pad their sources. The recurrent encoders read padding as input, so a source must
  // be padded alike in every batch for its encoding (and its translation) not to depend on the
  // other sources of its batch. The generated tasks pad every source to source_width (short
  // sources: little is wasted); pairs files are bucketed, each batch holding sources of one length
  // (data::SourceLengthBuckets: a random batch, split by source length), so that no source is
  // padded at all. Either way beam search of width 1 chooses what greedy decoding chooses.
  bool bucketed = false;
  // Translate with the weights of the lowest validation loss (BestWeights), not the last: a pairs
  // file is small enough to overfit. The generated tasks draw 20,000 fresh pairs and do not.
  bool keep_best = false;
  int64_t dropped = 0;  // pairs over --max-len
  std::optional<data::SourceLengthBuckets> buckets;  // the training pairs, when bucketed

  // `batch` training pairs drawn at random, padded as the task pads: one group, or bucketed one
  // group per source length (a model's loss reads the groups as one batch).
  std::vector<data::Seq2SeqBatch> training_batch(int64_t batch, Generator& gen) const;
  // Pairs padded as the task pads (bucketed: all sources of one length).
  data::Seq2SeqBatch padded(const std::vector<data::IdPair>& pairs) const;
};
// The date task or the pairs file, split, tokenized and checked against the batch size. --quick
// keeps a small part of it. Throws ladder::Error for bad flags or data, before any training.
TranslationTask load_translation_task(const TranslationFlags& flags, const harness::CommonFlags& common, const std::string& lesson);
// The number task (data/numbers.h): 20,000 training pairs, 1,000 validation and 1,000 test
// (--quick: 2,000, 200, 200), numbers of 1 to --max-digits digits, seeded by --seed; padded as
// the date task. Nothing when its part is skipped (--number-steps 0, or a pairs file). Loaded
// with the main task, so that a --max-digits too small for the pairs is refused before training.
std::optional<TranslationTask> load_number_task(const TranslationFlags& flags, const harness::CommonFlags& common,
                                                const std::string& lesson);

// The mean loss per target token over `pairs` (pairs of `task`), teacher forcing, without a graph.
double translation_loss(models::EncoderDecoder& model, const TranslationTask& task, const std::vector<data::IdPair>& pairs);

// What the training loops of lessons 07, 09 and 10 record, alike in all three: an evaluation every
// twentieth of the run into `csv` (validation_figures: val_loss, val_ppl), the progress in pairs per
// second, the curves and divergence messages named `name`.
harness::Tracker translation_tracker(harness::Run& run, const harness::CommonFlags& flags, const std::string& name, const std::string& csv);
// An evaluation of those loops, in eval mode: {the translation_loss of the validation pairs, its exp}.
std::vector<double> validation_figures(nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task);

// The weights of the lowest validation loss seen, when the task keeps them (keep_best): offered at
// every evaluation, restored after training. A task that does not keep them copies nothing and
// restores nothing, and its model ends with its last weights.
class BestWeights {
 public:
  explicit BestWeights(const TranslationTask& task) : keep_(task.keep_best) {}
  void offer(const nn::Module& model, int64_t step, double val_loss);
  // Loads the best weights into `model` and says which step they are from.
  void restore(nn::Module& model) const;
  // The best so far, for the loop's checkpoints (offer before the evaluation is recorded).
  harness::Carried carried();

 private:
  bool keep_;
  int64_t step_ = 0;
  double val_loss_ = 0;
  std::map<std::string, Tensor> weights_;
};

// Prints, before a model trains, what --steps will take: the time of a few training steps of a
// scratch model of the same config, with weights and batches of its own (the run's random draws do
// not move), on this machine as loaded now.
template <class Model, class Config>
void print_time_estimate(const Config& config, const TranslationTask& task, const harness::CommonFlags& flags) {
  constexpr int64_t kTimed = 8;  // after one untimed step, which pays for first allocations
  Generator init(flags.seed + 1000), batches(flags.seed + 1001);
  Model scratch(config, init);
  scratch.train();
  optim::Adam adam(scratch.named_parameters(), {.lr = flags.lr});
  std::chrono::steady_clock::time_point start;
  for (int64_t step = 0; step <= kTimed; ++step) {
    if (step == 1) start = std::chrono::steady_clock::now();
    optim::train_step(scratch, adam, task.training_batch(flags.batch, batches), 1.0f);
  }
  const double per_step = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kTimed;
  const double total = per_step * static_cast<double>(flags.steps);
  std::printf("time estimate: %.0f ms a step (%lld steps of a scratch copy, here and now): --steps %lld, about %.1f minutes\n",
              1000 * per_step, static_cast<long long>(kTimed), static_cast<long long>(flags.steps), total / 60);
}

struct Translations {
  std::vector<std::vector<int>> outputs;  // one per pair, without <bos> and <eos>
  double seconds = 0;
};
// Translates the sources of `pairs` (pairs of `task`): beam = 0 greedy (in batches), else beam search
// of that width with length normalisation alpha (models::beam_search), for at most the task's
// longest target. The model is put in eval mode.
Translations translate(nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task,
                       const std::vector<data::IdPair>& pairs, int64_t beam, float alpha = 0.75f);

// Every target of a source in `pairs` is a reference for each of its outputs, as a pairs file lists
// several translations of one sentence ("Go." -> "Va !", "Marche.", "Bouge !").
struct TranslationScores {
  double exact_match = 0;  // the share of outputs equal to one of their references, token for token
  double bleu = 0;         // corpus BLEU-4 over the task's tokens (characters for the date task), no smoothing
};
TranslationScores score(const Translations& translations, const std::vector<data::IdPair>& pairs);

// What the task is: its source, the sizes of its parts and vocabularies, the pairs left out.
void print_task(const TranslationTask& task);

}  // namespace ladder::lessons
