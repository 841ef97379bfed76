// Lesson 13: BigBird's block-sparse attention.
//
//  1. the attention pattern as the paper draws it: the grid of (query block, key block) tiles, the
//     global, window and random ones in three colours, bidirectional and causal side by side; how
//     many tiles are computed against the dense count;
//  2. the task where distant tokens matter (data/retrieval.h): generated examples, printed one block
//     per line, the distance from the asked key to the question, the chance level;
//  3. the time of one attention layer (forward + backward) against the sequence length, full and
//     BigBird, and where BigBird gets ahead (lessons/13_bigbird/timing.h);
//  4. a classifier (models/encoder_classifier.h) trained on the task with full attention, the
//     window alone, window + global and BigBird, same model and budget, and the last two again with
//     the question off the global blocks (lessons/13_bigbird/pattern_variants.h): the accuracy table, and
//     accuracy by how many blocks back the asked key sits, which shows where each pattern fails.
// The note that goes with it: docs/13_bigbird.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "data/retrieval.h"
#include "harness/cli.h"
#include "harness/part_flag.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "lessons/13_bigbird/block_pattern_plot.h"
#include "lessons/13_bigbird/flags.h"
#include "lessons/13_bigbird/pattern_variants.h"
#include "lessons/13_bigbird/timing.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "models/encoder_classifier.h"
#include "models/predictions.h"
#include "nn/attention/bigbird_pattern.h"
#include "optim/adam.h"
#include "optim/train_step.h"
#include "plot/plot.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "13_bigbird";
using Flags = lessons::BigBirdFlags;  // the flags by part, their rules and checks: lessons/13_bigbird/flags.h

// ---- 1. the pattern ----

void show_pattern(harness::Run& run, const Flags& f, uint64_t seed, harness::Summary& summary) {
  const nn::BlockPattern both = nn::bigbird_pattern(f.length, {.block = f.block, .random_blocks = f.random, .seed = seed});
  const nn::BlockPattern causal =
      nn::bigbird_pattern(f.length, {.block = f.block, .random_blocks = f.random, .causal = true, .seed = seed});
  const int64_t n = both.blocks, tiles = both.visible_blocks(), causal_tiles = causal.visible_blocks();
  std::printf("%s", cat("\n== 1. the pattern: n = ", f.length, " positions in ", n, " blocks of ", f.block, ", r = ",
                        f.random, " random blocks ==\n").c_str());
  std::printf("   %-14s %8s %8s %10s\n", "", "tiles", "dense", "computed");
  for (const auto& [name, computed, dense] : {std::tuple{"bidirectional", tiles, n * n},
                                              std::tuple{"causal", causal_tiles, n * (n + 1) / 2}})
    std::printf("   %-14s %8lld %8lld %9.1f%%\n", name, static_cast<long long>(computed), static_cast<long long>(dense),
                100.0 * static_cast<double>(computed) / static_cast<double>(dense));
  std::printf("   (a tile is b x b = %lld scores; causal dense counts the tiles on and below the diagonal)\n",
              static_cast<long long>(f.block * f.block));
  run.wrote(lessons::save_block_patterns(run.path("pattern"),
                                         cat("BigBird's attention pattern: n = ", f.length, ", blocks of b = ", f.block,
                                             ", r = ", f.random, " random blocks per query block"),
                                         {{both, "bidirectional (ITC)"}, {causal, "causal"}}));
  summary.report("pattern_blocks", n, "part 1: blocks of --attention-block positions in --length");
  summary.report("tiles_bidirectional", tiles, "(query block, key block) tiles BigBird computes, bidirectional");
  summary.report("tiles_causal", causal_tiles, "the same, causal");
  summary.report("tiles_dense", n * n, "the tiles of full attention");
  summary.report("computed_share_bidirectional", static_cast<double>(tiles) / static_cast<double>(n * n),
                 "tiles_bidirectional / tiles_dense");
}

// ---- 2. the task ----

void show_task(const Flags& f, harness::Summary& summary) {
  data::RetrievalTaskOptions o = f.task;
  o.train = f.sample, o.val = o.test = 0;
  const data::RetrievalSet set = data::make_retrieval_task(o).train;
  std::printf("%s", cat("\n== 2. the task: ", o.length, " tokens, ", o.keys, " keys, ", o.values, " values, ",
                        o.distractors, " distractor pairs; the asked key at least ", o.min_distance,
                        " positions back ==\n").c_str());
  std::printf("   ('.' filler, letters keys, digits values, '?' the question; ^^ marks the asked pair and the question)\n");
  for (int64_t n = 0; n < std::min(f.examples, f.sample); ++n) {
    const int64_t key = set.key_positions[n];
    std::printf("%s", cat("   answer ", static_cast<int>(set.answers.data()[n]), ", the asked key at position ", key, ", ",
                          o.length - 1 - key, " positions before the question's key:\n").c_str());
    for (const std::string& line : data::retrieval_blocks(set, n, o, f.block)) std::printf("   %s\n", line.c_str());
  }
  const data::KeyDistances back = data::key_distances(set, f.block);
  const int64_t nearest = *std::min_element(back.positions.begin(), back.positions.end());
  const int64_t farthest = *std::max_element(back.positions.begin(), back.positions.end());
  const int64_t window_layers = *std::min_element(back.blocks.begin(), back.blocks.end());  // to the nearest key
  double mean = 0;
  for (const int64_t distance : back.positions) mean += static_cast<double>(distance) / static_cast<double>(f.sample);
  std::printf("   over %lld sequences the distance runs from %lld to %lld positions (mean %.0f), %s blocks of %lld\n",
              static_cast<long long>(f.sample), static_cast<long long>(nearest), static_cast<long long>(farthest), mean,
              cat(nearest / f.block, " to ", farthest / f.block).c_str(), static_cast<long long>(f.block));
  std::printf("   a sliding window of 3 blocks moves information one block per layer: %lld layer(s) before the\n"
              "   question can reach the nearest key; with global blocks 1 is enough, the question being in the\n"
              "   last block, which is global and sees every block\n", static_cast<long long>(window_layers));
  std::printf("   chance level: 1 / %lld values = %.3f\n", static_cast<long long>(o.values), data::retrieval_chance(o));
  summary.report("task_chance", data::retrieval_chance(o), "part 2: accuracy of guessing, 1 / --values");
  summary.report("task_nearest_key", nearest, "the smallest distance from the asked key to the question's key, positions");
  summary.report("task_mean_distance", mean, "the mean of that distance");
  summary.report("window_layers_needed", window_layers, "sliding-window layers before the question can reach the nearest key");
}

// ---- 3. time against length: lessons::time_against_length (lessons/13_bigbird/timing.h) ----

// ---- 4. the patterns trained on the task ----

// The patterns compared, and the question's place: lessons/13_bigbird/pattern_variants.h.
using lessons::PatternVariant;

// The training loop, the same for every pattern: AdamW (no decay on biases, norms and embeddings),
// a linear warmup then a cosine decay, the gradient clipped to norm 1, each step a batch drawn from
// the training set (the same batches for every pattern); the validation loss and accuracy ten times.
harness::Tracker train(harness::Run& run, models::EncoderClassifier& model, const data::LabelledBatch& train_set,
                       const data::LabelledBatch& val, const Flags& f, const harness::CommonFlags& common,
                       const PatternVariant& v) {
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), 0.01f), {.lr = common.lr});
  const optim::Schedule schedule = f.schedule.schedule(common.lr, common.steps);
  harness::Tracker tracker = lessons::classifier_tracker(run, common.steps, common.batch, v.label, cat("train_", v.name, ".csv"));
  Generator batches(common.seed + 1);
  model.train();
  for (int64_t step = tracker.resume({model, adamw, {&batches}}); step <= common.steps; ++step) {  // 1, or after --resume's checkpoint
    adamw.set_lr(schedule(step - 1));
    const data::LabelledBatch batch = data::sample_examples(train_set, common.batch, batches);
    tracker.step(step, optim::train_step(model, adamw, batch, 1.0f), adamw.lr());
    if (tracker.evaluation_due(step)) {
      const models::Predictions answers = models::predict(model, val, common.batch);
      tracker.evaluated(step, {answers.loss, answers.accuracy});
    }
  }
  tracker.finish();
  return tracker;
}

// What part 4 found for one pattern.
struct PatternResult {
  std::string name, label;
  double test_accuracy = 0, ms_per_step = 0;
  // Accuracy by the blocks between the asked key and the question; and within reach (blocks back <= layers), beyond.
  std::vector<double> by_blocks_back, reach;
  plot::Series val_curve;
};

std::vector<PatternResult> compare_patterns(harness::Run& run, const data::RetrievalSplits& task,
                                            const std::vector<int64_t>& back, const Flags& f,
                                            const harness::CommonFlags& common) {
  const data::RetrievalTaskOptions& o = f.task;
  std::printf("%s", cat("\n== 4. the patterns trained on the task: n = ", o.length, ", blocks of ", f.block,
                        ", r = ", f.random, " ==\n   EncoderClassifier (each pair one token, the answer read at the "
                        "question's key): ", f.layers, " layer(s), ", f.heads, " heads,\n   ", f.width, " wide; ",
                        common.steps, " steps of batch ", common.batch, ", lr ", common.lr, "; ", o.train,
                        " training sequences, ", o.val, " validation, ", o.test, " test;\n   the same initial weights "
                        "and batches for all; mid: a block of padding after the question, so its block is not global\n").c_str());
  const data::LabelledBatch train_set = data::paired_examples(task.train, o), val = data::paired_examples(task.val, o),
                            test_set = data::paired_examples(task.test, o);
  std::vector<int64_t> beyond;  // 0: within reach, 1: beyond (a window of 3 blocks moves one block per layer)
  for (const int64_t b : back) beyond.push_back(b > f.layers ? 1 : 0);
  std::vector<PatternResult> results;
  for (const std::string& name : f.patterns) {
    const PatternVariant& v = lessons::pattern_variant(name);
    const int64_t padding = lessons::padding_after_question(v, o.length, f.block);
    std::printf("-- %s\n", v.label.c_str());
    Generator init(common.seed);  // the same initial weights for every variant: the kinds have no parameters
    models::EncoderClassifier model({.vocab_size = data::paired_vocabulary(o), .num_classes = o.values,
                                     .max_len = o.length + padding, .d_model = f.width, .nhead = f.heads,
                                     .num_layers = f.layers, .dim_feedforward = 2 * f.width,
                                     .pooling = models::Pooling::last,  // the question's key, which sees the asked pair
                                     .attention = lessons::pattern_attention(v, f.block, f.random, common.seed)}, init);
    const harness::Tracker tracker =
        train(run, model, lessons::pad_after(train_set, padding), lessons::pad_after(val, padding), f, common, v);
    const models::Predictions test = models::predict(model, lessons::pad_after(test_set, padding), common.batch);
    results.push_back({v.name, v.label, test.accuracy, 1000 * tracker.mean_step_seconds(),
                       models::accuracy_by_group(test, test_set.labels, back, (o.length + f.block - 1) / f.block),
                       models::accuracy_by_group(test, test_set.labels, beyond, 2), tracker.curve("val_loss")});
  }
  return results;
}

// The tables, accuracy_by_distance.csv, the two charts and the metrics.
void report_comparison(harness::Run& run, const std::vector<PatternResult>& results, const std::vector<int64_t>& back,
                       const Flags& f, int64_t steps, harness::Summary& summary) {
  const double chance = data::retrieval_chance(f.task);
  std::printf("\n   test accuracy (chance %.3f), %lld steps each; 'within reach': the key at most %lld block(s) back "
              "(as many as\n   the layers: each moves information one block through a window of 3)\n",
              chance, static_cast<long long>(steps), static_cast<long long>(f.layers));
  std::printf("   %-20s %10s %14s %14s %12s\n", "pattern", "test acc", "within reach", "beyond reach", "ms per step");
  for (const PatternResult& r : results)
    std::printf("   %-20s %10.3f %14.3f %14.3f %12.1f\n", r.label.c_str(), r.test_accuracy, r.reach[0], r.reach[1],
                r.ms_per_step);
  std::printf("\n   accuracy by how many blocks back the asked key sits (0: in the question's block)\n   %6s %6s",
              "blocks", "count");
  std::vector<std::string> columns{"blocks_back", "count"};
  std::vector<plot::Series> by_distance, val_curves;
  for (size_t v = 0; v < results.size(); ++v) {
    std::printf(" %20s", results[v].label.c_str());
    columns.push_back("acc_" + results[v].name);
    by_distance.push_back({.name = results[v].label});
    val_curves.push_back(results[v].val_curve);
    summary.report(cat("test_acc_", results[v].name), results[v].test_accuracy,
                   cat("part 4: ", results[v].label, ", test sequences answered right"));
  }
  const auto window = std::find_if(results.begin(), results.end(), [](const PatternResult& r) { return r.name == "window"; });
  if (window != results.end()) {
    summary.report("window_within_reach", window->reach[0], cat("window only, keys at most ", f.layers, " block(s) back (--layers)"));
    summary.report("window_beyond_reach", window->reach[1], "window only, keys farther back");
  }
  std::printf("\n");
  harness::CsvWriter csv(run.file("accuracy_by_distance.csv"), columns);
  const size_t blocks = results.front().by_blocks_back.size();
  for (size_t b = 0; b < blocks; ++b) {
    const auto count = static_cast<double>(std::count(back.begin(), back.end(), static_cast<int64_t>(b)));
    std::vector<double> row{static_cast<double>(b), count};
    for (const PatternResult& r : results) row.push_back(r.by_blocks_back[b]);
    csv.row(row);
    if (count == 0) continue;
    std::printf("   %6zu %6lld", b, static_cast<long long>(count));
    for (size_t v = 0; v < results.size(); ++v) {
      std::printf(" %20.3f", results[v].by_blocks_back[b]);
      by_distance[v].x.push_back(static_cast<double>(b));
      by_distance[v].y.push_back(results[v].by_blocks_back[b]);
    }
    std::printf("\n");
  }
  by_distance.push_back({.name = "chance", .x = {0, static_cast<double>(blocks - 1)}, .y = {chance, chance}});
  run.wrote(plot::save_line_chart(run.path("accuracy_by_distance"),
      {.title = cat("Test accuracy by the asked key's distance (n = ", f.task.length, ", blocks of ", f.block, ")"),
       .x_label = "blocks between the asked key and the question", .y_label = "test accuracy", .series = by_distance,
       .x_tick = blocks <= 20 ? 1.0 : 0.0}));
  run.wrote(plot::save_line_chart(
      run.path("validation_loss"), {.title = "Validation loss of the patterns, same model and budget",
                                    .x_label = "step", .y_label = "cross-entropy (nats)", .series = val_curves}));
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson,
                           "Lesson 13: BigBird block-sparse attention: the pattern, the long-range retrieval task, time "
                           "against length, and full attention, the window alone, window + global and BigBird "
                           "trained on the task.",
                           {.steps = 600, .lr = 1.5e-3f, .batch = 32});
    Flags flags;
    flags.add_to(cli);
    harness::PartFlag part(cli, 4);
    cli.parse(argc, argv);
    flags.settle(cli);
    harness::Run run(cli);
    harness::Summary summary;

    if (part.runs(1)) show_pattern(run, flags, cli.common.seed, summary);
    if (part.runs(2)) show_task(flags, summary);
    if (part.runs(3)) lessons::time_against_length(run, flags.max_n, cli.common.seed, summary);
    if (part.runs(4)) {
      const data::RetrievalSplits task = data::make_retrieval_task(flags.task);
      const std::vector<int64_t> back = data::key_distances(task.test, flags.block).blocks;  // per test sequence
      report_comparison(run, compare_patterns(run, task, back, flags, cli.common), back, flags, cli.common.steps, summary);
    }
    run.finish(summary.metrics, summary.notes,
               "docs/13_bigbird.md, section 5 (Which patterns find the key); then exercise 6: --layers 3, and watch "
               "window only's reach");
  });
}
