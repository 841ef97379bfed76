#include "lessons/common/char_gpt.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::lessons {

void GPTTraining::add_to(LessonCli& cli) {
  cli.option("--weight-decay", weight_decay, "AdamW's decoupled weight decay, on the weight matrices only", {0.0f, 1.0f});
  schedule.add_to(cli);
  cli.option("--eval-every", eval_every, "steps between validation losses", positive);
}

void GPTTraining::settle(const std::string& lesson, CommonFlags& common) {
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

Tracker GPTTraining::tracker(Run& run, const CommonFlags& flags, int64_t context, const std::string& csv,
                             const std::string& name) const {
  return Tracker(run, {.steps = flags.steps, .eval_every = eval_every, .figures = {"val_loss", "val_ppl"}, .csv = csv,
                       .unit = "tok", .items_per_step = flags.batch * context, .name = name});
}

void check_gpt_shape(const std::string& lesson, const TextFlags& text, const models::GPTConfig& config) {
  if (text.lines) fail(lesson.c_str(), "a character GPT reads one character stream; --lines does not apply");
  if (config.n_embd % config.n_head != 0)
    fail(lesson.c_str(), "--heads ", config.n_head, " does not divide --embd ", config.n_embd,
         "; each head takes --embd / --heads features: choose --heads dividing --embd");
}

CharCorpus load_char_corpus(const std::string& lesson, const CommonFlags& flags, const TextFlags& text, int64_t context) {
  data::TextData lines = data::load_text({.data = text.data, .val = text.val, .lines = false, .seed = flags.seed});
  if (flags.quick) data::keep_first(lines, 250, 60);
  CharCorpus c{data::char_tokenizer(lines, false), {}, {}, lines.train_source, {}};
  data::EncodedText ids = data::encode_text(lines, c.tokenizer, false);
  c.dropped = data::drop_unknown(ids.val);
  c.train_ids = std::move(ids.train[0]);
  c.val_ids = std::move(ids.val[0]);
  check_windows_fit(lesson, c.train_ids, "the training text", flags.batch, context,
                    "give a smaller --batch or --context, or a longer --data");
  check_windows_fit(lesson, c.val_ids, "the validation text", 1, context, "give a smaller --context or a longer --val");
  return c;
}

double stream_loss(models::GPT& model, const std::vector<int>& ids, int64_t context, int64_t batch, int64_t max_windows) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const int64_t windows = std::min<int64_t>(max_windows, (static_cast<int64_t>(ids.size()) - 1) / context);
  double total = 0;
  for (int64_t first = 0; first < windows; first += batch) {
    const int64_t rows = std::min(batch, windows - first);
    std::vector<float> x, y;
    for (int64_t r = 0; r < rows; ++r) {
      const auto start = ids.begin() + (first + r) * context;
      x.insert(x.end(), start, start + context);
      y.insert(y.end(), start + 1, start + context + 1);
    }
    total += model.loss({tensor(x, {rows, context}), tensor(y, {rows, context})}).item() * static_cast<double>(rows);
  }
  return total / static_cast<double>(windows);
}

int64_t validation_windows(const CharCorpus& corpus, int64_t context, const CommonFlags& flags) {
  return std::min<int64_t>(flags.quick ? 8 : 48, (static_cast<int64_t>(corpus.val_ids.size()) - 1) / context);
}

std::vector<double> validation_figures(models::GPT& model, const CharCorpus& corpus, const CommonFlags& flags) {
  const int64_t context = model.config().block_size;
  const double loss = stream_loss(model, corpus.val_ids, context, flags.batch, validation_windows(corpus, context, flags));
  return {loss, std::exp(loss)};
}

std::vector<int64_t> special_ids() {
  return {data::Tokenizer::kPad, data::Tokenizer::kBos, data::Tokenizer::kEos, data::Tokenizer::kUnk};
}

std::string sample_text(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                        int64_t length, float temperature, Generator& gen) {
  const Tensor ids = tensor(std::vector<float>(prompt.begin(), prompt.end()), {1, static_cast<int64_t>(prompt.size())});
  const std::vector<float> out =
      model.generate(ids, length, {.temperature = temperature, .never_sample = special_ids()}, gen).to_vector();
  return tokenizer.decode(std::vector<int>(out.begin(), out.end()));
}

}  // namespace ladder::lessons
