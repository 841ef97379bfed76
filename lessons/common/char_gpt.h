// What the character GPTs of lessons 11, 12 and 14 share, so that runs on the same text and budget
// compare directly: the text as one character stream, the model's shape checks, how it trains
// (the flags, AdamW's groups, the warmup-then-cosine schedule, what the tracker records), its loss
// over validation windows, and samples that never draw the tokenizer's special tokens. Each lesson
// shows its own training loop (optim::train_step): the model's auxiliary loss and
// after_optimizer_step() go through it, so vq attention's commitment loss and EMA codebook train
// with no code of their own.
#pragma once

#include <string>
#include <vector>

#include "data/text.h"
#include "data/tokenizer.h"
#include "lessons/common/cli.h"
#include "lessons/common/run.h"
#include "lessons/common/schedule_flags.h"
#include "lessons/common/tracker.h"
#include "models/gpt.h"
#include "optim/adam.h"

namespace ladder::lessons {

// How the GPTs train, as flags with nanoGPT's names.
struct GPTTraining {
  float weight_decay = 0.1f;
  ScheduleFlags schedule;  // --warmup, then a cosine decay to a tenth of --lr
  int64_t eval_every = 100;

  void add_to(LessonCli& cli);  // --weight-decay, --warmup, --eval-every
  // Refuses a --warmup that leaves no step for the decay; --quick shortens the run. After cli.parse().
  void settle(const std::string& lesson, CommonFlags& common);
  // AdamW at `lr` without decay on biases, norms and embeddings, and nanoGPT's beta2 for its
  // character models: 0.99, as the batches are small and the steps few.
  optim::AdamW optimizer(models::GPT& model, float lr) const;
  // What one GPT's loop records: val_loss and val_ppl every eval_every steps (and at the last) into
  // `csv`, tokens per second of windows of `context`; `name` names its curves and its loss.
  Tracker tracker(Run& run, const CommonFlags& flags, int64_t context, const std::string& csv,
                  const std::string& name = "train") const;
};

// After parse(): refuses --lines (a GPT reads one stream) and --heads that does not divide --embd.
void check_gpt_shape(const std::string& lesson, const TextFlags& text, const models::GPTConfig& config);

struct CharCorpus {
  data::Tokenizer tokenizer;
  std::vector<int> train_ids, val_ids;
  std::string source;
  data::DroppedUnknown dropped;  // validation characters not in the training text
};
// The text as characters, read before anything runs: a bad --data or --val, or a text too short
// for --batch and --context, fails at once. --quick keeps a small part of it.
CharCorpus load_char_corpus(const std::string& lesson, const CommonFlags& flags, const TextFlags& text, int64_t context);

// The mean cross-entropy over up to `max_windows` consecutive windows of `context` tokens of the
// stream, each predicting the token after every position; in eval mode, without a graph.
double stream_loss(models::GPT& model, const std::vector<int>& ids, int64_t context, int64_t batch, int64_t max_windows);
// The windows every evaluation reads: the first 48 (--quick: 8) of the validation text, or as many as it holds.
int64_t validation_windows(const CharCorpus& corpus, int64_t context, const CommonFlags& flags);
// An evaluation of the GPT loops: {the stream_loss of the validation windows, its exp, the perplexity}.
std::vector<double> validation_figures(models::GPT& model, const CharCorpus& corpus, const CommonFlags& flags);

// The tokenizer's special tokens (<pad>, <bos>, <eos>, <unk>) are no characters of the text: the
// model never saw one as a next character, and whatever probability it gives them is an accident
// of its weights, so samples never draw them.
std::vector<int64_t> special_ids();
// `length` characters sampled after `prompt` at this temperature, decoded with the prompt.
std::string sample_text(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                        int64_t length, float temperature, Generator& gen);

}  // namespace ladder::lessons
