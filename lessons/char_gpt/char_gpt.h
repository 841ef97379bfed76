// What the character GPTs of lessons 11, 12, 14 and 16 share as flags, so that runs on the same text
// and budget compare directly: how they train (nanoGPT's names: AdamW's groups, the warmup-then-decay
// schedule, the clip, what the tracker records), the model's shape checks, the text read from
// --data/--val/--lines (data/char_corpus.h) and what is printed of it and of the samples. Each
// lesson shows its own training loop (optim::train_step); the model's loss over the validation
// text and its samples are models/gpt_text.h.
#pragma once

#include <string>
#include <vector>

#include "data/char_corpus.h"
#include "harness/cli.h"
#include "harness/run.h"
#include "harness/schedule_flags.h"
#include "harness/tracker.h"
#include "models/gpt.h"
#include "optim/adam.h"

namespace ladder::lessons {

// How the GPTs train, as flags with nanoGPT's names.
struct GPTTraining {
  float weight_decay = 0.1f;
  harness::ScheduleFlags schedule;  // --warmup, then a decay (--decay) to --lr-floor of --lr
  int64_t eval_every = 100;
  float clip = 1.0f;  // the gradient norm train_step clips to; 0: no clip

  void add_to(harness::LessonCli& cli);  // --weight-decay, --warmup, --lr-floor, --decay, --clip, --eval-every
  // Refuses a --warmup that leaves no step for the decay; --quick shortens the run. After cli.parse().
  void settle(const std::string& lesson, harness::CommonFlags& common);
  // AdamW at `lr` without decay on biases, norms and embeddings, and nanoGPT's beta2 for its
  // character models: 0.99, as the batches are small and the steps few.
  optim::AdamW optimizer(models::GPT& model, float lr) const;
  // What one GPT's loop records: val_loss and val_ppl every eval_every steps (and at the last) into
  // `csv`, tokens per second of windows of `context`; `name` names its curves and its loss.
  harness::Tracker tracker(harness::Run& run, const harness::CommonFlags& flags, int64_t context, const std::string& csv,
                  const std::string& name = "train") const;
};

// Declares the rule that --heads divides --embd (each head takes --embd / --heads features);
// parse() refuses a --heads that does not.
void heads_divide_embd(harness::LessonCli& cli, const models::GPTConfig& config);

// The text as characters, read before anything runs: a bad --data or --val, or a text too short
// for --batch and --context, fails at once. --quick keeps a small part of it. In lines mode
// `context` must hold each line with its start marker: when it was given (`context_given`) a longer
// line is refused with its number, else `context` becomes the longest line + 1 (as makemore's).
data::CharCorpus load_char_corpus(const std::string& lesson, const harness::CommonFlags& flags, const harness::TextFlags& text,
                                  int64_t& context, bool context_given = true);

// An evaluation of the GPT loops, over the whole validation text: {the loss, its perplexity}.
std::vector<double> validation_figures(models::GPT& model, const data::CharCorpus& corpus);
// What the model trains on: "1041503 training characters" or "31032 training lines".
std::string training_extent(const data::CharCorpus& corpus);
// What validation_figures covers: "every one of the 1,734 windows of 64 characters" or "every one of the 3,203 validation lines".
std::string validation_extent(const data::CharCorpus& corpus, int64_t context);

// The prompt as ids. Every character must be in the vocabulary (an unknown one has no id the model
// learned): fails naming `lesson` otherwise. An empty prompt starts a stream from a newline, or from
// the first character of the vocabulary when the text had none.
std::vector<int> prompt_ids(const std::string& lesson, const data::Tokenizer& tokenizer, const std::string& prompt);
// models::sample_lines as text, one line each, then how many are lines of the training text
// (makemore counts them too: a model that only memorised would make nothing new) and how many
// filled the context.
std::string line_samples(models::GPT& model, const data::CharCorpus& corpus, const std::vector<int>& prompt, int64_t count,
                         float temperature, Generator& gen);

}  // namespace ladder::lessons
