#include "lessons/common/char_gpt.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "lessons/common/progress.h"
#include "optim/adam.h"
#include "optim/schedule.h"

namespace ladder::lessons {

void add_gpt_training_options(LessonCli& cli, GPTTraining& training) {
  cli.option("--weight-decay", training.weight_decay, "AdamW's decoupled weight decay, on the weight matrices only",
             {0.0f, 1.0f});
  cli.option("--warmup", training.warmup, "steps of linear learning-rate warmup before the cosine decay", non_negative);
  cli.option("--eval-every", training.eval_every, "steps between validation losses", positive);
}

void settle_gpt_training(const std::string& lesson, CommonFlags& common, GPTTraining& training) {
  if (training.warmup >= common.steps)
    fail(lesson.c_str(), "--warmup ", training.warmup, " leaves no step of --steps ", common.steps,
         " for the cosine decay; give a smaller --warmup");
  if (common.quick) {
    common.steps = std::min<int64_t>(common.steps, 60);
    training.eval_every = std::min<int64_t>(training.eval_every, 10);
    training.warmup = std::min<int64_t>(training.warmup, 10);
  }
}

CharCorpus load_char_corpus(const std::string& lesson, const CommonFlags& flags, const TextFlags& text, int64_t block) {
  data::TextData lines = data::load_text({.data = text.data, .val = text.val, .lines = false, .seed = flags.seed});
  if (flags.quick) data::keep_first(lines, 250, 60);
  CharCorpus c{data::char_tokenizer(lines, false), {}, {}, lines.train_source, {}};
  data::EncodedText ids = data::encode_text(lines, c.tokenizer, false);
  c.dropped = data::drop_unknown(ids.val);
  c.train_ids = std::move(ids.train[0]);
  c.val_ids = std::move(ids.val[0]);
  check_windows_fit(lesson, c.train_ids, "the training text", flags.batch, block,
                    "give a smaller --batch or --block, or a longer --data");
  check_windows_fit(lesson, c.val_ids, "the validation text", 1, block, "give a smaller --block or a longer --val");
  return c;
}

double stream_loss(models::GPT& model, const std::vector<int>& ids, int64_t block, int64_t batch, int64_t max_windows) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const int64_t windows = std::min<int64_t>(max_windows, (static_cast<int64_t>(ids.size()) - 1) / block);
  double total = 0;
  for (int64_t first = 0; first < windows; first += batch) {
    const int64_t rows = std::min(batch, windows - first);
    std::vector<float> x, y;
    for (int64_t r = 0; r < rows; ++r) {
      const auto start = ids.begin() + (first + r) * block;
      x.insert(x.end(), start, start + block);
      y.insert(y.end(), start + 1, start + block + 1);
    }
    const Tensor loss = cross_entropy(model.forward(tensor(x, {rows, block})), tensor(y, {rows, block}));
    total += loss.item() * static_cast<double>(rows);
  }
  return total / static_cast<double>(windows);
}

GPTTrainingReport train_char_gpt(Run& run, const CommonFlags& flags, models::GPT& model, const CharCorpus& corpus,
                                 const GPTTraining& training, const std::string& csv_name) {
  const int64_t block = model.config().block_size;
  const int64_t eval_windows = flags.quick ? 8 : 48;
  // nanoGPT's betas for its character models: beta2 0.99, as the batches are small and the steps few.
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), training.weight_decay),
                     {.lr = flags.lr, .beta2 = 0.99f});
  const optim::Schedule schedule = optim::cosine_lr(flags.lr, training.warmup, flags.steps, flags.lr / 10);
  const data::StreamBatcher batcher(corpus.train_ids, block);
  Generator gen(flags.seed + 1);

  CsvWriter metrics(run.file(csv_name),
                    {"step", "train_loss", "val_loss", "train_ppl", "val_ppl", "lr", "tokens_per_s", "grad_norm"});
  Progress progress(flags.steps, "tok", /*show_ppl=*/true);
  const auto start = std::chrono::steady_clock::now();
  GPTTrainingReport report;
  report.val_windows = std::min<int64_t>(eval_windows, (static_cast<int64_t>(corpus.val_ids.size()) - 1) / block);
  double recent = 0;
  int64_t recent_steps = 0;
  model.train();
  for (int64_t step = 1; step <= flags.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const data::Batch b = batcher.sample(flags.batch, gen);  // x, y (B,T)
    const Tensor loss = cross_entropy(model.forward(b.x), b.y);
    adamw.zero_grad();
    nn::with_auxiliary_loss(model, loss).backward();  // + what the layers add (vq: the commitment loss)
    const float norm = optim::clip_grad_norm(model.parameters(), 1.0f);
    adamw.step();
    model.after_optimizer_step();  // the updates outside the optimiser (vq: the codebook's EMA step)
    const double value = loss.item();
    run.check_loss(step, value, LossKind::cross_entropy);
    recent += value, ++recent_steps;
    progress.update(step, value, step * flags.batch * block);
    if (step % training.eval_every != 0 && step != flags.steps) continue;
    report.train_loss = recent / static_cast<double>(recent_steps);
    recent = 0, recent_steps = 0;
    report.val_loss = stream_loss(model, corpus.val_ids, block, flags.batch, eval_windows);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double tokens_per_s = static_cast<double>(step * flags.batch * block) / report.seconds;
    metrics.row({static_cast<double>(step), report.train_loss, report.val_loss, std::exp(report.train_loss),
                 std::exp(report.val_loss), adamw.lr(), tokens_per_s, norm});
    const std::pair<Series*, double> points[] = {{&report.train_curve, report.train_loss},
                                                 {&report.val_curve, report.val_loss}};
    for (const auto& [curve, loss] : points) {
      curve->x.push_back(static_cast<double>(step));
      curve->y.push_back(std::exp(loss));
    }
    if (training.after_evaluation) {
      nn::EvalModeGuard eval(model);
      training.after_evaluation(model, step);
    }
  }
  progress.finish();
  model.eval();
  return report;
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
