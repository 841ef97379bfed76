// The translation tasks of lessons 07, 09 and 10 as flags: which pairs (the generated date task,
// the generated number task, or a pairs file), checked together and loaded before any training, so
// that the three lessons train on the same tasks and budgets and their summaries compare directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "data/translation_task.h"
#include "harness/cli.h"
#include "models/seq2seq.h"

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
// After cli.parse(): --quick trains each GRU encoder-decoder of lessons 07 and 09 (the main task's
// and the number task's) for at most 40 steps.
void shorten_for_quick(TranslationFlags& flags, harness::CommonFlags& common);

// --embed, --hidden, --layers, --dropout: the sizes of lessons 07's and 09's GRU encoder-decoders.
void add_model_options(harness::LessonCli& cli, models::Seq2SeqConfig& config);

// `config` with the vocabulary sizes of `task`'s tokenizers.
models::Seq2SeqConfig sized_for(models::Seq2SeqConfig config, const data::TranslationTask& task);

// The date task or the pairs file, split, tokenized and checked against the batch size. --quick
// keeps a small part of it. Throws ladder::Error for bad flags or data, before any training.
data::TranslationTask load_translation_task(const TranslationFlags& flags, const harness::CommonFlags& common,
                                            const std::string& lesson);
// The number task (data/numbers.h): 20,000 training pairs, 1,000 validation and 1,000 test
// (--quick: 2,000, 200, 200), numbers of 1 to --max-digits digits, seeded by --seed; padded as
// the date task. Nothing when its part is skipped (--number-steps 0, or a pairs file). Loaded
// with the main task, so that a --max-digits too small for the pairs is refused before training.
std::optional<data::TranslationTask> load_number_task(const TranslationFlags& flags, const harness::CommonFlags& common,
                                                      const std::string& lesson);

// What the task is: its source, the sizes of its parts and vocabularies, the pairs left out.
void print_task(const data::TranslationTask& task);

}  // namespace ladder::lessons
