// The character GPT of lessons 11, 12 and 14: the text as one character stream, a GPT trained on
// random windows of it (AdamW without decay on biases, norms and embeddings; a linear warmup then a
// cosine decay; the gradient clipped to norm 1), its loss over validation windows, and samples that
// never draw the tokenizer's special tokens. The model's auxiliary loss joins the loss backpropagated
// and after_optimizer_step() follows each step (nn/module.h): vq attention's commitment loss and EMA
// codebook train with no code of their own here. Each lesson brings its model settings (lessons 11,
// 12 and 14: an attention kind), so that runs on the same text and budget compare directly.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "data/text.h"
#include "data/tokenizer.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/run.h"
#include "models/gpt.h"

namespace ladder::lessons {

struct GPTTraining {
  int64_t warmup = 100, eval_every = 100;
  float weight_decay = 0.1f;
  // Called after each evaluation with the model (in eval mode) and the step: a lesson's own
  // records over training (lesson 14: the codes its codebooks keep alive).
  std::function<void(models::GPT& model, int64_t step)> after_evaluation;
};
// --weight-decay, --warmup, --eval-every (nanoGPT's names for them).
void add_gpt_training_options(LessonCli& cli, GPTTraining& training);
// Refuses a --warmup that leaves no step for the decay; --quick shortens the run. After parse().
void settle_gpt_training(const std::string& lesson, CommonFlags& common, GPTTraining& training);

struct CharCorpus {
  data::Tokenizer tokenizer;
  std::vector<int> train_ids, val_ids;
  std::string source;
  data::DroppedUnknown dropped;  // validation characters not in the training text
};
// The text as characters, read before anything runs: a bad --data or --val, or a text too short
// for --batch and --block, fails at once. --quick keeps a small part of it.
CharCorpus load_char_corpus(const std::string& lesson, const CommonFlags& flags, const TextFlags& text, int64_t block);

// The mean cross-entropy over up to `max_windows` consecutive windows of `block` tokens of the
// stream, each predicting the token after every position; in eval mode, without a graph.
double stream_loss(models::GPT& model, const std::vector<int>& ids, int64_t block, int64_t batch, int64_t max_windows);

struct GPTTrainingReport {
  double train_loss = 0, val_loss = 0;  // nats per character: the mean since the last evaluation, and validation
  Series train_curve{"train"}, val_curve{"validation"};  // perplexity against step
  int64_t val_windows = 0;             // the validation windows val_loss is over
  double seconds = 0;
};
// Trains `model` for flags.steps steps, evaluating every training.eval_every steps and at the end,
// with a progress line; writes `csv_name` (step, losses, perplexities, lr, tokens/s, gradient norm).
// Leaves the model in eval mode.
GPTTrainingReport train_char_gpt(Run& run, const CommonFlags& flags, models::GPT& model, const CharCorpus& corpus,
                                 const GPTTraining& training, const std::string& csv_name = "metrics.csv");

// The tokenizer's special tokens (<pad>, <bos>, <eos>, <unk>) are no characters of the text: the
// model never saw one as a next character, and whatever probability it gives them is an accident
// of its weights, so samples never draw them.
std::vector<int64_t> special_ids();
// `length` characters sampled after `prompt` at this temperature, decoded with the prompt.
std::string sample_text(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                        int64_t length, float temperature, Generator& gen);

}  // namespace ladder::lessons
