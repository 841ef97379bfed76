#include "lessons/common/translation.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/dates.h"
#include "data/numbers.h"
#include "models/bleu.h"
#include "models/decoding.h"

namespace ladder::lessons {

namespace {

constexpr int64_t kEvalBatch = 256;  // pairs per batch when scoring or translating without a graph

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every pair of `pairs` once, in batches of at most kEvalBatch padded as the task pads: body(indices
// into pairs, the batch). The date task's batches are consecutive pairs; a bucketed task's hold one
// source length each.
template <class Body>
void for_each_batch(const TranslationTask& task, const std::vector<data::IdPair>& pairs, size_t size, const Body& body) {
  std::vector<std::vector<size_t>> batches;
  if (task.bucketed) {
    batches = data::batches_by_source_length(pairs, size);
  } else {
    for (size_t begin = 0; begin < pairs.size(); begin += size) {
      batches.emplace_back(std::min(size, pairs.size() - begin));
      for (size_t k = 0; k < batches.back().size(); ++k) batches.back()[k] = begin + k;
    }
  }
  for (const std::vector<size_t>& indices : batches) {
    std::vector<data::IdPair> chunk;
    for (const size_t i : indices) chunk.push_back(pairs[i]);
    body(indices, task.padded(chunk));
  }
}

data::PairSplits load_splits(const TranslationFlags& flags, const CommonFlags& common, const std::string& lesson) {
  if (flags.data.empty()) {
    if (!flags.val.empty()) fail(lesson.c_str(), "--val goes with --data (the date task makes its own validation pairs)");
    if (flags.level != "word" || flags.max_len != 0)
      fail(lesson.c_str(), "--level and --max-len go with --data (the date task is read character by character)");
    const int64_t held_out = common.quick ? 200 : 1000;
    const int64_t train = common.quick ? std::min<int64_t>(flags.pairs, 2000) : flags.pairs;
    return data::make_date_task(
        {.train = train, .val = held_out, .test = held_out, .pad_words = flags.pad_words, .seed = common.seed});
  }
  if (flags.pad_words != 0 || flags.pairs != TranslationFlags{}.pairs)
    fail(lesson.c_str(), "--pad-words and --pairs shape the date task; they do not apply to --data");
  if (flags.level != "word" && flags.level != "char")
    fail(lesson.c_str(), "--level must be word or char, got '", flags.level, "'");
  return data::load_pairs({.data = flags.data, .val = flags.val,
                           .level = flags.level == "char" ? data::PairLevel::chars : data::PairLevel::word,
                           .max_len = flags.max_len, .batch = common.batch, .seed = common.seed});
}

// The split pairs as a task: tokenizers from the training part, every part as ids, the widths.
TranslationTask make_task(data::PairSplits splits, data::PairTokenizers tokenizers, bool bucketed, const CommonFlags& common,
                          const std::string& lesson) {
  if (static_cast<int64_t>(splits.train.size()) < common.batch)
    fail(lesson.c_str(), "--batch ", common.batch, " is more than the ", splits.train.size(), " training pairs; give a smaller --batch");
  if (splits.val.empty() || splits.test.empty())
    fail(lesson.c_str(), "the validation and test parts must not be empty (", splits.val.size(), " and ", splits.test.size(),
         " pairs); give more pairs");
  TranslationTask task{.description = splits.description, .tokenizers = std::move(tokenizers)};
  task.bucketed = bucketed;
  task.dropped = splits.dropped;
  task.train = data::encode_pairs(splits.train, task.tokenizers);
  task.val = data::encode_pairs(splits.val, task.tokenizers);
  task.test = data::encode_pairs(splits.test, task.tokenizers);
  task.test_text = std::move(splits.test);
  for (const auto* part : {&task.train, &task.val, &task.test})
    for (const auto& [src, tgt] : *part) {
      task.longest_target = std::max(task.longest_target, static_cast<int64_t>(tgt.size()));
      task.source_width = std::max(task.source_width, static_cast<int64_t>(src.size()));
    }
  if (bucketed) task.buckets.emplace(task.train);
  return task;
}

}  // namespace

void add_translation_options(LessonCli& cli, TranslationFlags& flags) {
  cli.option("--data", flags.data, "a pairs file, source<TAB>target a line (default: the generated date task)");
  cli.option("--val", flags.val, "validation pairs for --data (default: held out from --data)");
  cli.option("--level", flags.level, "with --data: word or char tokens");
  cli.option("--max-len", flags.max_len, "with --data: drop pairs with more tokens on a side (0: keep all)",
             lessons::non_negative);
  cli.option("--min-freq", flags.min_freq, "with --data at word level: words seen fewer times in training read as <unk>",
             lessons::positive);
  cli.option("--pad-words", flags.pad_words, "date task: up to this many filler words around each date (long sources)",
             {0, 500});
  cli.option("--pairs", flags.pairs, "date task: training pairs", {1, 500000});
  cli.option("--number-steps", flags.number_steps,
             "the number task's part: training steps (0: skip it; it is skipped with --data)", {0, 1000000});
  cli.option("--max-digits", flags.max_digits, "the number task: numbers of 1 to this many digits",
             {1, data::kMaxNumberDigits});
}

void add_model_options(LessonCli& cli, models::Seq2SeqConfig& config) {
  cli.option("--embed", config.embed, "embedding size", lessons::positive);
  cli.option("--hidden", config.hidden, "GRU hidden units", lessons::positive);
  cli.option("--layers", config.layers, "GRU layers", {1, 8});
  cli.option("--dropout", config.dropout, "dropout between the GRU layers in training", {0.0f, 0.9f});
}

data::Seq2SeqBatch TranslationTask::training_batch(int64_t batch, Generator& gen) const {
  return bucketed ? buckets->sample(batch, gen) : data::sample_pairs(train, batch, gen, source_width);
}

data::Seq2SeqBatch TranslationTask::padded(const std::vector<data::IdPair>& pairs) const {
  return data::pad_pairs(pairs, bucketed ? 0 : source_width);
}

TranslationTask load_translation_task(const TranslationFlags& flags, const CommonFlags& common, const std::string& lesson) {
  if (flags.min_freq != TranslationFlags{}.min_freq && (flags.data.empty() || flags.level == "char"))
    fail(lesson.c_str(), "--min-freq goes with --data at word level (characters are always kept)");
  data::PairSplits splits = load_splits(flags, common, lesson);
  if (common.quick && !flags.data.empty()) {  // a pairs file: a small part of it
    splits.train.resize(std::min<size_t>(splits.train.size(), 2000));
    splits.val.resize(std::min<size_t>(splits.val.size(), 200));
    splits.test.resize(std::min<size_t>(splits.test.size(), 200));
  }
  const bool from_file = !flags.data.empty();
  const data::PairLevel level = !from_file || flags.level == "char" ? data::PairLevel::chars : data::PairLevel::word;
  data::PairTokenizers tokenizers = data::pair_tokenizers(splits.train, level, level, from_file ? flags.min_freq : 1);
  TranslationTask task = make_task(std::move(splits), std::move(tokenizers), /*bucketed=*/from_file, common, lesson);
  task.keep_best = from_file;
  return task;
}

TranslationTask load_number_task(const TranslationFlags& flags, const CommonFlags& common) {
  const int64_t held_out = common.quick ? 200 : 1000;
  data::PairSplits splits = data::make_number_task({.max_digits = static_cast<int>(flags.max_digits),
                                                    .train = common.quick ? 2000 : 20000, .val = held_out,
                                                    .test = held_out, .seed = common.seed});
  data::PairTokenizers tokenizers = data::pair_tokenizers(splits.train, data::PairLevel::word, data::PairLevel::chars);
  return make_task(std::move(splits), std::move(tokenizers), /*bucketed=*/true, common, "the number task");
}

double translation_loss(models::EncoderDecoder& model, const TranslationTask& task, const std::vector<data::IdPair>& pairs) {
  NoGradGuard no_grad;
  double total = 0, tokens = 0;
  for_each_batch(task, pairs, kEvalBatch, [&](const std::vector<size_t>&, const data::Seq2SeqBatch& b) {
    const Tensor logits = model.forward(b.src, b.src_mask, b.tgt_in);
    total += cross_entropy(logits, b.tgt_out, {.ignore_index = data::Tokenizer::kPad, .reduction = Reduction::sum}).item();
    tokens += sum(b.tgt_mask).item();
  });
  return total / tokens;
}

Tracker translation_tracker(Run& run, const CommonFlags& flags, const std::string& name, const std::string& csv) {
  return Tracker(run, {.steps = flags.steps, .eval_every = std::max<int64_t>(1, flags.steps / 20), .figures = {"val_loss", "val_ppl"},
                       .csv = csv, .unit = "pairs", .items_per_step = flags.batch, .name = name});
}

std::vector<double> validation_figures(nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task) {
  module.eval();  // no dropout
  const double loss = translation_loss(model, task, task.val);
  return {loss, std::exp(loss)};
}

void BestWeights::offer(const nn::Module& model, int64_t step, double val_loss) {
  if (!keep_ || (!weights_.empty() && val_loss >= val_loss_)) return;
  NoGradGuard no_grad;
  for (const auto& [name, tensor] : model.state_dict()) weights_[name] = tensor.detach().clone();
  step_ = step, val_loss_ = val_loss;
}

void BestWeights::restore(nn::Module& model) const {
  if (weights_.empty()) return;
  model.load_state_dict(weights_);
  std::printf("kept the weights of step %lld, the lowest validation loss (%.4f)\n", static_cast<long long>(step_), val_loss_);
}

Translations translate(nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task,
                       const std::vector<data::IdPair>& pairs, int64_t beam, float alpha) {
  module.eval();
  const auto start = std::chrono::steady_clock::now();
  const models::DecodeOptions options{.max_len = task.longest_target + 1};  // the <eos> included
  Translations out;
  out.outputs.resize(pairs.size());
  for_each_batch(task, pairs, beam == 0 ? kEvalBatch : 1, [&](const std::vector<size_t>& indices, const data::Seq2SeqBatch& b) {
    if (beam == 0) {
      std::vector<std::vector<int>> outputs = models::greedy_decode(model, b.src, b.src_mask, options);
      for (size_t k = 0; k < indices.size(); ++k) out.outputs[indices[k]] = std::move(outputs[k]);
    } else {
      out.outputs[indices.front()] = models::beam_search(model, b.src, b.src_mask, beam, alpha, options).front().tokens;
    }
  });
  out.seconds = seconds_since(start);
  return out;
}

TranslationScores score(const Translations& translations, const std::vector<data::IdPair>& pairs) {
  std::vector<std::vector<int>> references;
  int64_t exact = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    references.push_back(pairs[i].second);
    exact += translations.outputs[i] == pairs[i].second;
  }
  return {static_cast<double>(exact) / static_cast<double>(pairs.size()),
          models::corpus_bleu(translations.outputs, references).bleu};
}

void print_task(const TranslationTask& task) {
  std::printf("data: %s\n  %zu training, %zu validation, %zu test pairs; vocabularies %lld (source) and %lld (target)\n",
              task.description.c_str(), task.train.size(), task.val.size(), task.test.size(),
              static_cast<long long>(task.tokenizers.source.vocab_size()),
              static_cast<long long>(task.tokenizers.target.vocab_size()));
  if (task.dropped > 0) std::printf("  %lld pairs longer than --max-len left out\n", static_cast<long long>(task.dropped));
  if (task.bucketed)
    std::printf("  batches hold sources of one length (1 to %lld tokens): none is padded\n",
                static_cast<long long>(task.source_width));
}

}  // namespace ladder::lessons
