#include "lessons/char_gpt/char_gpt.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/visible_text.h"

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

void check_gpt_shape(const std::string& lesson, const models::GPTConfig& config) {
  if (config.n_embd % config.n_head != 0)
    fail(lesson.c_str(), "--heads ", config.n_head, " does not divide --embd ", config.n_embd,
         "; each head takes --embd / --heads features: choose --heads dividing --embd");
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

CharCorpus load_char_corpus(const std::string& lesson, const harness::CommonFlags& flags, const harness::TextFlags& text, int64_t context,
                            bool context_given) {
  FileLines file_lines;
  if (text.lines) file_lines = check_lines(lesson, text, context, context_given);
  if (text.lines && !context_given) context = file_lines.needed;
  // Lines hold out min(1000, 10%) of them, as makemore does; a stream holds out 10% of its blocks.
  const float val_fraction = text.lines ? std::min(0.1f, 1000.0f / static_cast<float>(std::max<int64_t>(file_lines.lines, 1))) : 0.1f;
  data::TextData sides = data::load_text({.data = text.data, .val = text.val, .lines = text.lines,
                                          .keep_empty_lines = !text.lines, .val_fraction = val_fraction, .seed = flags.seed});
  if (flags.quick) data::keep_first(sides, 250, 60);
  // A stream's vocabulary is its characters alone, as nanoGPT's; lines add the markers that frame them.
  const std::vector<std::string> specials = text.lines ? std::vector<std::string>{"<bos>", "<eos>"} : std::vector<std::string>{};
  CharCorpus c{.tokenizer = data::char_tokenizer(sides, text.lines, specials), .lines = text.lines, .source = sides.train_source,
               .empty_lines = file_lines.empty, .context = context};
  data::EncodedText ids = data::encode_text(sides, c.tokenizer, text.lines);
  c.dropped = data::drop_unknown(ids.val, c.tokenizer.unk());
  if (text.lines) {
    c.train_lines = std::move(ids.train);
    c.val_lines = std::move(ids.val);
    return c;
  }
  c.train_ids = std::move(ids.train[0]);
  c.val_ids = std::move(ids.val[0]);
  harness::check_windows_fit(lesson, c.train_ids, "the training text", flags.batch, context,
                    "give a smaller --batch or --context, or a longer --data");
  harness::check_windows_fit(lesson, c.val_ids, "the validation text", 1, context, "give a smaller --context or a longer --val");
  return c;
}

TrainingBatches::TrainingBatches(const CharCorpus& corpus, int64_t context) {
  if (corpus.lines) lines_.emplace(corpus.train_lines, context, data::line_markers(corpus.tokenizer));
  else windows_.emplace(corpus.train_ids, context);
}

data::Batch TrainingBatches::sample(int64_t batch, Generator& gen) const {
  return lines_ ? lines_->sample(batch, gen) : windows_->sample(batch, gen);
}

namespace {

// The targets of y that are not data::kNoAnswer.
int64_t targets_of(const Tensor& y) {
  const std::vector<float> all = y.to_vector();
  return std::count_if(all.begin(), all.end(), [](float t) { return t != static_cast<float>(data::kNoAnswer); });
}

// The summed cross-entropy of a batch over its targets, and their number.
std::pair<double, int64_t> summed_loss(models::GPT& model, const data::Batch& batch) {
  const int64_t targets = targets_of(batch.y);
  return {model.loss(batch).item() * static_cast<double>(targets), targets};
}

constexpr int64_t kEvaluationRows = 64;  // rows per forward when scoring: the result does not depend on it

}  // namespace

SummedLoss stream_loss(models::GPT& model, const std::vector<int>& ids, int64_t context, int64_t batch, Share share) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const auto n = static_cast<int64_t>(ids.size());
  std::vector<int64_t> windows;  // this share's, of every window (the last one possibly shorter)
  for (int64_t w = share.index; w < (n - 1 + context - 1) / context; w += share.of) windows.push_back(w);
  SummedLoss summed;
  for (size_t first = 0; first < windows.size(); first += static_cast<size_t>(batch)) {
    const auto rows = static_cast<int64_t>(std::min(windows.size() - first, static_cast<size_t>(batch)));
    std::vector<float> x, y;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t scored_from = windows[first + static_cast<size_t>(r)] * context;  // the targets before it belong to earlier windows
      const int64_t start = std::min(scored_from, n - 1 - context);                   // a short last window reads back instead
      for (int64_t t = start; t < start + context; ++t) {
        x.push_back(static_cast<float>(ids[static_cast<size_t>(t)]));
        y.push_back(t >= scored_from ? static_cast<float>(ids[static_cast<size_t>(t + 1)]) : static_cast<float>(data::kNoAnswer));
      }
    }
    const auto [sum, count] = summed_loss(model, {tensor(x, {rows, context}), tensor(y, {rows, context})});
    summed.total += sum, summed.targets += count;
  }
  return summed;
}

SummedLoss lines_loss(models::GPT& model, const std::vector<std::vector<int>>& lines, int64_t context, int64_t batch,
                      data::LineMarkers markers, Share share) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  std::vector<std::vector<int>> mine;  // this share's lines
  for (auto i = static_cast<size_t>(share.index); i < lines.size(); i += static_cast<size_t>(share.of)) mine.push_back(lines[i]);
  SummedLoss summed;
  for (size_t first = 0; first < mine.size(); first += static_cast<size_t>(batch)) {
    const std::vector<std::vector<int>> some(mine.begin() + static_cast<std::ptrdiff_t>(first),
                                             mine.begin() + static_cast<std::ptrdiff_t>(std::min(mine.size(), first + static_cast<size_t>(batch))));
    const auto [sum, count] = summed_loss(model, data::frame_lines(some, context, markers));
    summed.total += sum, summed.targets += count;
  }
  return summed;
}

SummedLoss validation_loss(models::GPT& model, const CharCorpus& corpus, Share share) {
  const int64_t context = model.config().block_size;
  return corpus.lines ? lines_loss(model, corpus.val_lines, context, kEvaluationRows, data::line_markers(corpus.tokenizer), share)
                      : stream_loss(model, corpus.val_ids, context, kEvaluationRows, share);
}

BatchShare share_of(const data::Batch& batch, const dist::Shard& shard) {
  data::Batch rows = dist::take_shard(batch, shard);
  const float share = static_cast<float>(targets_of(rows.y)) / static_cast<float>(targets_of(batch.y));  // rows / batch for a stream, to the bit
  return {std::move(rows), share};
}

double split_validation_loss(models::GPT& model, const CharCorpus& corpus, Share share,
                             const std::function<double(double)>& sum_over_processes) {
  const SummedLoss mine = validation_loss(model, corpus, share);
  return sum_over_processes(mine.total) / sum_over_processes(static_cast<double>(mine.targets));
}

std::vector<double> validation_figures(models::GPT& model, const CharCorpus& corpus, const harness::CommonFlags&) {
  const double loss = validation_loss(model, corpus).mean();
  return {loss, std::exp(loss)};
}

std::string training_extent(const CharCorpus& corpus) {
  return corpus.lines ? cat(corpus.train_lines.size(), " training lines") : cat(corpus.train_ids.size(), " training characters");
}

std::string validation_extent(const CharCorpus& corpus, int64_t context) {
  if (corpus.lines) return cat("every one of the ", nn::with_commas(static_cast<int64_t>(corpus.val_lines.size())), " validation lines");
  const auto n = static_cast<int64_t>(corpus.val_ids.size());
  return cat("every one of the ", nn::with_commas((n - 1 + context - 1) / context), " windows of ", context, " characters");
}

std::vector<int64_t> never_sampled(const data::Tokenizer& tokenizer, bool lines) {
  std::vector<int64_t> ids = tokenizer.special_ids();
  if (lines) std::erase(ids, tokenizer.eos());
  return ids;
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

std::string sample_text(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                        int64_t length, float temperature, Generator& gen) {
  const Tensor ids = tensor(std::vector<float>(prompt.begin(), prompt.end()), {1, static_cast<int64_t>(prompt.size())});
  const std::vector<float> out =
      model.generate(ids, length, {.temperature = temperature, .never_sample = never_sampled(tokenizer)}, gen).to_vector();
  std::string text = tokenizer.decode(std::vector<int>(out.begin(), out.end()));
  text.erase(text.find_last_not_of(" \t\r\n") + 1);  // a cold sample can end in hundreds of spaces
  return text;
}

std::vector<SampledLine> sample_lines(models::GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                                      int64_t count, float temperature, Generator& gen) {
  const data::LineMarkers markers = data::line_markers(tokenizer);
  const int64_t context = model.config().block_size, start = 1 + static_cast<int64_t>(prompt.size());
  if (start >= context)
    fail("sample_lines", "a prompt of ", prompt.size(), " characters leaves no room in a context of ", context);
  std::vector<float> first;
  for (int64_t r = 0; r < count; ++r) {
    first.push_back(static_cast<float>(markers.bos));
    first.insert(first.end(), prompt.begin(), prompt.end());
  }
  // Every row runs to the full context, as makemore samples; each is cut at its first <eos>.
  const Tensor out = model.generate(tensor(first, {count, start}), context - start,
                                    {.temperature = temperature, .never_sample = never_sampled(tokenizer, /*lines=*/true)}, gen);  // (count, context)
  std::vector<SampledLine> lines(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) {
    SampledLine& line = lines[static_cast<size_t>(r)];
    line.ended = false;
    for (int64_t t = 1; t < context && !line.ended; ++t) {
      const int id = static_cast<int>(out.data()[r * context + t]);
      if (id == markers.eos) line.ended = true;
      else line.ids.push_back(id);
    }
  }
  return lines;
}

std::string line_samples(models::GPT& model, const CharCorpus& corpus, const std::vector<int>& prompt, int64_t count,
                         float temperature, Generator& gen) {
  const std::set<std::vector<int>> seen(corpus.train_lines.begin(), corpus.train_lines.end());
  int64_t in_training = 0, unended = 0;
  std::string text;
  for (const SampledLine& line : sample_lines(model, corpus.tokenizer, prompt, count, temperature, gen)) {
    in_training += seen.count(line.ids) > 0, unended += !line.ended;
    text += corpus.tokenizer.decode(line.ids) + "\n";
  }
  return cat(text, in_training, " of ", count, " are lines of the training text",
             unended ? cat("; ", unended, " filled the context without an end marker") : "");
}

}  // namespace ladder::lessons
