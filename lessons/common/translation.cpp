#include "lessons/common/translation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/dates.h"
#include "models/bleu.h"
#include "models/decoding.h"

namespace ladder::lessons {

namespace {

constexpr int64_t kEvalBatch = 256;  // pairs per batch when scoring or translating without a graph

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every `size` consecutive pairs, the last batch shorter.
template <class Body>
void for_each_batch(const std::vector<data::IdPair>& pairs, size_t size, const Body& body) {
  for (size_t begin = 0; begin < pairs.size(); begin += size) {
    const std::vector<data::IdPair> chunk(pairs.begin() + static_cast<std::ptrdiff_t>(begin),
                                          pairs.begin() + static_cast<std::ptrdiff_t>(std::min(pairs.size(), begin + size)));
    body(chunk);
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

}  // namespace

void add_translation_options(LessonCli& cli, TranslationFlags& flags) {
  cli.option("--data", flags.data, "a pairs file, source<TAB>target a line (default: the generated date task)");
  cli.option("--val", flags.val, "validation pairs for --data (default: held out from --data)");
  cli.option("--level", flags.level, "with --data: word or char tokens");
  cli.option("--max-len", flags.max_len, "with --data: drop pairs with more tokens on a side (0: keep all)",
             lessons::non_negative);
  cli.option("--pad-words", flags.pad_words, "date task: up to this many filler words around each date (long sources)",
             {0, 500});
  cli.option("--pairs", flags.pairs, "date task: training pairs", {1, 500000});
}

void add_model_options(LessonCli& cli, models::Seq2SeqConfig& config) {
  cli.option("--embed", config.embed, "embedding size", lessons::positive);
  cli.option("--hidden", config.hidden, "GRU hidden units", lessons::positive);
  cli.option("--layers", config.layers, "GRU layers", {1, 8});
  cli.option("--dropout", config.dropout, "dropout between the GRU layers in training", {0.0f, 0.9f});
}

TranslationTask load_translation_task(const TranslationFlags& flags, const CommonFlags& common, const std::string& lesson) {
  data::PairSplits splits = load_splits(flags, common, lesson);
  if (common.quick && !flags.data.empty()) {  // a pairs file: a small part of it
    splits.train.resize(std::min<size_t>(splits.train.size(), 2000));
    splits.val.resize(std::min<size_t>(splits.val.size(), 200));
    splits.test.resize(std::min<size_t>(splits.test.size(), 200));
  }
  if (static_cast<int64_t>(splits.train.size()) < common.batch)
    fail(lesson.c_str(), "--batch ", common.batch, " is more than the ", splits.train.size(), " training pairs; give a smaller --batch");
  if (splits.val.empty() || splits.test.empty())
    fail(lesson.c_str(), "the validation and test parts must not be empty (", splits.val.size(), " and ", splits.test.size(),
         " pairs); give more pairs");
  const data::PairLevel level =
      flags.data.empty() || flags.level == "char" ? data::PairLevel::chars : data::PairLevel::word;
  TranslationTask task{.description = splits.description, .tokenizers = data::pair_tokenizers(splits.train, level, level)};
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
  return task;
}

double translation_loss(models::EncoderDecoder& model, const std::vector<data::IdPair>& pairs, int64_t source_width) {
  NoGradGuard no_grad;
  double total = 0, tokens = 0;
  for_each_batch(pairs, kEvalBatch, [&](const std::vector<data::IdPair>& chunk) {
    const data::Seq2SeqBatch b = data::pad_pairs(chunk, source_width);
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
  const double loss = translation_loss(model, task.val, task.source_width);
  return {loss, std::exp(loss)};
}

Translations translate(nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task,
                       const std::vector<data::IdPair>& pairs, int64_t beam) {
  module.eval();
  const auto start = std::chrono::steady_clock::now();
  const models::DecodeOptions options{.max_len = task.longest_target + 1};  // the <eos> included
  Translations out;
  out.outputs.reserve(pairs.size());
  for_each_batch(pairs, beam == 0 ? kEvalBatch : 1, [&](const std::vector<data::IdPair>& chunk) {
    const data::Seq2SeqBatch b = data::pad_pairs(chunk, task.source_width);
    if (beam == 0) {
      for (std::vector<int>& tokens : models::greedy_decode(model, b.src, b.src_mask, options)) out.outputs.push_back(std::move(tokens));
    } else {
      out.outputs.push_back(models::beam_search(model, b.src, b.src_mask, beam, 0.75f, options).front().tokens);
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

Series exact_match_by_length(const Translations& translations, const std::vector<data::IdPair>& pairs,
                             const std::string& name, int bins) {
  std::vector<size_t> order(pairs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pairs[a].first.size() < pairs[b].first.size(); });
  Series series{name, {}, {}};
  const size_t n = order.size(), parts = std::min(n, static_cast<size_t>(bins));
  for (size_t bin = 0; bin < parts; ++bin) {
    double length = 0, exact = 0;
    const size_t begin = bin * n / parts, end = (bin + 1) * n / parts;
    for (size_t k = begin; k < end; ++k) {
      length += static_cast<double>(pairs[order[k]].first.size());
      exact += translations.outputs[order[k]] == pairs[order[k]].second;
    }
    series.x.push_back(length / static_cast<double>(end - begin));
    series.y.push_back(exact / static_cast<double>(end - begin));
  }
  return series;
}

std::optional<Series> other_run_by_length(const std::string& folder, const LessonCli& cli, const std::string& name,
                                          std::string& why_not) {
  const std::filesystem::path summary_path = std::filesystem::path(folder) / "summary.json",
                              csv_path = std::filesystem::path(folder) / "exact_match_by_length.csv";
  std::ifstream summary_file(summary_path), csv(csv_path);
  if (!summary_file || !csv) {
    why_not = cat("no finished run in ", folder);
    return std::nullopt;
  }
  const nlohmann::json summary = nlohmann::json::parse(summary_file, nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object() || !summary.contains("flags")) {
    why_not = cat(summary_path.string(), " is not a lesson's summary");
    return std::nullopt;
  }
  const nlohmann::json ours = cli.flags_json();
  for (const char* flag : {"data", "val", "level", "max-len", "pad-words", "pairs", "seed", "quick"})
    if (summary["flags"].value(flag, nlohmann::json()) != ours.value(flag, nlohmann::json())) {
      why_not = cat("the run in ", folder, " translated another task (its --", flag, " differs)");
      return std::nullopt;
    }
  Series series{name, {}, {}};
  std::string line;
  std::getline(csv, line);  // the header
  for (double x, y; std::getline(csv, line);) {
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream cells(line);
    if (!(cells >> x >> y)) {
      why_not = cat(csv_path.string(), " has a line that is not two numbers: '", line, "'");
      return std::nullopt;
    }
    series.x.push_back(x), series.y.push_back(y);
  }
  return series;
}

void print_task(const TranslationTask& task) {
  std::printf("data: %s\n  %zu training, %zu validation, %zu test pairs; vocabularies %lld (source) and %lld (target)\n",
              task.description.c_str(), task.train.size(), task.val.size(), task.test.size(),
              static_cast<long long>(task.tokenizers.source.vocab_size()),
              static_cast<long long>(task.tokenizers.target.vocab_size()));
  if (task.dropped > 0) std::printf("  %lld pairs longer than --max-len left out\n", static_cast<long long>(task.dropped));
}

DecoderComparison compare_decoders(Run& run, nn::Module& module, models::EncoderDecoder& model, const TranslationTask& task) {
  DecoderComparison out{translate(module, model, task, task.test, 0), {}, {"seconds", {}, {}}, {}};
  out.greedy_scores = score(out.greedy, task.test);
  std::printf("%-10s %12s %8s %10s\n", "decoder", "exact match", "BLEU", "seconds");
  std::printf("%-10s %12.3f %8.3f %10.2f\n", "greedy", out.greedy_scores.exact_match, out.greedy_scores.bleu,
              out.greedy.seconds);
  Series bleu{"BLEU", {}, {}}, exact{"exact match", {}, {}};
  Translations beam4;
  for (const int64_t width : kBeamWidths) {
    Translations beam = translate(module, model, task, task.test, width);
    const TranslationScores s = score(beam, task.test);
    std::printf("beam %-5lld %12.3f %8.3f %10.2f\n", static_cast<long long>(width), s.exact_match, s.bleu, beam.seconds);
    for (Series* series : {&bleu, &exact, &out.seconds}) series->x.push_back(static_cast<double>(width));
    bleu.y.push_back(s.bleu), exact.y.push_back(s.exact_match), out.seconds.y.push_back(beam.seconds);
    out.bleu_by_width["test_bleu_beam" + std::to_string(width)] = s.bleu;
    if (width == 4) beam4 = std::move(beam);
  }
  std::printf("\nexamples (ok: exactly the target):\n");
  print_examples(task, {{"greedy", out.greedy}, {"beam 4", beam4}}, 6);
  run.wrote(save_line_chart(run.path("beam_search"), {"Test scores against beam width", "beam width", "score", {exact, bleu}}));
  return out;
}

void report_exact_match_by_length(Run& run, const LessonCli& cli, const TranslationTask& task, const Translations& greedy,
                                  const std::string& name, const std::optional<OtherRun>& other) {
  const Series by_length = exact_match_by_length(greedy, task.test, name);
  CsvWriter csv(run.file("exact_match_by_length.csv"), {"source_tokens", "exact_match"});
  for (size_t i = 0; i < by_length.x.size(); ++i) {
    std::printf("  sources of %5.1f tokens on average: %.3f\n", by_length.x[i], by_length.y[i]);
    csv.row({by_length.x[i], by_length.y[i]});
  }
  std::vector<Series> curves = {by_length};
  if (other) {
    std::string why_not;
    if (auto theirs = other_run_by_length(other->folder, cli, other->name, why_not)) {
      std::printf("beside %s's run in %s\n", other->lesson.c_str(), other->folder.c_str());
      curves.push_back(*theirs);
    } else {
      std::printf("%s is not beside it: %s. Run %s with the same task flags first.\n", other->lesson.c_str(),
                  why_not.c_str(), other->lesson.c_str());
    }
  }
  run.wrote(save_line_chart(run.path("exact_match_by_length"),
                            {"Greedy exact match by source length", "mean source length of a sixth of the test pairs (tokens)",
                             "exact match", curves}));
}

TranslationSummary translation_summary(const Tracker& training, const DecoderComparison& decoders) {
  const double val_loss = training.last("val_loss");
  TranslationSummary out{{{"train_loss", training.train_loss()}, {"val_loss", val_loss}, {"val_ppl", std::exp(val_loss)},
                          {"test_exact_match", decoders.greedy_scores.exact_match}, {"test_bleu", decoders.greedy_scores.bleu}},
                         {{"train_loss", "mean training loss of the last steps, nats per target token"},
                          {"val_loss", "validation pairs, teacher forcing, nats per target token"},
                          {"val_ppl", "exp(val_loss)"},
                          {"test_exact_match", "greedy decoding: share of test outputs equal to the target"},
                          {"test_bleu", "greedy decoding: corpus BLEU-4 over the test set's tokens"}}};
  out.metrics.update(decoders.bleu_by_width);
  for (const int64_t width : kBeamWidths)
    out.notes["test_bleu_beam" + std::to_string(width)] = "beam search of width " + std::to_string(width) + ": corpus BLEU-4";
  return out;
}

void print_examples(const TranslationTask& task, const std::vector<std::pair<std::string, Translations>>& decoders,
                    size_t rows) {
  const data::Tokenizer& target = task.tokenizers.target;
  for (size_t i = 0; i < std::min(rows, task.test_text.size()); ++i) {
    std::printf("  %s\n      %-14s %s\n", task.test_text[i].source.c_str(), "target", task.test_text[i].target.c_str());
    for (const auto& [name, translations] : decoders) {
      const bool exact = translations.outputs[i] == task.test[i].second;
      std::printf("      %-14s %s%s\n", name.c_str(), target.decode(translations.outputs[i]).c_str(), exact ? "   ok" : "");
    }
  }
}

}  // namespace ladder::lessons
