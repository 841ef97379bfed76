// Lesson 15: a long-range benchmark in the manner of the Long Range Arena (Tay et al. 2020): every
// attention kind in the same small classifier, trained on the same tasks with the same budget.
//
//  1. the tasks: ListOps (data/listops.h), nested MIN, MAX, MED and SM expressions over digits whose
//     answer is one digit, with the distribution of their lengths and answers; and associative
//     recall (data/retrieval.h, lesson 13's task, each pair one token): key-value pairs, then a
//     query key, whose value is the answer, read at the query;
//  2. one encoder classifier (models/encoder_classifier.h) per attention kind, and a baseline without
//     attention (models/lstm_classifier.h), each trained on each task by the same loop (train, below)
//     with the same steps, batch, learning rate and batches;
//  3. the results as the LRA shows them: a table of accuracy per task, training steps per second and
//     the memory a training step adds at its peak, and charts of accuracy against speed in which the
//     size of a marker shows the memory.
// The note that goes with it: docs/15_long_range.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/peak_memory.h"
#include "data/listops.h"
#include "data/retrieval.h"
#include "lessons/common/attention_flags.h"
#include "lessons/common/benchmark_report.h"
#include "lessons/common/classifier_training.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/run.h"
#include "lessons/common/schedule_flags.h"
#include "lessons/common/tracker.h"
#include "models/encoder_classifier.h"
#include "models/lstm_classifier.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/vq_attention.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "15_long_range";

// ---- 1. the tasks ----

struct Task {
  std::string name, title;  // "listops", "ListOps"
  data::LabelledBatch train, val, test;
  int64_t vocabulary = 0, classes = 0, length = 0;
  models::Pooling pooling = models::Pooling::mean;  // where the bidirectional models read their answer
  double chance = 0;    // guessing uniformly
  double majority = 0;  // always answering the training set's most common answer, on the test set
};

// One line per bin of lengths, its share drawn as a bar.
void print_lengths(const std::vector<int64_t>& lengths, int64_t low, int64_t high) {
  constexpr int64_t kBins = 8;
  const int64_t width = (high - low + kBins) / kBins;  // kBins bins of this width cover low..high
  std::vector<int64_t> counts(static_cast<size_t>(kBins));
  for (const int64_t l : lengths) ++counts[static_cast<size_t>((l - low) / width)];
  for (int64_t b = 0; b < kBins && low + b * width <= high; ++b) {
    const double share = static_cast<double>(counts[b]) / static_cast<double>(lengths.size());
    std::printf("   %5lld-%-5lld %5.1f%% %s\n", static_cast<long long>(low + b * width),
                static_cast<long long>(std::min(high, low + (b + 1) * width - 1)), 100 * share,
                std::string(static_cast<size_t>(std::lround(60 * share)), '#').c_str());
  }
}

Task listops_task(const data::ListOpsOptions& o) {
  std::printf("\n== 1a. ListOps: %lld to %lld tokens, trees of up to %lld levels (operators nested up to %lld deep), "
              "2 to %lld arguments ==\n",
              static_cast<long long>(o.min_len), static_cast<long long>(o.max_len), static_cast<long long>(o.max_depth),
              static_cast<long long>(o.max_depth - 1), static_cast<long long>(o.max_args));
  const std::string example = "[MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ]";
  std::printf("   the rules on a short one: %s = %lld\n", example.c_str(),
              static_cast<long long>(data::evaluate_listops(data::listops_ids(example)).answer));
  data::ListOpsSplits splits = data::make_listops(o);
  const std::string first = data::listops_text(data::listops_row(splits.test, 0));
  std::printf("   a test expression (%lld tokens, answer %d): %s%s\n", static_cast<long long>(splits.test.lengths[0]),
              static_cast<int>(splits.test.answers.data()[0]), first.substr(0, 150).c_str(),
              first.size() > 150 ? " ..." : "");
  int64_t deepest = 0, depth_sum = 0;
  for (int64_t n = 0; n < o.train; ++n) {
    const int64_t depth = data::evaluate_listops(data::listops_row(splits.train, n)).depth;
    deepest = std::max(deepest, depth), depth_sum += depth;
  }
  std::printf("   operators nested over the %lld training expressions: %.1f deep on average, %lld at most; no\n"
              "   expression is in two of the parts (%lld training, %lld validation, %lld test)\n",
              static_cast<long long>(o.train), static_cast<double>(depth_sum) / static_cast<double>(o.train),
              static_cast<long long>(deepest), static_cast<long long>(o.train), static_cast<long long>(o.val),
              static_cast<long long>(o.test));
  std::printf("   lengths of the training expressions (tokens):\n");
  print_lengths(splits.train.lengths, o.min_len, o.max_len);
  const auto counts = data::answer_counts(splits.train);
  std::printf("   answers:");
  for (int64_t a = 0; a < data::kListOpsClasses; ++a)
    std::printf(" %lld:%.1f%%", static_cast<long long>(a),
                100.0 * static_cast<double>(counts[static_cast<size_t>(a)]) / static_cast<double>(o.train));
  std::printf("\n");
  const auto labelled = [](const data::ListOpsSet& set) { return data::LabelledBatch{set.tokens, set.answers, set.valid}; };
  Task task{"listops", "ListOps", labelled(splits.train), labelled(splits.val), labelled(splits.test),
            data::kListOpsVocabulary, data::kListOpsClasses, o.max_len, models::Pooling::mean, 1.0 / data::kListOpsClasses};
  task.majority = lessons::majority_share(task.train.labels, task.test.labels, task.classes);
  std::printf("   chance: guessing %.1f%%, always the most common answer %.1f%% (of the test set)\n", 100 * task.chance,
              100 * task.majority);
  return task;
}

Task recall_task(const data::RetrievalTaskOptions& o) {
  std::printf("\n== 1b. associative recall: %lld tokens, %lld key-value pairs, the asked key at least %lld back ==\n",
              static_cast<long long>(o.length), static_cast<long long>(o.distractors + 1),
              static_cast<long long>(o.min_distance));
  data::RetrievalSplits splits = data::make_retrieval_task(o);
  const std::string text = data::retrieval_text(splits.test, 0, o);
  std::printf("   ('.' filler, letters keys, digits values, '?' then the asked key; answer %d)\n   %s%s\n",
              static_cast<int>(splits.test.answers.data()[0]), text.substr(0, 150).c_str(),
              text.size() > 150 ? (" ... " + text.substr(text.size() - 20)).c_str() : "");
  std::printf("   the models read each pair as one token (data::pair_tokens: 'C4' becomes one id, then filler)\n"
              "   and answer at the last position, the asked key, which finds its pair in one attention hop\n");
  Task task{"recall", "associative recall", data::paired_examples(splits.train, o), data::paired_examples(splits.val, o),
            data::paired_examples(splits.test, o), data::paired_vocabulary(o), o.values, o.length,
            models::Pooling::last, data::retrieval_chance(o)};
  task.majority = lessons::majority_share(task.train.labels, task.test.labels, task.classes);
  std::printf("   chance: guessing %.1f%%, always the most common answer %.1f%%\n", 100 * task.chance,
              100 * task.majority);
  return task;
}

// ---- 2. the contenders and their training ----

// What --kinds names: an attention kind for the encoder classifier, or the baseline without one.
struct Contender {
  std::string name;                                // as --kinds writes it
  std::optional<nn::AttentionSettings> attention;  // none: the LSTM baseline
  // Every position sees only those before it, and the answer is read at the last real token, the
  // one that has seen them all: for the kinds that attend no other way (the registry's causal_only).
  bool causal = false;
};

// Every attention kind of the registry (nn/attention/attention_registry.h: linear once per feature
// map, each causal-only kind causal), then the baseline: a kind registered there joins without a
// change here. `seed` draws BigBird's random blocks, FAVOR+'s features and VQ's initial codes.
std::vector<Contender> all_contenders(const lessons::LessonCli& cli, const lessons::AttentionFlags& attention,
                                      uint64_t seed) {
  std::vector<Contender> list;
  for (const lessons::KindRun& kind : lessons::every_kind(cli, attention, seed))
    list.push_back({kind.name, kind.settings, kind.causal});
  list.push_back({"lstm", std::nullopt});
  return list;
}

std::vector<std::string> names_of(const std::vector<Contender>& list) {
  std::vector<std::string> names;
  for (const Contender& c : list) names.push_back(c.name);
  return names;
}

struct ModelSize {
  int64_t d_model, layers;
};

std::unique_ptr<models::SequenceClassifier> make_classifier(const Contender& c, const Task& task, ModelSize size,
                                                            Generator& gen) {
  if (!c.attention)
    return std::make_unique<models::LstmClassifier>(
        models::LstmClassifierConfig{.vocab_size = task.vocabulary, .num_classes = task.classes, .width = size.d_model,
                                     .pooling = task.pooling},
        gen);
  return std::make_unique<models::EncoderClassifier>(
      models::EncoderClassifierConfig{.vocab_size = task.vocabulary, .num_classes = task.classes, .max_len = task.length,
                                      .d_model = size.d_model, .nhead = 4, .num_layers = size.layers,
                                      .dim_feedforward = 2 * size.d_model,
                                      .pooling = c.causal ? models::Pooling::last : task.pooling,
                                      .attention = *c.attention, .causal = c.causal},
      gen);
}

// The training loop, the same for every contender: AdamW (no decay on biases, norms and
// embeddings), a linear warmup then a cosine decay, the gradient clipped to norm 1, each step a
// batch drawn from the training set; every contender starts from the same generator and sees the
// same batches (both made from the seed). It measures a step's mean time (the tracker's, without
// the evaluations) and what the first step adds to the memory at its peak.
lessons::ContenderResult train(lessons::Run& run, const Task& task, const Contender& c,
                               const lessons::CommonFlags& common, const lessons::ScheduleFlags& warmup, ModelSize size) {
  Generator init(common.seed + 3);
  const std::unique_ptr<models::SequenceClassifier> model = make_classifier(c, task, size, init);
  optim::AdamW adamw(optim::decay_groups(model->named_parameters(), 0.01f), {.lr = common.lr});
  const optim::Schedule schedule = warmup.schedule(common.lr, common.steps);
  lessons::Tracker tracker =
      lessons::classifier_tracker(run, common.steps, common.batch, c.name, cat("train_", task.name, "_", c.name, ".csv"));
  Generator batches(common.seed + 2);
  int64_t peak_bytes = 0;
  model->train();
  for (int64_t step = 1; step <= common.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const data::LabelledBatch batch = data::sample_examples(task.train, common.batch, batches);
    optim::StepResult stepped;
    const auto train_step = [&] { stepped = optim::train_step(*model, adamw, batch, 1.0f); };
    if (step == 1) peak_bytes = peak_bytes_added(train_step);
    else train_step();
    tracker.step(step, stepped, adamw.lr());
    if (tracker.evaluation_due(step)) {
      const lessons::Predictions answers = lessons::predict(*model, task.val, common.batch);
      tracker.evaluated(step, {answers.loss, answers.accuracy});
    }
  }
  tracker.finish();
  const lessons::ContenderResult result{.name = c.name,
                                        .test_acc = lessons::predict(*model, task.test, common.batch).accuracy,
                                        .steps_per_s = 1 / tracker.mean_step_seconds(),
                                        .peak_mib = static_cast<double>(peak_bytes) / (1 << 20),
                                        .parameters = model->num_parameters(),
                                        .curve = tracker.curve("train_loss")};
  std::printf("   %-16s %-20s test accuracy %5.1f%%  %6.2f steps/s  peak %7.1f MiB  %7lld parameters\n",
              c.name.c_str(), task.title.c_str(), 100 * result.test_acc, result.steps_per_s, result.peak_mib,
              static_cast<long long>(result.parameters));
  return result;
}

// ---- 3. the results: lessons::report_benchmark (lessons/common/benchmark_report.h) ----

// ---- the lesson's own flags ----
struct Flags {
  data::ListOpsOptions listops{.min_len = 0, .max_len = 128, .train = 5000, .val = 200, .test = 500};
  data::RetrievalTaskOptions recall{.length = 128, .keys = 16, .values = 10};
  int64_t pairs = 12;
  std::string kinds = "all";
  ModelSize size{64, 2};
  // BigBird's blocks of 16 positions with 2 random blocks, VQ's of 32 with 64 codes per head.
  lessons::AttentionFlags attention{.defaults = {{"block", 16}, {"random_blocks", 2}, {"codes", 64}},
                                    .kind_defaults = {{nn::VQAttention::kName, {{"block", 32}}}}};
  lessons::ScheduleFlags warmup{.warmup = 50};

  void add_to(lessons::LessonCli& cli) {
    cli.option("--kinds", kinds,
               "which to train, separated by commas, or all: " + nn::joined_names(names_of(all_contenders(cli, attention, 0)))
                   + " (linear_* is linear attention with that feature map; a kind that attends causally only runs "
                     "causal; lstm has no attention)");
    cli.option("--max-len", listops.max_len, "ListOps: the longest expression in tokens (the LRA: 2000)", {4, 1 << 15});
    cli.option("--min-len", listops.min_len, "ListOps: the shortest expression in tokens; 0: a quarter of --max-len",
               lessons::non_negative);
    cli.option("--max-depth", listops.max_depth,
               "ListOps: levels of the tree, the digits' counted (operators nest one fewer deep; the LRA: 10)", {2, 64});
    cli.option("--max-args", listops.max_args, "ListOps: arguments per operator at most", {2, 64});
    cli.option("--recall-len", recall.length, "associative recall: tokens per sequence", {16, 1 << 15});
    cli.option("--pairs", pairs, "associative recall: key-value pairs per sequence, the asked one included", {1, 1 << 14});
    cli.option("--train", listops.train, "examples in each task's training set", lessons::positive);
    cli.option("--val", listops.val, "examples in each task's validation set (the loss curves)", lessons::positive);
    cli.option("--test", listops.test, "examples in each task's test set", lessons::positive);
    cli.option("--d-model", size.d_model, "width of every model (4 heads)", {4, 1024});
    cli.option("--layers", size.layers, "encoder blocks", {1, 16});
    warmup.add_to(cli);
    lessons::add_every_kind_options(cli, attention);
  }

  // --quick: everything tiny but what the command line sets.
  void shrink_for_quick(lessons::LessonCli& cli) {
    const auto tiny = [&](const char* flag, int64_t& value, int64_t small) { value = cli.given(flag) ? value : small; };
    tiny("--max-len", listops.max_len, 64), tiny("--recall-len", recall.length, 64), tiny("--pairs", pairs, 8);
    tiny("--train", listops.train, 300), tiny("--val", listops.val, 50), tiny("--test", listops.test, 100);
    tiny("--d-model", size.d_model, 16), tiny("--layers", size.layers, 1);
    attention.defaults["block"] = attention.kind_defaults[nn::VQAttention::kName]["block"] = 8;
    attention.defaults["codes"] = 16;
    tiny("--steps", cli.common.steps, 100), tiny("--batch", cli.common.batch, 16), tiny("--warmup", warmup.warmup, 5);
    if (!cli.given("--lr")) cli.common.lr = 3e-3f;  // tiny models take a larger step
  }

  // The tasks' options the flags imply: the same sizes and seed for both, the asked key half the sequence back.
  void complete(uint64_t seed) {
    if (listops.min_len == 0) listops.min_len = std::max<int64_t>(4, listops.max_len / 4);
    listops.seed = recall.seed = seed;
    recall.train = listops.train, recall.val = listops.val, recall.test = listops.test;
    recall.min_distance = recall.length / 2, recall.distractors = pairs - 1;
  }

  // Refuses what cannot run, before any work.
  void check(const lessons::CommonFlags& common, const std::vector<Contender>& contenders) const {
    if (size.d_model % 4 != 0)
      fail(kLesson, "--d-model ", size.d_model, " must be a multiple of the 4 heads; give ", size.d_model / 4 * 4 + 4);
    if (listops.min_len > listops.max_len)
      fail(kLesson, "--min-len ", listops.min_len, " is above --max-len ", listops.max_len, "; give a smaller --min-len");
    warmup.check(kLesson, common.steps);
    for (const Contender& c : contenders) {  // BigBird over a sequence it would cover whole is refused
      if (!c.attention) continue;
      lessons::check_pattern_fits(kLesson, *c.attention, listops.max_len, false, cat("--max-len ", listops.max_len));
      lessons::check_pattern_fits(kLesson, *c.attention, recall.length, false, cat("--recall-len ", recall.length));
    }
    if (4 * pairs > recall.length - 2)  // the generator's bound: pairs fill at most half of what precedes the question
      fail(kLesson, "--pairs ", pairs, " at --recall-len ", recall.length, " would fill more than half of the ",
           recall.length - 2, " positions before the question; give at most ", (recall.length - 2) / 4,
           " pairs or a longer --recall-len");
    listops.check(), recall.check();
  }
};

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson,
                           "Lesson 15: a long-range benchmark: every attention kind in the same encoder classifier,\n"
                           "trained on ListOps and associative recall with the same budget; accuracy, speed, memory.",
                           {.steps = 500, .lr = 2e-3f, .batch = 16});
    Flags flags;
    flags.add_to(cli);
    cli.parse(argc, argv);
    if (cli.common.quick) flags.shrink_for_quick(cli);
    if (!cli.given("--warmup")) flags.warmup.warmup = std::min(flags.warmup.warmup, cli.common.steps / 10);
    const std::vector<Contender> every = all_contenders(cli, flags.attention, cli.common.seed);
    std::vector<Contender> contenders;  // those --kinds names, in its order
    for (const std::string& name : lessons::chosen_names(kLesson, "--kinds", flags.kinds, names_of(every), "kind"))
      contenders.push_back(*std::find_if(every.begin(), every.end(), [&](const Contender& c) { return c.name == name; }));
    flags.complete(cli.common.seed);
    flags.check(cli.common, contenders);
    lessons::Run run(cli);
    lessons::Summary summary;

    const std::vector<Task> tasks = {listops_task(flags.listops), recall_task(flags.recall)};
    const nn::AttentionSettings bigbird =
        lessons::kind_settings(cli, flags.attention, nn::BigBirdAttention::kName, cli.common.seed);
    std::printf("\n== 2. training: %lld steps of %lld examples, AdamW lr %g (warmup %lld, cosine), d_model %lld, "
                "%lld blocks, 4 heads; BigBird blocks of %lld, %lld random ==\n",
                static_cast<long long>(cli.common.steps), static_cast<long long>(cli.common.batch),
                static_cast<double>(cli.common.lr), static_cast<long long>(flags.warmup.warmup),
                static_cast<long long>(flags.size.d_model), static_cast<long long>(flags.size.layers),
                static_cast<long long>(bigbird.number("block")), static_cast<long long>(bigbird.number("random_blocks")));
    for (const Contender& c : contenders)
      if (c.causal)
        std::printf("   %s runs causal: %s,\n"
                    "   so each position sees only those before it and the answer is read at the last real token\n"
                    "   (padding comes after it and is never seen); the others read both ways\n",
                    lessons::describe_attention(*c.attention, /*causal=*/true).c_str(),
                    nn::registered_kind(c.attention->kind).why_one_way.c_str());
    std::vector<lessons::TaskResults> results;
    for (const Task& task : tasks) {
      results.push_back({task.name, task.title, task.chance, task.majority, {}});
      for (const Contender& c : contenders)
        results.back().contenders.push_back(train(run, task, c, cli.common, flags.warmup, flags.size));
    }
    lessons::report_benchmark(run, results, summary);
    run.finish(summary.metrics, summary.notes,
               "docs/15_long_range.md, section 3 (The results); then exercise 1: --max-len 2000");
  });
}
