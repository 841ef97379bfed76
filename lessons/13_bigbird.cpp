// Lesson 13: BigBird's block-sparse attention.
//
//  1. the attention pattern as the paper draws it: the grid of (query block, key block) tiles, the
//     global, window and random ones in three colours, bidirectional and causal side by side; how
//     many tiles are computed against the dense count;
//  2. the task where distant tokens matter (data/retrieval.h): generated examples, printed one block
//     per line, the distance from the asked key to the question, the chance level;
//  3. the time of one attention layer (forward + backward) against the sequence length, full and
//     BigBird, and where BigBird gets ahead;
//  4. a classifier (models/encoder_classifier.h) trained on the task with full attention, the
//     window alone, window + global and BigBird, same model and budget: the accuracy table, and
//     accuracy by how many blocks back the asked key sits, which shows where the window alone fails.
// The note that goes with it: docs/13_bigbird.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/retrieval.h"
#include "lessons/common/block_pattern_plot.h"
#include "lessons/common/classifier_training.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/run.h"
#include "lessons/common/schedule_flags.h"
#include "lessons/common/tracker.h"
#include "models/encoder_classifier.h"
#include "nn/attention/attention_workload.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/bigbird_pattern.h"
#include "nn/attention/full_attention.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "13_bigbird";
constexpr int64_t kMaxDrawnBlocks = 128;  // more blocks than this make tiles too small to see

struct ModelSize {
  int64_t width = 64, layers = 1, heads = 4;
};

// The lesson's own flags, by part.
struct Flags {
  int64_t length = 128, block = 8, random = 3;  // part 1's pattern; block and random shape part 4's too
  data::RetrievalTaskOptions task{.length = 128, .min_distance = 8, .train = 20000, .val = 500, .test = 2000};
  int64_t examples = 2, sample = 1000;  // part 2: sequences printed, and measured
  int64_t max_n = 8192;                 // part 3
  ModelSize size;                       // part 4
  lessons::ScheduleFlags schedule{.warmup = 50};

  void add_to(lessons::LessonCli& cli);
  void shrink_for_quick(lessons::LessonCli& cli);  // everything small but what the command line sets
  void check(const lessons::CommonFlags& common) const;  // refuses what cannot run, before any work
};

// ---- 1. the pattern ----

struct PatternCounts {
  int64_t blocks = 0, bidirectional = 0, causal = 0;  // tiles computed
};

PatternCounts pattern_figure(lessons::Run& run, int64_t length, int64_t block, int64_t random, uint64_t seed) {
  const nn::BlockPattern both = nn::bigbird_pattern(length, {.block = block, .random_blocks = random, .seed = seed});
  const nn::BlockPattern causal =
      nn::bigbird_pattern(length, {.block = block, .random_blocks = random, .causal = true, .seed = seed});
  const int64_t n = both.blocks;
  const PatternCounts counts{n, both.visible_blocks(), causal.visible_blocks()};
  std::printf("\n== 1. the pattern: n = %lld positions in %lld blocks of %lld, r = %lld random blocks ==\n",
              static_cast<long long>(length), static_cast<long long>(n), static_cast<long long>(block),
              static_cast<long long>(random));
  std::printf("   %-14s %8s %8s %10s\n", "", "tiles", "dense", "computed");
  std::printf("   %-14s %8lld %8lld %9.1f%%\n", "bidirectional", static_cast<long long>(counts.bidirectional),
              static_cast<long long>(n * n), 100.0 * static_cast<double>(counts.bidirectional) / static_cast<double>(n * n));
  std::printf("   %-14s %8lld %8lld %9.1f%%\n", "causal", static_cast<long long>(counts.causal),
              static_cast<long long>(n * (n + 1) / 2),
              100.0 * static_cast<double>(counts.causal) / static_cast<double>(n * (n + 1) / 2));
  std::printf("   (a tile is b x b = %lld scores; causal dense counts the tiles on and below the diagonal)\n",
              static_cast<long long>(block * block));
  run.wrote(lessons::save_block_patterns(run.path("pattern"),
                                         cat("BigBird's attention pattern: n = ", length, ", blocks of b = ", block,
                                             ", r = ", random, " random blocks per query block"),
                                         {{both, "bidirectional (ITC)"}, {causal, "causal"}}));
  return counts;
}

// ---- 2. the task ----

struct TaskFacts {
  int64_t nearest = 0, farthest = 0;  // the asked key's distance to the question's key, over the sample
  double mean = 0;
  int64_t window_layers = 0;  // sliding-window layers needed to bring the key to the question, at least
};

TaskFacts show_task(const data::RetrievalTaskOptions& options, int64_t block, int64_t examples, int64_t sample) {
  data::RetrievalTaskOptions o = options;
  o.train = sample;
  o.val = o.test = 0;
  const data::RetrievalSet set = data::make_retrieval_task(o).train;
  std::printf("\n== 2. the task: %lld tokens, %lld keys, %lld values, %lld distractor pairs; the asked key at least "
              "%lld positions back ==\n",
              static_cast<long long>(o.length), static_cast<long long>(o.keys), static_cast<long long>(o.values),
              static_cast<long long>(o.distractors), static_cast<long long>(o.min_distance));
  std::printf("   ('.' filler, letters keys, digits values, '?' the question; ^^ marks the asked pair and the question)\n");
  for (int64_t n = 0; n < std::min(examples, sample); ++n) {
    const int64_t key = set.key_positions[n];
    std::printf("   answer %d, the asked key at position %lld, %lld positions before the question's key:\n",
                static_cast<int>(set.answers.data()[n]), static_cast<long long>(key),
                static_cast<long long>(o.length - 1 - key));
    for (const std::string& line : data::retrieval_blocks(set, n, o, block)) std::printf("   %s\n", line.c_str());
  }
  const data::KeyDistances back = data::key_distances(set, block);
  TaskFacts facts{*std::min_element(back.positions.begin(), back.positions.end()),
                  *std::max_element(back.positions.begin(), back.positions.end()), 0,
                  *std::min_element(back.blocks.begin(), back.blocks.end())};
  for (const int64_t distance : back.positions) facts.mean += static_cast<double>(distance) / static_cast<double>(sample);
  std::printf("   over %lld sequences the distance runs from %lld to %lld positions (mean %.0f), %lld to %lld blocks "
              "of %lld\n",
              static_cast<long long>(sample), static_cast<long long>(facts.nearest),
              static_cast<long long>(facts.farthest), facts.mean, static_cast<long long>(facts.nearest / block),
              static_cast<long long>(facts.farthest / block), static_cast<long long>(block));
  std::printf("   a sliding window of 3 blocks moves information one block per layer: %lld layer(s) before the\n"
              "   question can reach the nearest key; with global blocks 1 is enough, the question being in the\n"
              "   last block, which is global and sees every block\n",
              static_cast<long long>(facts.window_layers));
  std::printf("   chance level: 1 / %lld values = %.3f\n", static_cast<long long>(o.values), data::retrieval_chance(o));
  return facts;
}

// ---- 3. time against length ----

constexpr int64_t kTimingBlock = 64, kTimingRandom = 3;

// The best of up to three training steps of one bidirectional layer at this length, in
// milliseconds (nn::layer_training_step, the work ./ladder bench attention times); fewer calls once
// two seconds are spent.
double layer_ms(const nn::AttentionSettings& settings, int64_t length, Generator& gen) {
  const std::function<void()> call = nn::layer_training_step(settings, length, /*causal=*/false, gen);
  double best = 1e300, spent = 0;
  for (int c = 0; c < 3 && spent < 2000; ++c) {
    const auto start = std::chrono::steady_clock::now();
    call();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, ms);
    spent += ms;
  }
  return best;
}

struct Timing {
  std::vector<double> lengths, full_ms, bigbird_ms;
  int64_t ahead_from = 0;  // the first length from which BigBird is faster by over 10%; 0: none measured
};

Timing time_against_length(lessons::Run& run, int64_t max_n, uint64_t seed) {
  const nn::AttentionSettings full = nn::full_attention();
  const nn::AttentionSettings bigbird =
      nn::bigbird_attention_settings({.block = kTimingBlock, .random_blocks = kTimingRandom, .seed = seed});
  std::printf("\n== 3. one bidirectional attention layer, forward + backward, B=1 H=%lld D=%lld; BigBird b=%lld r=%lld ==\n",
              static_cast<long long>(nn::kWorkloadHeads), static_cast<long long>(nn::kWorkloadHeadDim),
              static_cast<long long>(kTimingBlock), static_cast<long long>(kTimingRandom));
  std::printf("   %6s %10s %12s %8s %14s %12s\n", "n", "full ms", "BigBird ms", "full/BB", "tiles computed",
              "kept (both)");
  lessons::CsvWriter csv(run.file("timing.csv"),
                         {"n", "full_ms", "bigbird_ms", "bigbird_tiles", "dense_tiles", "kept_bytes"});
  Timing t;
  Generator gen(seed);
  for (int64_t n = 256; n <= max_n; n *= 2) {
    const double f = layer_ms(full, n, gen), b = layer_ms(bigbird, n, gen);
    const int64_t tiles = nn::bigbird_pattern(n, {.block = kTimingBlock, .random_blocks = kTimingRandom}).visible_blocks();
    const int64_t dense = (n / kTimingBlock) * (n / kTimingBlock);
    // The fused op keeps its output (B,H,T,D) and the rows' log-sum-exp (B,H,T) for backward,
    // whatever the pattern: it recomputes the weights instead of keeping them.
    const int64_t kept = 4 * nn::kWorkloadHeads * n * (nn::kWorkloadHeadDim + 1);
    std::printf("   %6lld %10.1f %12.1f %8.2f %7lld/%-6lld %9.2f MiB\n", static_cast<long long>(n), f, b, f / b,
                static_cast<long long>(tiles), static_cast<long long>(dense), static_cast<double>(kept) / (1 << 20));
    csv.row({static_cast<double>(n), f, b, static_cast<double>(tiles), static_cast<double>(dense),
             static_cast<double>(kept)});
    t.lengths.push_back(static_cast<double>(n));
    t.full_ms.push_back(f);
    t.bigbird_ms.push_back(b);
    if (b > 0.9 * f) t.ahead_from = 0;  // within 10%: the timing's noise, not a crossing
    else if (t.ahead_from == 0) t.ahead_from = n;
  }
  if (t.ahead_from) std::printf("   BigBird is faster (by over 10%%) from n = %lld on\n", static_cast<long long>(t.ahead_from));
  else std::printf("   BigBird is not faster by over 10%% at any length measured: try a larger --max-n\n");
  std::printf("   memory: the fused op keeps the same for both (out and log-sum-exp, linear in n); what BigBird\n"
              "   saves is the work of the tiles it skips (computed, not measured here)\n");
  std::vector<double> doublings;  // log2 n: the lengths evenly spaced
  for (const double n : t.lengths) doublings.push_back(std::log2(n));
  run.wrote(lessons::save_line_chart(
      run.path("attention_time"),
      {.title = "One attention layer, forward + backward (B=1, H=4, D=64)",
       .x_label = "log2 of the sequence length n (8: n = 256, 13: n = 8192)",
       .y_label = "milliseconds (best of up to 3)",
       .series = {{.name = nn::FullAttention::kName, .x = doublings, .y = t.full_ms},
                  {.name = "BigBird b=64 r=3", .x = doublings, .y = t.bigbird_ms}},
       .log_y = true,
       .x_tick = 1}));
  return t;
}

// ---- 4. the four patterns trained on the task ----

// The patterns compared: full attention, and BigBird's pattern with parts of it taken away.
struct Variant {
  const char* name;   // in file and metric names
  const char* label;  // in tables and legends
  bool bigbird, global, random;
};
constexpr Variant kVariants[] = {{nn::FullAttention::kName, nn::FullAttention::kName, false, false, false},
                                 {"window", "window only", true, false, false},
                                 {"window_global", "window + global", true, true, false},
                                 {nn::BigBirdAttention::kName, "BigBird", true, true, true}};

nn::AttentionSettings attention_of(const Variant& v, int64_t block, int64_t random, uint64_t seed) {
  if (!v.bigbird) return nn::full_attention();
  return nn::bigbird_attention_settings(
      {.block = block, .random_blocks = v.random ? random : 0, .global_blocks = v.global, .seed = seed});
}

// The training loop, the same for every pattern: AdamW (no decay on biases, norms and embeddings),
// a linear warmup then a cosine decay, the gradient clipped to norm 1, each step a batch drawn from
// the training set (the same batches for every pattern); the validation loss and accuracy ten times.
lessons::Tracker train(lessons::Run& run, models::EncoderClassifier& model, const data::LabelledBatch& train_set,
                       const data::LabelledBatch& val, const Flags& flags, const lessons::CommonFlags& common,
                       const Variant& v) {
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), 0.01f), {.lr = common.lr});
  const optim::Schedule schedule = flags.schedule.schedule(common.lr, common.steps);
  lessons::Tracker tracker =
      lessons::classifier_tracker(run, common.steps, common.batch, v.label, std::string("train_") + v.name + ".csv");
  Generator batches(common.seed + 1);
  model.train();
  for (int64_t step = 1; step <= common.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const data::LabelledBatch batch = data::sample_examples(train_set, common.batch, batches);
    tracker.step(step, optim::train_step(model, adamw, batch, 1.0f), adamw.lr());
    if (tracker.evaluation_due(step)) {
      const lessons::Predictions answers = lessons::predict(model, val, common.batch);
      tracker.evaluated(step, {answers.loss, answers.accuracy});
    }
  }
  tracker.finish();
  return tracker;
}

// What part 4 found for one pattern.
struct PatternResult {
  std::string label;
  double test_accuracy = 0, ms_per_step = 0;
  std::vector<double> by_blocks_back;  // accuracy by blocks between the asked key and the question
  std::vector<double> reach;           // accuracy within reach (blocks back <= layers) and beyond
  lessons::Series val_curve;
};

std::vector<PatternResult> compare_patterns(lessons::Run& run, const data::RetrievalSplits& task,
                                            const std::vector<int64_t>& back, const Flags& flags,
                                            const lessons::CommonFlags& common) {
  const data::RetrievalTaskOptions& o = flags.task;
  const ModelSize& size = flags.size;
  std::printf("\n== 4. the four patterns trained on the task: n = %lld, blocks of %lld, r = %lld ==\n",
              static_cast<long long>(o.length), static_cast<long long>(flags.block), static_cast<long long>(flags.random));
  std::printf("   EncoderClassifier (each pair one token, the answer read at the question's key): %lld layer(s), "
              "%lld heads,\n   %lld wide; %lld steps of batch %lld, lr %g; %lld training sequences, %lld validation, "
              "%lld test;\n   the same initial weights and batches for all four\n",
              static_cast<long long>(size.layers), static_cast<long long>(size.heads), static_cast<long long>(size.width),
              static_cast<long long>(common.steps), static_cast<long long>(common.batch), static_cast<double>(common.lr),
              static_cast<long long>(o.train), static_cast<long long>(o.val), static_cast<long long>(o.test));
  const data::LabelledBatch train_set = data::paired_examples(task.train, o), val = data::paired_examples(task.val, o),
                            test_set = data::paired_examples(task.test, o);
  std::vector<int64_t> beyond;  // 0: within reach, 1: beyond (a window of 3 blocks moves one block per layer)
  for (const int64_t b : back) beyond.push_back(b > size.layers ? 1 : 0);
  std::vector<PatternResult> results;
  for (const Variant& v : kVariants) {
    std::printf("-- %s\n", v.label);
    Generator init(common.seed);  // the same initial weights for every variant: the kinds have no parameters
    models::EncoderClassifier model({.vocab_size = data::paired_vocabulary(o),
                                     .num_classes = o.values,
                                     .max_len = o.length,
                                     .d_model = size.width,
                                     .nhead = size.heads,
                                     .num_layers = size.layers,
                                     .dim_feedforward = 2 * size.width,
                                     .pooling = models::Pooling::last,  // the question's key, which sees the asked pair
                                     .attention = attention_of(v, flags.block, flags.random, common.seed)},
                                    init);
    const lessons::Tracker tracker = train(run, model, train_set, val, flags, common, v);
    const lessons::Predictions test = lessons::predict(model, test_set, common.batch);
    const auto blocks = static_cast<int64_t>((o.length + flags.block - 1) / flags.block);
    results.push_back({v.label, test.accuracy, 1000 * tracker.mean_step_seconds(),
                       lessons::accuracy_by_group(test, test_set.labels, back, blocks),
                       lessons::accuracy_by_group(test, test_set.labels, beyond, 2), tracker.curve("val_loss")});
  }
  return results;
}

// The tables, accuracy_by_distance.csv and the two charts.
void report_comparison(lessons::Run& run, const std::vector<PatternResult>& results, const std::vector<int64_t>& back,
                       const Flags& flags, int64_t steps) {
  const double chance = data::retrieval_chance(flags.task);
  std::printf("\n   test accuracy (chance %.3f), %lld steps each; 'within reach': the key at most %lld block(s) back "
              "(as many as\n   the layers: each moves information one block through a window of 3)\n",
              chance, static_cast<long long>(steps), static_cast<long long>(flags.size.layers));
  std::printf("   %-16s %10s %14s %14s %12s\n", "pattern", "test acc", "within reach", "beyond reach", "ms per step");
  for (const PatternResult& r : results)
    std::printf("   %-16s %10.3f %14.3f %14.3f %12.1f\n", r.label.c_str(), r.test_accuracy, r.reach[0], r.reach[1],
                r.ms_per_step);
  std::printf("\n   accuracy by how many blocks back the asked key sits (0: in the question's block)\n   %6s %6s",
              "blocks", "count");
  for (const PatternResult& r : results) std::printf(" %16s", r.label.c_str());
  std::printf("\n");
  std::vector<std::string> columns{"blocks_back", "count"};
  for (const Variant& v : kVariants) columns.push_back(std::string("acc_") + v.name);
  lessons::CsvWriter csv(run.file("accuracy_by_distance.csv"), columns);
  std::vector<lessons::Series> by_distance;
  for (const PatternResult& r : results) by_distance.push_back({.name = r.label});
  const size_t blocks = results.front().by_blocks_back.size();
  for (size_t b = 0; b < blocks; ++b) {
    const auto count = static_cast<double>(std::count(back.begin(), back.end(), static_cast<int64_t>(b)));
    std::vector<double> row{static_cast<double>(b), count};
    for (const PatternResult& r : results) row.push_back(r.by_blocks_back[b]);
    csv.row(row);
    if (count == 0) continue;
    std::printf("   %6zu %6lld", b, static_cast<long long>(count));
    for (size_t v = 0; v < results.size(); ++v) {
      std::printf(" %16.3f", results[v].by_blocks_back[b]);
      by_distance[v].x.push_back(static_cast<double>(b));
      by_distance[v].y.push_back(results[v].by_blocks_back[b]);
    }
    std::printf("\n");
  }
  by_distance.push_back({.name = "chance", .x = {0, static_cast<double>(blocks - 1)}, .y = {chance, chance}});
  run.wrote(lessons::save_line_chart(
      run.path("accuracy_by_distance"),
      {.title = cat("Test accuracy by the asked key's distance (n = ", flags.task.length, ", blocks of ", flags.block, ")"),
       .x_label = "blocks between the asked key and the question",
       .y_label = "test accuracy",
       .series = by_distance,
       .x_tick = blocks <= 20 ? 1.0 : 0.0}));
  std::vector<lessons::Series> val_curves;
  for (const PatternResult& r : results) val_curves.push_back(r.val_curve);
  run.wrote(lessons::save_line_chart(run.path("validation_loss"),
                                     {.title = "Validation loss of the four patterns, same model and budget",
                                      .x_label = "step",
                                      .y_label = "cross-entropy (nats)",
                                      .series = val_curves}));
}

// ---- the flags ----

void Flags::add_to(lessons::LessonCli& cli) {
  cli.option("--length", length, "part 1: sequence length of the drawn pattern", {2, 1 << 16});
  cli.option("--attention-block", block, "parts 1, 2 and 4: positions per block b", {1, 4096});
  cli.option("--random-blocks", random, "parts 1 and 4: random blocks r per query block", {0, 64});
  cli.option("--task-length", task.length, "parts 2 and 4: tokens per sequence of the retrieval task", {6, 1 << 16});
  cli.option("--distance", task.min_distance, "parts 2 and 4: the asked key at least this many positions back",
             {3, 1 << 16});
  cli.option("--keys", task.keys, "parts 2 and 4: distinct keys", {2, 26});
  cli.option("--values", task.values, "parts 2 and 4: distinct values (the classes)", {2, 10});
  cli.option("--distractors", task.distractors, "parts 2 and 4: other key/value pairs per sequence",
             lessons::non_negative);
  cli.option("--examples", examples, "part 2: sequences printed", {0, 20});
  cli.option("--max-n", max_n, "part 3: the longest sequence timed (from 256, doubling)", {256, 1 << 15});
  cli.option("--width", size.width, "part 4: the classifier's model width (a multiple of --heads)", {4, 1024});
  cli.option("--layers", size.layers, "part 4: encoder layers", {1, 12});
  cli.option("--heads", size.heads, "part 4: attention heads per layer", {1, 16});
  cli.option("--train-size", task.train, "part 4: training sequences (each step draws --batch of them)", {1, 1 << 20});
  cli.option("--test-size", task.test, "part 4: test sequences", {10, 1 << 20});
  schedule.add_to(cli, "part 4: ");
}

void Flags::shrink_for_quick(lessons::LessonCli& cli) {
  const auto small = [&](const char* flag, int64_t& value, int64_t tiny) {
    if (!cli.given(flag)) value = tiny;
  };
  small("--max-n", max_n, 512), small("--examples", examples, 1), sample = 100;
  small("--steps", cli.common.steps, 4), small("--warmup", schedule.warmup, 1);
  small("--train-size", task.train, 64), task.val = 32, small("--test-size", task.test, 64);
  small("--layers", size.layers, 1);
}

void Flags::check(const lessons::CommonFlags& common) const {
  if (length % block != 0)
    fail(kLesson, "--length ", length, " is not a multiple of --attention-block ", block, ": the picture draws whole blocks; "
         "give --length ", (length / block + 1) * block, " or a --attention-block that divides it");
  const int64_t blocks = length / block;
  // With m <= r + 4 blocks every query block lists them all (2 global + 3 window + r random).
  if (blocks < random + 5)
    fail(kLesson, "--length ", length, " / --attention-block ", block, " = ", blocks,
         " blocks is too short for the pattern: each query block lists up to 2 global + 3 window + ", random,
         " random blocks, so every tile would be computed (full attention); give at least ", random + 5,
         " blocks: --length ", (random + 5) * block, " or more, or a smaller --attention-block or --random-blocks");
  if (blocks > kMaxDrawnBlocks)
    fail(kLesson, "--length ", length, " / --attention-block ", block, " = ", blocks, " blocks, more than ", kMaxDrawnBlocks,
         " would make tiles too small to see; give a larger --attention-block or a shorter --length");
  if (task.min_distance >= task.length)
    fail(kLesson, "--distance ", task.min_distance, " must be below --task-length ", task.length,
         ": the asked key sits that far before the question's key at the end");
  task.check();
  if (size.width % size.heads != 0)
    fail(kLesson, "--width ", size.width, " is not a multiple of --heads ", size.heads,
         ": each head takes width / heads features; give --width ", (size.width / size.heads + 1) * size.heads);
  const int64_t task_blocks = (task.length + block - 1) / block;  // the last one padded when b does not divide n
  if (task_blocks < random + 5)
    fail(kLesson, "--task-length ", task.length, " in blocks of --attention-block ", block, " = ", task_blocks,
         " blocks is too short for part 4's patterns: with up to 2 global + 3 window + ", random,
         " random blocks listed, BigBird's query blocks would see every block, as full attention's do; "
         "give at least ", random + 5, " blocks: --task-length ", (random + 5) * block,
         " or more, or a smaller --attention-block or --random-blocks");
  schedule.check(kLesson, common.steps);
}

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson,
                           "Lesson 13: BigBird block-sparse attention: the pattern, the long-range retrieval task, time "
                           "against length, and full attention, the window alone, window + global and BigBird "
                           "trained on the task.",
                           {.steps = 600, .lr = 1.5e-3f, .batch = 32});
    Flags flags;
    flags.add_to(cli);
    cli.parse(argc, argv);
    if (!cli.given("--warmup")) flags.schedule.warmup = std::min(flags.schedule.warmup, cli.common.steps / 10);
    if (cli.common.quick) flags.shrink_for_quick(cli);
    flags.check(cli.common);
    flags.task.seed = cli.common.seed;
    lessons::Run run(cli);

    const PatternCounts pattern = pattern_figure(run, flags.length, flags.block, flags.random, cli.common.seed);
    const TaskFacts facts = show_task(flags.task, flags.block, flags.examples, flags.sample);
    const Timing timing = time_against_length(run, flags.max_n, cli.common.seed);
    const data::RetrievalSplits task = data::make_retrieval_task(flags.task);
    const std::vector<int64_t> back = data::key_distances(task.test, flags.block).blocks;  // per test sequence
    const std::vector<PatternResult> patterns = compare_patterns(run, task, back, flags, cli.common);
    report_comparison(run, patterns, back, flags, cli.common.steps);

    nlohmann::ordered_json metrics;
    lessons::MetricNotes notes;
    const auto report = [&](const std::string& name, const nlohmann::ordered_json& value, const std::string& note) {
      metrics[name] = value, notes[name] = note;
    };
    report("pattern_blocks", pattern.blocks, "part 1: blocks of --attention-block positions in --length");
    report("tiles_bidirectional", pattern.bidirectional, "(query block, key block) tiles BigBird computes, bidirectional");
    report("tiles_causal", pattern.causal, "the same, causal");
    report("tiles_dense", pattern.blocks * pattern.blocks, "the tiles of full attention");
    report("computed_share_bidirectional",
           static_cast<double>(pattern.bidirectional) / static_cast<double>(pattern.blocks * pattern.blocks),
           "tiles_bidirectional / tiles_dense");
    report("task_chance", data::retrieval_chance(flags.task), "part 2: accuracy of guessing, 1 / --values");
    report("task_nearest_key", facts.nearest, "the smallest distance from the asked key to the question's key, positions");
    report("task_mean_distance", facts.mean, "the mean of that distance");
    report("window_layers_needed", facts.window_layers, "sliding-window layers before the question can reach the nearest key");
    report("longest_n_timed", static_cast<int64_t>(timing.lengths.back()), "part 3: the longest sequence timed");
    report("full_ms_longest", timing.full_ms.back(), "full attention at that length, forward + backward, ms");
    report("bigbird_ms_longest", timing.bigbird_ms.back(), "BigBird (b=64, r=3) at that length, ms");
    report("bigbird_ahead_from", timing.ahead_from, "the length from which BigBird is faster by over 10% (0: none measured)");
    for (size_t v = 0; v < patterns.size(); ++v)
      report(std::string("test_acc_") + kVariants[v].name, patterns[v].test_accuracy,
             cat("part 4: ", patterns[v].label, ", test sequences answered right"));
    report("window_within_reach", patterns[1].reach[0], cat("window only, keys at most ", flags.size.layers, " block(s) back (--layers)"));
    report("window_beyond_reach", patterns[1].reach[1], "window only, keys farther back");
    run.finish(metrics, notes,
               "docs/13_bigbird.md, section 5 (Which patterns find the key); then exercise 6: --layers 3, and watch "
               "window only's reach");
  });
}
