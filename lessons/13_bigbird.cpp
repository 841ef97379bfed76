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
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/retrieval.h"
#include "models/encoder_classifier.h"
#include "lessons/common/classifier_training.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/plot_page.h"
#include "lessons/common/run.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_workload.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/bigbird_pattern.h"
#include "nn/attention/full_attention.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "13_bigbird";
constexpr int64_t kMaxDrawnBlocks = 128;  // more blocks than this make tiles too small to see
constexpr int64_t kDefaultSteps = 600;     // part 4: training steps of each of the four classifiers

// ---- 1. the pattern ----

// The colour of each role (global, window, random): series colours 1, 0 and 2 of the plot kit
// (orange, blue, green); tiles not computed stay white.
PLINT role_colour(nn::BlockRole role) {
  switch (role) {
    case nn::BlockRole::global: return lessons::page::series_colour(1);
    case nn::BlockRole::window: return lessons::page::series_colour(0);
    case nn::BlockRole::random: return lessons::page::series_colour(2);
  }
  return 1;  // not reached: every role is listed above
}

void fill_cell(double x0, double y0, double x1, double y1) {
  PLFLT xs[] = {x0, x1, x1, x0}, ys[] = {y0, y0, y1, y1};
  plfill(4, xs, ys);
}

// One pattern in the square viewport (x0..x1, y0..y1 of the page): query block 0 at the top, key
// block 0 on the left, as in the paper's figure. Tile (i, j) is centred on (j, i), so that the tick
// labels name blocks.
void draw_pattern(const nn::BlockPattern& p, const std::string& title, double x0, double x1, double y0, double y1) {
  const double low = -0.5, high = static_cast<double>(p.blocks) - 0.5;
  plvpas(x0, x1, y0, y1, 1.0);
  plwind(low, high, high, low);
  for (int64_t i = 0; i < p.blocks; ++i)
    for (size_t c = 0; c < p.keys[i].size(); ++c) {
      plcol0(role_colour(p.roles[i][c]));
      const auto row = static_cast<double>(i), col = static_cast<double>(p.keys[i][c]);
      fill_cell(col - 0.5, row - 0.5, col + 0.5, row + 0.5);
    }
  plcol0(2);  // light grey lines between the tiles
  for (int64_t b = 1; b < p.blocks; ++b) {
    const double edge = static_cast<double>(b) - 0.5;
    pljoin(edge, low, edge, high);
    pljoin(low, edge, high, edge);
  }
  plcol0(1);
  const double tick = p.blocks <= 16 ? 2 : p.blocks <= 64 ? 8 : 16;
  plbox("bcnt", tick, 0, "bcntv", tick, 0);
  plschr(0, lessons::page::kTextScale);
  plmtex("t", 1.2, 0.5, 0.5, title.c_str());
  plmtex("b", 2.8, 0.5, 0.5, "key block");
  plmtex("l", 3.4, 0.5, 0.5, "query block");
}

// The page's title at the top and a legend of filled squares along the bottom.
void draw_title_and_legend(const std::string& title, const std::vector<std::pair<std::string, PLINT>>& entries) {
  plvpor(0, 1, 0, 1);
  plwind(0, 1, 0, 1);
  plcol0(1);
  plschr(0, 1.3);
  plptex(0.5, 0.955, 1, 0, 0.5, title.c_str());
  plschr(0, lessons::page::kTextScale);
  double x = 0.18;
  for (const auto& [name, colour] : entries) {
    plcol0(colour);
    fill_cell(x, 0.02, x + 0.018, 0.052);
    plcol0(1);
    PLFLT xs[] = {x, x + 0.018, x + 0.018, x, x}, ys[] = {0.02, 0.02, 0.052, 0.052, 0.02};
    plline(5, xs, ys);
    plptex(x + 0.026, 0.028, 1, 0, 0, name.c_str());
    x += 0.026 + 0.012 * static_cast<double>(name.size()) + 0.04;
  }
}

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
  const std::string title = cat("BigBird's attention pattern: n = ", length, ", blocks of b = ", block, ", r = ", random,
                                 " random blocks per query block");
  run.wrote(lessons::page::render_both(
      kLesson, run.path("pattern"),
      [&] {
        draw_pattern(both, "bidirectional (ITC)", 0.06, 0.48, 0.19, 0.88);
        draw_pattern(causal, "causal", 0.55, 0.97, 0.19, 0.88);
        draw_title_and_legend(title, {{"global", role_colour(nn::BlockRole::global)},
                                      {"window", role_colour(nn::BlockRole::window)},
                                      {"random", role_colour(nn::BlockRole::random)},
                                      {"not computed", 0}});  // cmap0 colour 0: the page's white
      },
      1400, 800));
  return counts;
}

}  // namespace

namespace {

// ---- 2. the task ----

struct TaskFacts {
  int64_t nearest = 0, farthest = 0;  // the asked key's distance to the question's key, over the sample
  double mean = 0;
  int64_t window_layers = 0;  // sliding-window layers needed to bring the key to the question, at least
};

// One sequence, a block per line, the asked pair and the question marked underneath.
void print_example(const data::RetrievalSet& set, int64_t n, const data::RetrievalTaskOptions& o, int64_t block) {
  const std::string text = data::retrieval_text(set, n, o);
  const int64_t key = set.key_positions[n], length = o.length;
  std::printf("   answer %d, the asked key at position %lld, %lld positions before the question's key:\n",
              static_cast<int>(set.answers.data()[n]), static_cast<long long>(key),
              static_cast<long long>(length - 1 - key));
  for (int64_t start = 0; start < length; start += block) {
    const int64_t end = std::min(length, start + block);
    std::printf("   block %3lld | %s\n", static_cast<long long>(start / block),
                text.substr(static_cast<size_t>(start), static_cast<size_t>(end - start)).c_str());
    std::string marks(static_cast<size_t>(end - start), ' ');
    for (const int64_t marked : {key, key + 1, length - 2, length - 1})
      if (marked >= start && marked < end) marks[static_cast<size_t>(marked - start)] = '^';
    if (marks.find('^') != std::string::npos)
      std::printf("             %s\n", marks.substr(0, marks.find_last_not_of(' ') + 1).c_str());
  }
}

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
  for (int64_t n = 0; n < std::min(examples, sample); ++n) print_example(set, n, o, block);
  TaskFacts facts{o.length, 0, 0, o.length};
  const int64_t question_block = (o.length - 1) / block;
  for (const int64_t key : set.key_positions) {
    const int64_t distance = o.length - 1 - key;
    facts.nearest = std::min(facts.nearest, distance);
    facts.farthest = std::max(facts.farthest, distance);
    facts.mean += static_cast<double>(distance) / static_cast<double>(sample);
    facts.window_layers = std::min(facts.window_layers, question_block - key / block);
  }
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
              static_cast<long long>(kTimingBlock),
              static_cast<long long>(kTimingRandom));
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

struct ModelSize {
  int64_t width = 64, layers = 1, heads = 4;
};

struct Comparison {
  std::vector<std::string> labels;
  std::vector<double> test_accuracy, ms_per_step, within_reach, beyond_reach;
  std::vector<std::vector<double>> by_blocks_back;  // [variant][blocks between key and question]: accuracy
  std::vector<int64_t> counts;                      // test sequences per number of blocks back
  std::vector<lessons::Series> val_curves;
};

// How many blocks back from the question's block the asked key sits, per test sequence.
std::vector<int64_t> blocks_back(const data::RetrievalSet& set, int64_t length, int64_t block) {
  std::vector<int64_t> back;
  for (const int64_t key : set.key_positions) back.push_back((length - 1) / block - key / block);
  return back;
}

Comparison compare_patterns(lessons::Run& run, const data::RetrievalSplits& task, const data::RetrievalTaskOptions& o,
                            const ModelSize& size, const lessons::ClassifierTraining& training, int64_t block,
                            int64_t random, uint64_t seed) {
  const int64_t blocks = (o.length + block - 1) / block;
  std::printf("\n== 4. the four patterns trained on the task: n = %lld, blocks of %lld, r = %lld ==\n",
              static_cast<long long>(o.length), static_cast<long long>(block), static_cast<long long>(random));
  std::printf("   EncoderClassifier (each pair one token, the answer read at the question's key): %lld layer(s), "
              "%lld heads,\n   %lld wide; %lld steps of batch %lld, lr %g; %lld training sequences, %lld validation, "
              "%lld test;\n   the same initial weights and batches for all four\n",
              static_cast<long long>(size.layers), static_cast<long long>(size.heads),
              static_cast<long long>(size.width), static_cast<long long>(training.steps),
              static_cast<long long>(training.batch), static_cast<double>(training.lr),
              static_cast<long long>(task.train.tokens.size(0)), static_cast<long long>(task.val.tokens.size(0)),
              static_cast<long long>(task.test.tokens.size(0)));
  const std::vector<int64_t> back = blocks_back(task.test, o.length, block);
  const auto as_pairs = [&](const data::RetrievalSet& set) {  // each pair one token (data::pair_tokens)
    const data::RetrievalSet paired = data::pair_tokens(set, o);
    return lessons::LabelledSequences{paired.tokens, paired.answers};
  };
  const lessons::LabelledSequences train = as_pairs(task.train), val = as_pairs(task.val), test_set = as_pairs(task.test);
  Comparison c;
  c.counts.assign(static_cast<size_t>(blocks), 0);
  for (const int64_t b : back) ++c.counts[static_cast<size_t>(b)];
  for (const Variant& v : kVariants) {
    std::printf("-- %s\n", v.label);
    Generator init(seed);  // the same initial weights for every variant: the kinds have no parameters
    models::EncoderClassifier model({.vocab_size = data::paired_vocabulary(o),
                                     .num_classes = o.values,
                                     .max_len = o.length,
                                     .d_model = size.width,
                                     .nhead = size.heads,
                                     .num_layers = size.layers,
                                     .dim_feedforward = 2 * size.width,
                                     .pooling = models::Pooling::last,  // the question's key, which sees the asked pair
                                     .attention = attention_of(v, block, random, seed)},
                                    init);
    const lessons::ClassifierReport report = lessons::train_classifier(
        run, model, train, val, training, v.label, std::string("train_") + v.name + ".csv");
    const lessons::Predictions test = lessons::predict(model, test_set, training.batch);
    std::vector<double> correct(static_cast<size_t>(blocks), 0);
    double near = 0, near_count = 0, far = 0, far_count = 0;
    for (size_t n = 0; n < back.size(); ++n) {
      const bool right = test.classes[n] == static_cast<int64_t>(task.test.answers.data()[n]);
      correct[static_cast<size_t>(back[n])] += right ? 1 : 0;
      const bool within = back[n] <= size.layers;  // a window of 3 blocks moves one block per layer
      (within ? near : far) += right ? 1 : 0;
      (within ? near_count : far_count) += 1;
    }
    for (size_t b = 0; b < correct.size(); ++b)
      correct[b] = c.counts[b] ? correct[b] / static_cast<double>(c.counts[b]) : NAN;
    c.labels.push_back(v.label);
    c.test_accuracy.push_back(test.accuracy);
    c.ms_per_step.push_back(1000 * report.step_seconds);
    c.within_reach.push_back(near_count > 0 ? near / near_count : NAN);
    c.beyond_reach.push_back(far_count > 0 ? far / far_count : NAN);
    c.by_blocks_back.push_back(correct);
    c.val_curves.push_back(report.val_loss_curve);
  }
  return c;
}

void print_comparison(const Comparison& c, const data::RetrievalTaskOptions& o, int64_t steps, int64_t layers) {
  std::printf("\n   test accuracy (chance %.3f), %lld steps each; 'within reach': the key at most %lld block(s) back "
              "(as many as\n   the layers: each moves information one block through a window of 3)\n",
              data::retrieval_chance(o), static_cast<long long>(steps), static_cast<long long>(layers));
  std::printf("   %-16s %10s %14s %14s %12s\n", "pattern", "test acc", "within reach", "beyond reach", "ms per step");
  for (size_t v = 0; v < c.labels.size(); ++v)
    std::printf("   %-16s %10.3f %14.3f %14.3f %12.1f\n", c.labels[v].c_str(), c.test_accuracy[v], c.within_reach[v],
                c.beyond_reach[v], c.ms_per_step[v]);
  std::printf("\n   accuracy by how many blocks back the asked key sits (0: in the question's block)\n   %6s %6s",
              "blocks", "count");
  for (const std::string& label : c.labels) std::printf(" %16s", label.c_str());
  std::printf("\n");
  for (size_t b = 0; b < c.counts.size(); ++b) {
    if (c.counts[b] == 0) continue;
    std::printf("   %6zu %6lld", b, static_cast<long long>(c.counts[b]));
    for (const auto& accuracy : c.by_blocks_back) std::printf(" %16.3f", accuracy[b]);
    std::printf("\n");
  }
}

void plot_comparison(lessons::Run& run, const Comparison& c, const data::RetrievalTaskOptions& o, int64_t block) {
  std::vector<std::string> columns{"blocks_back", "count"};
  for (const Variant& v : kVariants) columns.push_back(std::string("acc_") + v.name);
  lessons::CsvWriter csv(run.file("accuracy_by_distance.csv"), columns);
  for (size_t b = 0; b < c.counts.size(); ++b) {
    std::vector<double> row{static_cast<double>(b), static_cast<double>(c.counts[b])};
    for (const auto& accuracy : c.by_blocks_back) row.push_back(accuracy[b]);
    csv.row(row);
  }
  std::vector<lessons::Series> by_distance;
  for (size_t v = 0; v < c.labels.size(); ++v) {
    lessons::Series s{.name = c.labels[v]};
    for (size_t b = 0; b < c.counts.size(); ++b) {
      if (c.counts[b] == 0) continue;
      s.x.push_back(static_cast<double>(b));
      s.y.push_back(c.by_blocks_back[v][b]);
    }
    by_distance.push_back(s);
  }
  by_distance.push_back({.name = "chance",
                         .x = {0, static_cast<double>(c.counts.size() - 1)},
                         .y = {data::retrieval_chance(o), data::retrieval_chance(o)}});
  run.wrote(lessons::save_line_chart(
      run.path("accuracy_by_distance"),
      {.title = cat("Test accuracy by the asked key's distance (n = ", o.length, ", blocks of ", block, ")"),
       .x_label = "blocks between the asked key and the question",
       .y_label = "test accuracy",
       .series = by_distance,
       .x_tick = c.counts.size() <= 20 ? 1.0 : 0.0}));
  run.wrote(lessons::save_line_chart(run.path("validation_loss"),
                                     {.title = "Validation loss of the four patterns, same model and budget",
                                      .x_label = "step",
                                      .y_label = "cross-entropy (nats)",
                                      .series = c.val_curves}));
}

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson,
                           "Lesson 13: BigBird block-sparse attention: the pattern, the long-range retrieval task, time "
                           "against length, and full attention, the window alone, window + global and BigBird "
                           "trained on the task.",
                           {.steps = kDefaultSteps, .lr = 1.5e-3f, .batch = 32});
    int64_t length = 128, block = 8, random = 3, max_n = 8192, examples = 2;
    int64_t test_size = 2000;
    data::RetrievalTaskOptions task{.length = 128, .min_distance = 8, .train = 20000, .val = 500};
    ModelSize size;
    lessons::ClassifierTraining training{.warmup = 50};
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
    cli.option("--test-size", test_size, "part 4: test sequences", {10, 1 << 20});
    cli.option("--warmup", training.warmup, "part 4: steps of linear learning-rate warmup before the cosine decay",
               lessons::non_negative);
    cli.parse(argc, argv);
    if (length % block != 0)
      fail(kLesson, "--length ", length, " is not a multiple of --attention-block ", block,
           ": the picture draws whole blocks; give --length ", (length / block + 1) * block, " or a --attention-block that divides it");
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
    task.seed = cli.common.seed;
    data::RetrievalTaskOptions no_sequences = task;  // the task's own checks, before any work
    no_sequences.train = no_sequences.val = no_sequences.test = 0;
    data::make_retrieval_task(no_sequences);
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
    if (!cli.given("--warmup")) training.warmup = std::min(training.warmup, cli.common.steps / 10);
    if (training.warmup >= cli.common.steps)
      fail(kLesson, "--warmup ", training.warmup, " leaves no step of --steps ", cli.common.steps,
           " for the cosine decay; give a smaller --warmup");
    int64_t sample = 1000;
    if (cli.common.quick) {
      max_n = 512, sample = 100, examples = std::min<int64_t>(examples, 1);
      cli.common.steps = std::min<int64_t>(cli.common.steps, 4);
      training.warmup = std::min<int64_t>(training.warmup, 1);
      task.train = std::min<int64_t>(task.train, 64), task.val = 32, test_size = std::min<int64_t>(test_size, 64);
      size.layers = std::min<int64_t>(size.layers, 1);
    }
    task.test = test_size;
    training.steps = cli.common.steps, training.batch = cli.common.batch, training.lr = cli.common.lr;
    training.eval_every = std::max<int64_t>(1, training.steps / 10), training.seed = cli.common.seed + 1;
    lessons::Run run(cli);

    const PatternCounts pattern = pattern_figure(run, length, block, random, cli.common.seed);
    const TaskFacts facts = show_task(task, block, examples, sample);
    const Timing timing = time_against_length(run, max_n, cli.common.seed);
    const Comparison comparison = compare_patterns(run, data::make_retrieval_task(task), task, size, training, block,
                                                   random, cli.common.seed);
    print_comparison(comparison, task, training.steps, size.layers);
    plot_comparison(run, comparison, task, block);

    const double dense = static_cast<double>(pattern.blocks * pattern.blocks);
    nlohmann::ordered_json metrics = {{"pattern_blocks", pattern.blocks},
                                      {"tiles_bidirectional", pattern.bidirectional},
                                      {"tiles_causal", pattern.causal},
                                      {"tiles_dense", pattern.blocks * pattern.blocks},
                                      {"computed_share_bidirectional", static_cast<double>(pattern.bidirectional) / dense},
                                      {"task_chance", data::retrieval_chance(task)},
                                      {"task_nearest_key", facts.nearest},
                                      {"task_mean_distance", facts.mean},
                                      {"window_layers_needed", facts.window_layers},
                                      {"longest_n_timed", static_cast<int64_t>(timing.lengths.back())},
                                      {"full_ms_longest", timing.full_ms.back()},
                                      {"bigbird_ms_longest", timing.bigbird_ms.back()},
                                      {"bigbird_ahead_from", timing.ahead_from}};
    lessons::MetricNotes notes = {
        {"pattern_blocks", "part 1: blocks of --attention-block positions in --length"},
        {"tiles_bidirectional", "(query block, key block) tiles BigBird computes, bidirectional"},
        {"tiles_causal", "the same, causal"},
        {"tiles_dense", "the tiles of full attention"},
        {"computed_share_bidirectional", "tiles_bidirectional / tiles_dense"},
        {"task_chance", "part 2: accuracy of guessing, 1 / --values"},
        {"task_nearest_key", "the smallest distance from the asked key to the question's key, positions"},
        {"task_mean_distance", "the mean of that distance"},
        {"window_layers_needed", "sliding-window layers before the question can reach the nearest key"},
        {"longest_n_timed", "part 3: the longest sequence timed"},
        {"full_ms_longest", "full attention at that length, forward + backward, ms"},
        {"bigbird_ms_longest", "BigBird (b=64, r=3) at that length, ms"},
        {"bigbird_ahead_from", "the length from which BigBird is faster by over 10% (0: none measured)"}};
    for (size_t v = 0; v < comparison.labels.size(); ++v) {
      const std::string name = std::string("test_acc_") + kVariants[v].name;
      metrics[name] = comparison.test_accuracy[v];
      notes[name] = cat("part 4: ", comparison.labels[v], ", test sequences answered right");
    }
    metrics["window_within_reach"] = comparison.within_reach[1];
    metrics["window_beyond_reach"] = comparison.beyond_reach[1];
    notes["window_within_reach"] = cat("window only, keys at most ", size.layers, " block(s) back (--layers)");
    notes["window_beyond_reach"] = "window only, keys farther back";
    run.finish(metrics, notes,
               "docs/13_bigbird.md, section 5 (Which patterns find the key); then exercise 6: --layers 3, and watch "
               "window only's reach");
  });
}
