// Lesson 11's second program: `--load FILE` samples from a checkpoint that the lesson saved, without
// training. The model, its settings and its tokenizer come from the checkpoint's metadata, so a
// flag of training given with --load is refused rather than ignored, and a flag of sampling given
// without it likewise.
#pragma once

#include <cstdint>
#include <string>

#include "data/char_corpus.h"
#include "harness/attention_flags.h"
#include "harness/cli.h"
#include "harness/run.h"
#include "models/gpt.h"

namespace ladder::lessons {

struct SamplingFlags {
  std::string load;          // the checkpoint to sample from; empty: train
  std::string prompt;        // the text samples continue, those of training included
  int64_t length = 500;      // --sample-chars
  float temperature = 1.0f;  // of --load's samples (training samples at 0.5, 1.0 and 1.5)

  void add_to(harness::LessonCli& cli);  // --load, --sample-chars, --prompt, --temperature
  // After cli.parse(), when training: refuses --sample-chars and --temperature, which only --load reads.
  void refuse_without_load(const harness::LessonCli& cli) const;
};

// Part 2's checkpoint: the model, with what --load rebuilds it from in the metadata (the lesson,
// the tokenizer, the model's settings, and whether it read lines); returns the file's path.
std::string save_for_sampling(harness::Run& run, const models::GPT& model, const data::CharCorpus& corpus);

// --load: refuses the flags of training (those of `attention` too), loads the checkpoint and prints
// what model it holds and --sample-chars characters sampled at --temperature after --prompt (with
// --lines, whole lines). `context` is --context: when given, the model keeps that many of the
// positions it learned (at most its block_size), and its samples see at most that many characters.
void sample_checkpoint(const harness::LessonCli& cli, const harness::AttentionFlags& attention, const SamplingFlags& flags,
                       int64_t context);

}  // namespace ladder::lessons
