// Lesson 01: n-gram language models.
//
// Counts every n-gram of the training text, turns the counts into next-token probabilities with
// six estimators (MLE, add-one, add-delta, the simple back-off, a normalised back-off, linear
// interpolation), and measures each by perplexity on held-out text, for orders 1 to 5. Then it
// samples from the best model. The note that goes with it: docs/01_ngram.md.
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "data/text.h"
#include "data/tokenizer.h"
#include "harness/cli.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "models/ngram.h"

using namespace ladder;
using models::Estimator;
using models::Smoothing;

namespace {

constexpr Smoothing kAll[] = {Smoothing::mle, Smoothing::add_one, Smoothing::add_delta, Smoothing::simple_backoff,
                              Smoothing::backoff, Smoothing::interpolation};

struct Corpus {
  data::Tokenizer tokenizer;
  std::vector<std::vector<int>> train, val;  // token ids, one vector per sequence
};

// ---- data: lines (or one stream) of characters or words, as ids ----
Corpus load_corpus(const harness::TextFlags& text, const std::string& level, uint64_t seed, bool quick) {
  data::TextData lines = data::load_text({.data = text.data, .val = text.val, .lines = text.lines, .seed = seed});
  if (quick) data::keep_first(lines, 4000, 400);  // a small slice: enough to see the same shapes in seconds
  data::Tokenizer tokenizer = level == "char" ? data::char_tokenizer(lines, text.lines) : data::Tokenizer::words(lines.train);
  data::EncodedText ids = data::encode_text(lines, tokenizer, text.lines);
  Corpus corpus{tokenizer, std::move(ids.train), std::move(ids.val)};
  int64_t train_tokens = 0, val_tokens = 0, unknown = 0;
  for (const auto& s : corpus.train) train_tokens += static_cast<int64_t>(s.size());
  for (const auto& s : corpus.val)
    for (int id : s) ++val_tokens, unknown += id == data::Tokenizer::kUnk;
  std::printf("data: %s\n  train %zu sequences, %lld %ss; validation %s: %zu sequences, %lld %ss (%.2f%% unseen in training)\n",
              lines.train_source.c_str(), corpus.train.size(), static_cast<long long>(train_tokens), level.c_str(),
              lines.val_source.c_str(), corpus.val.size(), static_cast<long long>(val_tokens), level.c_str(),
              100.0 * static_cast<double>(unknown) / static_cast<double>(std::max<int64_t>(val_tokens, 1)));
  std::printf("  vocabulary: %lld tokens (4 special)\n", static_cast<long long>(tokenizer.vocab_size()));
  return corpus;
}

// ---- the settings an estimator learns from held-out data: delta, or the lambdas ----
struct Tuned {
  Estimator estimator;
  std::vector<std::pair<double, double>> delta_curve;  // (delta, validation perplexity)
};

Tuned tune(const models::NGramCounts& counts, Smoothing smoothing, int order, const Corpus& corpus, double fixed_delta) {
  Tuned t{{smoothing, order}};
  if (smoothing == Smoothing::add_delta) {
    if (fixed_delta > 0) {
      t.estimator.delta = fixed_delta;
    } else {  // the delta with the lowest validation perplexity, over a log-spaced grid
      double best = INFINITY;
      for (int k = -16; k <= 0; ++k) {
        const double delta = std::pow(10.0, k / 4.0);
        const double ppl = models::evaluate(counts, {smoothing, order, delta}, corpus.val).perplexity();
        t.delta_curve.emplace_back(delta, ppl);
        if (ppl < best) best = ppl, t.estimator.delta = delta;
      }
    }
  }
  if (smoothing == Smoothing::interpolation) t.estimator.lambdas = models::fit_lambdas(counts, order, corpus.val);
  return t;
}

struct Score {
  Estimator estimator;
  models::Evaluation train, val;
};

std::string describe(const models::Evaluation& e) {
  char buf[64];
  if (e.zero_probability > 0) std::snprintf(buf, sizeof buf, "inf (%lld zero-p)", static_cast<long long>(e.zero_probability));
  else std::snprintf(buf, sizeof buf, "%.2f", e.perplexity());
  return buf;
}

std::string settings(const Estimator& e) {
  char buf[160] = "";
  if (e.smoothing == Smoothing::add_delta) std::snprintf(buf, sizeof buf, "delta=%.3g", e.delta);
  if (e.smoothing == Smoothing::interpolation) {
    int n = std::snprintf(buf, sizeof buf, "lambdas=");
    for (size_t k = 0; k < e.lambdas.size(); ++k)
      n += std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), "%s%.3f", k ? "/" : "", e.lambdas[k]);
  }
  return buf;
}

void write_samples(harness::Run& run, const models::NGramCounts& counts, const Score& best, const Corpus& corpus,
                   uint64_t seed) {
  Generator gen(seed);
  const std::string path = run.file("samples.txt");
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) fail("01_ngram", "cannot write ", path);
  std::printf("\nsamples from %s, order %d:\n", models::smoothing_name(best.estimator.smoothing), best.estimator.order);
  const bool chars = corpus.tokenizer.is_char_level();
  for (int i = 0; i < 12; ++i) {
    const std::string s = corpus.tokenizer.decode(models::sample(counts, best.estimator, gen, chars ? 60 : 40));
    std::printf("  %s\n", s.c_str());
    std::fprintf(out, "%s\n", s.c_str());
  }
  std::fclose(out);
}

nlohmann::ordered_json lm_metrics(const Score& s) {
  return {{"estimator", models::smoothing_name(s.estimator.smoothing)}, {"order", s.estimator.order},
          {"settings", settings(s.estimator)}, {"train_loss", s.train.nll}, {"val_loss", s.val.nll},
          {"val_ppl", s.val.perplexity()}, {"train_ppl", s.train.perplexity()}};
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("01_ngram",
                           "Lesson 01: n-gram language models: counts, smoothing, back-off, interpolation, perplexity.\n"
                           "(Counting has no training steps: --steps, --lr and --batch do not apply.)",
                           {});
    harness::TextFlags text;
    std::string level = "char", smoothing;
    int order = 0;
    double delta = 0;
    cli.text_options(text, "", /*default_lines=*/true);
    cli.choice("--level", level, "char or word", {"char", "word"});
    cli.option("--order", order, "n-gram order; 0: compare orders 1 to 5", {0, models::kMaxOrder});
    cli.option("--smoothing", smoothing, "mle, add-one, add-delta, simple-backoff, backoff or interp; empty: all");
    cli.option("--delta", delta, "delta for add-delta; 0: the best on validation text", harness::non_negative);
    cli.parse(argc, argv);
    if (text.data.empty())  // the word list for characters, a license text for words (both from Debian)
      text.data = level == "char" ? "/usr/share/dict/american-english" : "/usr/share/common-licenses/GPL-3";
    const std::vector<Smoothing> estimators =
        smoothing.empty() ? std::vector<Smoothing>(std::begin(kAll), std::end(kAll)) : std::vector{models::parse_smoothing(smoothing)};
    const Corpus corpus = load_corpus(text, level, cli.common.seed, cli.common.quick);  // a bad --data fails before the run starts
    harness::Run run(cli);

    const int max_order = order > 0 ? order : (cli.common.quick ? 3 : 5);
    const models::NGramCounts counts(max_order, corpus.train, corpus.tokenizer.vocab_size());
    std::printf("counted every n-gram of orders 1-%d\n", max_order);

    // ---- every estimator at every order: perplexity on training and validation text ----
    harness::CsvWriter metrics(run.file("metrics.csv"),
                               {"order", "estimator", "train_loss", "val_loss", "val_ppl", "train_ppl", "settings"});
    std::vector<Score> scores;
    std::vector<plot::Series> by_order(estimators.size()), delta_curves;
    std::printf("\nperplexity (train / validation):\n%-6s", "order");
    for (Smoothing s : estimators) std::printf(" %24s", models::smoothing_name(s));
    std::printf("\n");
    for (int n = order > 0 ? order : 1; n <= max_order; ++n) {
      std::printf("%-6d", n);
      for (size_t k = 0; k < estimators.size(); ++k) {
        const Tuned tuned = tune(counts, estimators[k], n, corpus, delta);
        const Score s{tuned.estimator, models::evaluate(counts, tuned.estimator, corpus.train),
                      models::evaluate(counts, tuned.estimator, corpus.val)};
        scores.push_back(s);
        std::printf(" %24s", (describe(s.train) + " / " + describe(s.val)).c_str());
        metrics.row({std::to_string(n), models::smoothing_name(s.estimator.smoothing), std::to_string(s.train.nll),
                     std::to_string(s.val.nll), std::to_string(s.val.perplexity()), std::to_string(s.train.perplexity()),
                     settings(s.estimator)});
        by_order[k].name = models::smoothing_name(estimators[k]);
        if (estimators[k] == Smoothing::simple_backoff) by_order[k].name += " (not normalised)";
        by_order[k].x.push_back(n);
        by_order[k].y.push_back(s.val.perplexity());
        if (!tuned.delta_curve.empty()) {
          plot::Series curve{"order " + std::to_string(n)};
          for (const auto& [d, ppl] : tuned.delta_curve) curve.x.push_back(std::log10(d)), curve.y.push_back(ppl);
          delta_curves.push_back(curve);
        }
      }
      std::printf("\n");
    }
    for (const Score& s : scores)
      if (!settings(s.estimator).empty() && s.estimator.order == max_order)
        std::printf("  %s at order %d: %s (chosen on validation text)\n", models::smoothing_name(s.estimator.smoothing),
                    max_order, settings(s.estimator).c_str());

    // ---- the simple back-off is not a distribution: how much mass does it hand out? ----
    for (const Score& s : scores)
      if (s.estimator.smoothing == Smoothing::simple_backoff && s.estimator.order == max_order) {
        const std::vector<std::vector<int>> some(corpus.val.begin(),
                                                 corpus.val.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(corpus.val.size(), 200)));
        std::printf("\nsimple back-off, order %d: its probabilities after a validation history sum to %.3f on average\n"
                    "(a distribution sums to 1), so its perplexity flatters it and is not comparable.\n",
                    max_order, models::mean_total_probability(counts, s.estimator, some));
      }

    // ---- plots ----
    run.wrote(plot::save_line_chart(run.path("val_ppl_by_order"),
                                       {"Validation perplexity against n-gram order", "order", "perplexity (log scale)",
                                        by_order, /*log_y=*/true, /*x_tick=*/1}));
    if (!delta_curves.empty())
      run.wrote(plot::save_line_chart(run.path("add_delta"), {"Add-delta: choosing delta on validation text",
                                                                 "log10(delta)", "validation perplexity (log scale)",
                                                                 delta_curves, /*log_y=*/true}));

    // ---- the best normalised model: samples and the summary ----
    const Score* best = nullptr;
    for (const Score& s : scores)
      if (s.estimator.smoothing != Smoothing::simple_backoff && std::isfinite(s.val.nll) && (!best || s.val.nll < best->val.nll))
        best = &s;
    if (!best) best = &scores.front();  // only MLE or simple back-off was asked for
    std::printf("\nbest: %s, order %d %s: validation perplexity %s, %.4f nats per %s\n",
                models::smoothing_name(best->estimator.smoothing), best->estimator.order, settings(best->estimator).c_str(),
                describe(best->val).c_str(), best->val.nll, level.c_str());
    write_samples(run, counts, *best, corpus, cli.common.seed);
    const std::string per_token = "nats per " + level;
    run.finish(lm_metrics(*best),
               {{"estimator", "the best estimator on validation text (the simple back-off left out: it does not sum to 1)"},
                {"train_loss", per_token + " on the training text"},
                {"val_loss", per_token + " on the validation text"},
                {"val_ppl", "exp(val_loss)"},
                {"train_ppl", "exp(train_loss)"}},
               "docs/01_ngram.md, \"The estimators\"; then exercise 1: --level word --order 2 --smoothing add-delta\n"
               "      --delta 1, then --delta 0.01");
  });
}
