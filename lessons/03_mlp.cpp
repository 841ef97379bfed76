// Lesson 03: multilayer perceptrons.
//
// Part 1: MLP classifiers on 2-D spirals: how depth, width and the activation change what they
// can draw. Part 2: the MLP language model of Bengio et al. on the characters of words, trained
// with a learning-rate schedule and compared with the n-gram models of lesson 01 on the same
// data and split. The note that goes with it: docs/03_mlp.md.
#include <cmath>
#include <cstdio>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "data/text.h"
#include "data/tokenizer.h"
#include "data/toy2d.h"
#include "harness/cli.h"
#include "lessons/memory/model_memory.h"
#include "plot/plot.h"
#include "plot/regions.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "models/classifier.h"
#include "models/mlp_lm.h"
#include "models/ngram.h"
#include "nn/sequential.h"
#include "optim/adam.h"
#include "optim/schedule.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

double accuracy(nn::Module& model, const data::LabelledBatch& d) {
  NoGradGuard no_grad;
  const Tensor predicted = argmax(model(d.inputs), 1);
  int64_t right = 0;
  for (int64_t i = 0; i < d.labels.numel(); ++i) right += predicted.data()[i] == d.labels.data()[i];
  return static_cast<double>(right) / static_cast<double>(d.labels.numel());
}

// ---- part 1: spirals ----
struct SpiralConfig {
  std::string name;
  std::vector<int64_t> hidden;
  nn::ActivationKind activation;
};

struct SpiralResult {
  std::string best_name;
  double best_acc;
};

SpiralResult spirals(harness::Run& run, bool quick, uint64_t seed) {
  std::printf("== part 1: MLP classifiers on three interleaved spirals ==\n");
  Generator gen(seed);
  const data::Points train_points = data::spirals(100, 3, 0.15f, gen), test_points = data::spirals(100, 3, 0.15f, gen);
  const data::LabelledBatch train_set{train_points.x, train_points.y}, test_set{test_points.x, test_points.y};
  const std::vector<SpiralConfig> configs = {{"linear (no hidden layer)", {}, nn::ActivationKind::relu},
                                             {"1 x 16 relu", {16}, nn::ActivationKind::relu},
                                             {"1 x 64 relu", {64}, nn::ActivationKind::relu},
                                             {"2 x 64 relu", {64, 64}, nn::ActivationKind::relu},
                                             {"3 x 64 relu", {64, 64, 64}, nn::ActivationKind::relu},
                                             {"2 x 64 tanh", {64, 64}, nn::ActivationKind::tanh},
                                             {"2 x 64 gelu", {64, 64}, nn::ActivationKind::gelu}};
  const int64_t steps = quick ? 300 : 1500;
  std::vector<plot::Series> curves;
  std::printf("%-26s %10s %10s %10s\n", "model", "params", "train acc", "test acc");
  double best_acc = -1;
  std::shared_ptr<models::Classifier> best, linear;
  std::string best_name;
  for (const SpiralConfig& c : configs) {
    std::vector<int64_t> sizes = {2};
    sizes.insert(sizes.end(), c.hidden.begin(), c.hidden.end());
    sizes.push_back(3);
    Generator init(seed + 1);
    auto model = std::make_shared<models::Classifier>(nn::mlp(sizes, {.activation = c.activation}, init));
    optim::Adam adam(model->named_parameters(), {.lr = 0.01f});
    harness::Tracker tracker(run, {.steps = steps, .eval_every = 25, .figures = {"test_acc"}, .csv = "",
                                   .loss_kind = harness::LossKind::plain, .name = c.name, .progress = false});
    for (int64_t step = 1; step <= steps; ++step) {
      tracker.step(step, optim::train_step(*model, adam, train_set, 0), adam.lr());  // full batch: 300 points
      if (tracker.evaluation_due(step)) tracker.evaluated(step, {accuracy(*model, test_set)});
    }
    const double test_acc = accuracy(*model, test_set);
    std::printf("%-26s %10lld %10.3f %10.3f\n", c.name.c_str(), static_cast<long long>(model->num_parameters()),
                accuracy(*model, train_set), test_acc);
    curves.push_back(tracker.curve("test_acc"));
    if (c.hidden.empty()) linear = model;
    if (test_acc > best_acc) best_acc = test_acc, best = model, best_name = c.name;  // ties: the smaller model
  }
  run.wrote(plot::save_line_chart(run.path("spirals_accuracy"), {"Spirals: test accuracy while training", "step", "test accuracy", curves}));
  for (auto [stem, model, title] : {std::tuple{"spirals_linear", linear, std::string("Spirals: linear model")},
                                    std::tuple{"spirals_best", best, "Spirals: " + best_name}})
    run.wrote(plot::save_decision_regions(run.path(stem),
                                             plot::decision_regions([&](const Tensor& x) { return argmax((*model)(x), 1); },
                                                                       test_set.inputs, test_set.labels, {"arm 0", "arm 1", "arm 2"},
                                                                       title + " (test points)")));
  return {best_name, best_acc};
}

// ---- part 2: the MLP language model ----
// The negative log-likelihood of every window's next token, in chunks (no graph is kept).
std::vector<float> token_nll(models::MLPLanguageModel& model, const data::Batch& windows) {
  NoGradGuard no_grad;
  const int64_t n = windows.y.numel(), chunk = 8192;
  std::vector<float> nll;
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t len = std::min(chunk, n - start);
    const Tensor losses = cross_entropy(model(narrow(windows.x, 0, start, len)), narrow(windows.y, 0, start, len),
                                        {.reduction = Reduction::none});
    nll.insert(nll.end(), losses.data(), losses.data() + len);
  }
  return nll;
}

double mean(const std::vector<float>& values) {
  double total = 0;
  for (float v : values) total += v;
  return total / static_cast<double>(values.size());
}

// Where each model wins: the mean NLL over validation tokens whose context (the last `context`
// characters) occurs in the training text, and over those whose context never does.
void seen_and_unseen(models::MLPLanguageModel& model, const models::NGramCounts& counts, const models::Estimator& ngram,
                     const data::Batch& val_windows) {
  const std::vector<float> mlp = token_nll(model, val_windows);
  double sums[2][2] = {{0, 0}, {0, 0}};  // [seen?][mlp, n-gram]
  int64_t tokens[2] = {0, 0};
  const int64_t context = val_windows.x.size(1);
  for (int64_t i = 0; i < val_windows.y.numel(); ++i) {
    std::vector<int> history(static_cast<size_t>(context));
    for (int64_t t = 0; t < context; ++t) history[static_cast<size_t>(t)] = static_cast<int>(val_windows.x.data()[i * context + t]);
    const int seen = counts.context_total(history) > 0 ? 1 : 0;
    sums[seen][0] += mlp[static_cast<size_t>(i)];
    sums[seen][1] -= std::log(counts.probability(ngram, history, static_cast<int>(val_windows.y.data()[i])));
    ++tokens[seen];
  }
  std::printf("\nvalidation loss split by whether the %lld-character context occurs in the training text:\n", static_cast<long long>(context));
  std::printf("  %-34s %14s %16s\n", "", "seen contexts", "unseen contexts");
  std::printf("  %-34s %14lld %16lld\n", "tokens", static_cast<long long>(tokens[1]), static_cast<long long>(tokens[0]));
  for (int m = 0; m < 2; ++m)
    std::printf("  %-34s %14.4f %16.4f\n", m == 0 ? "MLP language model" : (std::to_string(ngram.order) + "-gram, interpolated").c_str(),
                tokens[1] ? sums[1][m] / static_cast<double>(tokens[1]) : NAN, tokens[0] ? sums[0][m] / static_cast<double>(tokens[0]) : NAN);
}

struct LMResult {
  double train_loss, val_loss;
};

// Part 2's words, read before part 1 runs: a bad --data or --val fails at once.
struct Words {
  std::string source;
  data::Tokenizer tokenizer;
  data::EncodedText ids;
  data::DroppedUnknown dropped;  // validation characters not in the training text
};

Words load_words(const harness::TextFlags& text, const harness::CommonFlags& flags) {
  data::TextData lines = data::load_text({.data = text.data, .val = text.val, .lines = text.lines, .seed = flags.seed});
  if (flags.quick) data::keep_first(lines, 4000, 400);
  data::Tokenizer tokenizer = data::char_tokenizer(lines, text.lines);
  data::EncodedText ids = data::encode_text(lines, tokenizer, text.lines);
  const data::DroppedUnknown dropped = data::drop_unknown(ids.val);
  return {lines.train_source, std::move(tokenizer), std::move(ids), dropped};
}

LMResult language_model(harness::Run& run, const harness::LessonCli& cli, const Words& words, int64_t context, int64_t embed,
                        int64_t hidden) {
  const harness::CommonFlags& flags = cli.common;
  std::printf("\n== part 2: an MLP language model on the characters of words ==\n");
  const data::Tokenizer& tokenizer = words.tokenizer;
  const auto& train_seqs = words.ids.train;
  const auto& val_seqs = words.ids.val;
  const data::Batch train_windows = data::context_windows(train_seqs, context), val_windows = data::context_windows(val_seqs, context);
  std::printf("data: %s; %lld training and %lld validation examples (context %lld -> next character), vocabulary %lld\n",
              words.source.c_str(), static_cast<long long>(train_windows.y.numel()),
              static_cast<long long>(val_windows.y.numel()), static_cast<long long>(context),
              static_cast<long long>(tokenizer.vocab_size()));
  if (words.dropped.unknown > 0) std::printf("%s\n", words.dropped.describe("character").c_str());

  models::MLPLanguageModel model(tokenizer.vocab_size(), context, embed, hidden);
  std::printf("%s", model.summary().c_str());
  optim::Adam adam(model.named_parameters(), {.lr = flags.lr});
  const optim::Schedule schedule = optim::cosine_lr(flags.lr, flags.steps / 20, flags.steps, flags.lr / 100);  // no warm-up below 20 steps
  harness::Tracker tracker(run, {.steps = flags.steps, .eval_every = std::max<int64_t>(1, flags.steps / 20),
                                 .figures = {"val_loss", "val_ppl"}, .unit = "tok", .items_per_step = flags.batch});
  Generator batches(flags.seed + 7);
  for (int64_t step = tracker.resume({model, adam, {&batches}}); step <= flags.steps; ++step) {  // 1, or after --resume's checkpoint
    const data::Batch batch = data::sample_rows(train_windows, flags.batch, batches);
    adam.set_lr(schedule(step - 1));
    tracker.step(step, optim::train_step(model, adam, batch, 0), adam.lr());
    if (!tracker.evaluation_due(step)) continue;
    const double val_loss = mean(token_nll(model, val_windows));
    tracker.evaluated(step, {val_loss, std::exp(val_loss)});
  }
  tracker.finish();
  const double val_loss = tracker.last("val_loss");
  plot::Series train_curve = tracker.curve("train_loss"), val_curve = tracker.curve("val_loss");
  train_curve.name = "MLP train", val_curve.name = "MLP validation";

  // The n-gram models of lesson 01, on exactly the same sequences.
  // Orders 1-5 (1-3 when quick), and at least the order that sees as much as the MLP.
  const int ngram_max = std::max(flags.quick ? 3 : 5, static_cast<int>(std::min<int64_t>(context + 1, models::kMaxOrder)));
  const models::NGramCounts counts(ngram_max, train_seqs, tokenizer.vocab_size());
  std::printf("\nvalidation loss (nats per character) on the same split:\n");
  std::printf("  %-34s %8.4f  (perplexity %.2f, %lld parameters)\n", "MLP language model", val_loss, std::exp(val_loss),
              static_cast<long long>(model.num_parameters()));
  std::vector<plot::Series> curves = {train_curve, val_curve};
  models::Estimator same_context;  // the n-gram that sees as many characters as the MLP
  for (int order = 1; order <= ngram_max; ++order) {
    const models::Estimator interp{models::Smoothing::interpolation, order, 1, models::fit_lambdas(counts, order, val_seqs)};
    if (order == context + 1) same_context = interp;
    const double nll = models::evaluate(counts, interp, val_seqs).nll;
    std::printf("  %-34s %8.4f  (perplexity %.2f)\n", (std::to_string(order) + "-gram, interpolated (lesson 01)").c_str(), nll,
                std::exp(nll));
    if (order == context + 1 || order == ngram_max)
      curves.push_back({std::to_string(order) + "-gram (lesson 01)", {val_curve.x.front(), val_curve.x.back()}, {nll, nll}});
  }
  if (context + 1 <= models::kMaxOrder) seen_and_unseen(model, counts, same_context, val_windows);
  run.wrote(plot::save_line_chart(run.path("lm_loss"), {"MLP language model: loss per character", "step",
                                                           "cross-entropy (nats, log scale)", curves, /*log_y=*/true}));

  Generator gen(flags.seed);
  const std::string samples_path = run.file("samples.txt");
  std::FILE* out = std::fopen(samples_path.c_str(), "w");
  if (!out) fail("03_mlp", "cannot write ", samples_path);
  std::printf("\nsamples:\n");
  for (int i = 0; i < 12; ++i) {
    const std::string word = tokenizer.decode(model.sample(gen));
    std::printf("  %s\n", word.c_str());
    std::fprintf(out, "%s\n", word.c_str());
  }
  std::fclose(out);
  run.save_checkpoint(model, {{"tokenizer", tokenizer.to_json()}, {"context", std::to_string(context)},
                              {"embed", std::to_string(embed)}, {"hidden", std::to_string(hidden)}});
  return {tracker.train_loss(), val_loss};
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("03_mlp",
                           "Lesson 03: MLP classifiers on spirals; the MLP language model of Bengio et al.\n"
                           "(--steps, --lr and --batch set the language model; the spirals always train 1500 full-batch steps.)",
                           {.steps = 8000, .lr = 0.01f, .batch = 256});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/dict/american-english", /*default_lines=*/true);
    int64_t context = 3, embed = 16, hidden = 256;
    cli.option("--context", context, "characters the language model sees", {1, 16});
    cli.option("--embed", embed, "size of each character's embedding", {1, 1 << 16});
    cli.option("--hidden", hidden, "hidden units of the language model", {1, 1 << 16});
    cli.parse(argc, argv);
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 300);
    const Words words = load_words(text, cli.common);
    harness::check_memory("03_mlp", lessons::mlp_language_model_memory(cli.common.batch, context, embed, hidden));
    harness::Run run(cli);

    const SpiralResult spiral = spirals(run, cli.common.quick, cli.common.seed);
    const LMResult lm = language_model(run, cli, words, context, embed, hidden);
    run.finish({{"train_loss", lm.train_loss}, {"val_loss", lm.val_loss}, {"val_ppl", std::exp(lm.val_loss)},
                {"val_tokens", words.dropped.total()}, {"val_unknown_tokens", words.dropped.unknown}, {"test_acc", spiral.best_acc}},
               {{"test_acc", "spirals: " + spiral.best_name + ", the best of the 7 classifiers, 300 test points"},
                {"train_loss", "MLP language model: mean training loss since the last evaluation, nats per character"},
                {"val_loss", "MLP language model on the validation words, nats per character"},
                {"val_ppl", "exp(val_loss)"},
                {"val_tokens", "characters of the validation text, known or not"},
                {"val_unknown_tokens", "validation characters not in the training text, left out of val_loss"}},
               "docs/03_mlp.md, section 5 (MLP against n-grams); then exercise 1: --context 5 --embed 24");
  });
}
