// What the character GPTs of lessons 11, 12, 14 and 16 share, so that runs on the same text and budget
// compare directly: the text as one character stream or as lines, the model's shape checks, how it
// trains (the flags, AdamW's groups, the warmup-then-decay schedule, what the tracker records), its
// loss over the whole validation text, and samples that never draw the tokenizer's special tokens
// (lines: every line until its end marker). Each lesson shows its own training loop
// (optim::train_step): the model's auxiliary loss and after_optimizer_step() go through it, so vq
// attention's commitment loss and EMA codebook train with no code of their own.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/batcher.h"
#include "data/line_batch.h"
#include "data/text.h"
#include "data/tokenizer.h"
#include "dist/data_parallel.h"
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

// After parse(): refuses --heads that does not divide --embd.
void check_gpt_shape(const std::string& lesson, const models::GPTConfig& config);

struct CharCorpus {
  data::Tokenizer tokenizer;  // the text's characters; with lines, <bos> and <eos> first
  bool lines = false;
  std::vector<int> train_ids, val_ids;                   // a stream: the text as it is, empty lines too
  std::vector<std::vector<int>> train_lines, val_lines;  // lines: one sequence per line, without markers
  std::string source;
  data::DroppedUnknown dropped;  // validation characters not in the training text
  int64_t empty_lines = 0;       // lines: the empty lines of the files, skipped
  int64_t context = 0;           // the model's: the one given, or with lines and none given, the longest line + 1
};
// The text as characters, read before anything runs: a bad --data or --val, or a text too short
// for --batch and --context, fails at once. --quick keeps a small part of it. In lines mode
// `context` holds each line with its start marker: when it was given (`context_given`) a longer
// line is refused with its number, else the context becomes the longest line + 1 (as makemore's).
CharCorpus load_char_corpus(const std::string& lesson, const harness::CommonFlags& flags, const harness::TextFlags& text, int64_t context,
                            bool context_given = true);

// What a training step reads: `batch` random windows of the stream, or `batch` random lines framed
// and padded (data/line_batch.h), with the tokenizer's markers.
class TrainingBatches {
 public:
  TrainingBatches(const CharCorpus& corpus, int64_t context);
  data::Batch sample(int64_t batch, Generator& gen) const;  // x, y (batch, context)

 private:
  std::optional<data::StreamBatcher> windows_;
  std::optional<data::LineBatcher> lines_;
};

// A cross-entropy summed over targets, and their number: shares of one text add up to the whole.
struct SummedLoss {
  double total = 0;
  int64_t targets = 0;
  double mean() const { return total / static_cast<double>(targets); }
};
// The windows or lines a process scores: every `of`-th from the `index`-th (one process: all of them).
struct Share {
  int64_t index = 0, of = 1;
};
// The cross-entropy of the stream, in eval mode and without a graph: consecutive windows of
// `context` tokens, `batch` at a time, each predicting the token after every position; every token
// after the first is predicted once (the last window ends at the stream's end, and predicts only
// the tokens the others left). Summed over the windows of `share`.
SummedLoss stream_loss(models::GPT& model, const std::vector<int>& ids, int64_t context, int64_t batch, Share share = {});
// The cross-entropy of every line of `share`, its end marker counted as a character (as makemore
// counts it), the lines framed with `markers` and padded to `context` (data::frame_lines).
SummedLoss lines_loss(models::GPT& model, const std::vector<std::vector<int>>& lines, int64_t context, int64_t batch,
                      data::LineMarkers markers, Share share = {});
// The summed loss of the share of the whole validation text (stream or lines): processes that
// each score theirs and add the sums get the loss of one process scoring all.
SummedLoss validation_loss(models::GPT& model, const CharCorpus& corpus, Share share = {});
// The loss over the whole validation text of processes that each score their `share` of it;
// `sum_over_processes` adds a number over them all (an all-reduce), and every process must call.
double split_validation_loss(models::GPT& model, const CharCorpus& corpus, Share share,
                             const std::function<double(double)>& sum_over_processes);
// A process's rows of a batch (dist::take_shard) and their share of the batch's loss: their targets
// over the batch's, the weight of their gradient in the average. In a stream every row has as many
// targets, so it is the shard's share of the rows; with --lines a short line has fewer than a long one.
struct BatchShare {
  data::Batch rows;  // x, y (rows,T)
  float share = 0;
};
BatchShare share_of(const data::Batch& batch, const dist::Shard& shard);
// An evaluation of the GPT loops, over the whole validation text: {the loss, its exp, the perplexity}.
std::vector<double> validation_figures(models::GPT& model, const CharCorpus& corpus, const harness::CommonFlags& flags);
// What the model trains on: "1041503 training characters" or "31032 training lines".
std::string training_extent(const CharCorpus& corpus);
// What validation_figures covers: "every one of the 1,734 windows of 64 characters" or "every one of the 3,203 validation lines".
std::string validation_extent(const CharCorpus& corpus, int64_t context);

// The special tokens of the vocabulary (a checkpoint from before the stream had none holds all four)
// are no characters of the text: the model never saw one as a next character, and whatever
// probability it gives them is an accident of its weights, so samples never draw them; lines let
// <eos> be drawn, as it ends each line.
std::vector<int64_t> never_sampled(const data::Tokenizer& tokenizer, bool lines = false);
// The prompt as ids. Every character must be in the vocabulary (an unknown one has no id the model
// learned): fails naming `lesson` otherwise. An empty prompt starts a stream from a newline, or from
// the first character of the vocabulary when the text had none.
std::vector<int> prompt_ids(const std::string& lesson, const data::Tokenizer& tokenizer, const std::string& prompt);
// `length` characters sampled after `prompt` at this temperature, decoded with the prompt, the
// white space it ends in trimmed.
std::string sample_text(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                        int64_t length, float temperature, Generator& gen);
// `count` lines sampled at this temperature, each from <bos> and `prompt` until the model draws
// <eos>; a line that fills the context without it ends there (`ended` false).
struct SampledLine {
  std::vector<int> ids;  // the prompt and what followed, without markers
  bool ended = true;     // closed by <eos>
};
std::vector<SampledLine> sample_lines(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                                      int64_t count, float temperature, Generator& gen);
// sample_lines as text, one line each, then how many are lines of the training text (makemore
// counts them too: a model that only memorised would make nothing new) and how many filled the context.
std::string line_samples(models::GPT& model, const CharCorpus& corpus, const std::vector<int>& prompt, int64_t count,
                         float temperature, Generator& gen);

}  // namespace ladder::lessons
