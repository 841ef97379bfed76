#include "lessons/char_gpt/char_gpt.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "data/line_batch.h"
#include "data/text.h"
#include "data/visible_text.h"
#include "models/gpt_text.h"

namespace ladder::lessons {

void GPTTraining::add_to(harness::LessonCli& cli) {
  cli.option("--weight-decay", weight_decay, "AdamW's decoupled weight decay, on the weight matrices only", {0.0f, 1.0f});
  schedule.add_to(cli);
  cli.option("--clip", clip, "the gradient norm each step clips to (0: no clip, as makemore)", harness::non_negative);
  cli.option("--eval-every", eval_every, "steps between validation losses", harness::positive);
}

void GPTTraining::settle(const std::string& lesson, harness::CommonFlags& common) {
  schedule.check(lesson, common.steps);
  if (common.quick) {
    common.steps = std::min<int64_t>(common.steps, 60);
    eval_every = std::min<int64_t>(eval_every, 10);
    schedule.warmup = std::min<int64_t>(schedule.warmup, 10);
  }
}

optim::AdamW GPTTraining::optimizer(models::GPT& model, float lr) const {
  return optim::AdamW(optim::decay_groups(model.named_parameters(), weight_decay), {.lr = lr, .beta2 = 0.99f});
}

harness::Tracker GPTTraining::tracker(harness::Run& run, const harness::CommonFlags& flags, int64_t context, const std::string& csv,
                             const std::string& name) const {
  return harness::Tracker(run, {.steps = flags.steps, .eval_every = eval_every, .figures = {"val_loss", "val_ppl"}, .csv = csv,
                       .unit = "tok", .items_per_step = flags.batch * context, .name = name});
}

void heads_divide_embd(harness::LessonCli& cli, const models::GPTConfig& config) {
  cli.divides("--heads", config.n_head, "--embd", config.n_embd, "each head takes --embd / --heads features; choose --heads dividing --embd");
}

namespace {

// Lines mode: what the files' lines are like, checked against a given context (a line longer than
// it holds is refused with its number); `needed` is the context every line fits, with its start marker.
struct FileLines {
  int64_t lines = 0, empty = 0, needed = 2;  // the lines of --data, the empty ones of both files
};
FileLines check_lines(const std::string& lesson, const harness::TextFlags& text, int64_t context, bool context_given) {
  FileLines all;
  for (const std::string& file : {text.data, text.val}) {
    if (file.empty()) continue;
    const data::LineShape shape = data::line_shape(data::read_text_file(file));
    if (file == text.data) all.lines = shape.lines - shape.empty;
    all.empty += shape.empty;
    if (context_given && shape.longest + 1 > context)
      fail(lesson.c_str(), file, " line ", shape.longest_line, " has ", shape.longest, " characters: with its start marker it needs --context ",
           shape.longest + 1, " or more; give that, or leave --context out to fit the longest line");
    all.needed = std::max(all.needed, shape.longest + 1);
  }
  return all;
}

}  // namespace

data::CharCorpus load_char_corpus(const std::string& lesson, const harness::CommonFlags& flags, const harness::TextFlags& text,
                                  int64_t& context, bool context_given) {
  FileLines file_lines;
  if (text.lines) file_lines = check_lines(lesson, text, context, context_given);
  if (text.lines && !context_given) context = file_lines.needed;
  data::CharCorpus c = data::load_char_corpus({.data = text.data, .val = text.val, .lines = text.lines, .data_lines = file_lines.lines,
                                               .empty_lines = file_lines.empty, .seed = flags.seed, .small = flags.quick});
  if (text.lines) return c;
  harness::check_windows_fit(lesson, c.train_ids, "the training text", flags.batch, context,
                             "give a smaller --batch or --context, or a longer --data");
  harness::check_windows_fit(lesson, c.val_ids, "the validation text", 1, context, "give a smaller --context or a longer --val");
  return c;
}

std::vector<double> validation_figures(models::GPT& model, const data::CharCorpus& corpus) {
  const double loss = models::validation_loss(model, corpus).mean();
  return {loss, std::exp(loss)};
}

std::string training_extent(const data::CharCorpus& corpus) {
  return corpus.lines ? cat(corpus.train_lines.size(), " training lines") : cat(corpus.train_ids.size(), " training characters");
}

std::string validation_extent(const data::CharCorpus& corpus, int64_t context) {
  if (corpus.lines) return cat("every one of the ", nn::with_commas(static_cast<int64_t>(corpus.val_lines.size())), " validation lines");
  const auto n = static_cast<int64_t>(corpus.val_ids.size());
  return cat("every one of the ", nn::with_commas((n - 1 + context - 1) / context), " windows of ", context, " characters");
}

std::vector<int> prompt_ids(const std::string& lesson, const data::Tokenizer& tokenizer, const std::string& prompt) {
  if (prompt.empty()) {
    const int newline = tokenizer.id("\n");
    const auto first_character = static_cast<int>(tokenizer.special_ids().size());  // the specials come first
    return {newline != tokenizer.unk() ? newline : first_character};
  }
  std::string unknown;
  for (const std::string& piece : tokenizer.split(prompt))
    if (tokenizer.id(piece) == tokenizer.unk() && unknown.find(piece) == std::string::npos) unknown += piece;
  if (!unknown.empty())
    fail(lesson.c_str(), "--prompt '", data::visible(prompt), "' has characters the model's vocabulary lacks: '", data::visible(unknown),
         "'; write the prompt with characters of the training text");
  return tokenizer.encode(prompt);
}

std::string line_samples(models::GPT& model, const data::CharCorpus& corpus, const std::vector<int>& prompt, int64_t count,
                         float temperature, Generator& gen) {
  const std::set<std::vector<int>> seen(corpus.train_lines.begin(), corpus.train_lines.end());
  int64_t in_training = 0, unended = 0;
  std::string text;
  for (const models::SampledLine& line : models::sample_lines(model, corpus.tokenizer, prompt, count, temperature, gen)) {
    in_training += seen.count(line.ids) > 0, unended += !line.ended;
    text += corpus.tokenizer.decode(line.ids) + "\n";
  }
  return cat(text, in_training, " of ", count, " are lines of the training text",
             unended ? cat("; ", unended, " filled the context without an end marker") : "");
}

}  // namespace ladder::lessons
