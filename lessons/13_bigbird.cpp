// Lesson 13: BigBird's block-sparse attention, the parts that need no training.
//
//  1. the attention pattern as the paper draws it: the grid of (query block, key block) tiles, the
//     global, window and random ones in three colours, bidirectional and causal side by side; how
//     many tiles are computed against the dense count;
//  2. the task where distant tokens matter (data/retrieval.h): generated examples, printed one block
//     per line, the distance from the asked key to the question, the chance level;
//  3. the time of one attention layer (forward + backward) against the sequence length, full and
//     BigBird, and where BigBird gets ahead.
// The accuracy comparison (full, window-only, window + global and BigBird on the task) is to come.
// The note that goes with it: docs/13_bigbird.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/retrieval.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/plot_page.h"
#include "lessons/common/run.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/bigbird_pattern.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "13_bigbird";
constexpr int64_t kHeads = 4, kDim = 64;  // part 3: one layer of 4 heads of 64
constexpr int64_t kMaxDrawnBlocks = 128;  // more blocks than this make tiles too small to see

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
  std::printf("   a sliding window of 3 blocks moves information one block per layer: %lld layers before the\n"
              "   question can reach the nearest key; with global blocks 1 is enough, the question being in the\n"
              "   last block, which is global and sees every block\n",
              static_cast<long long>(facts.window_layers));
  std::printf("   chance level: 1 / %lld values = %.3f\n", static_cast<long long>(o.values), data::retrieval_chance(o));
  return facts;
}

// ---- 3. time against length ----

constexpr int64_t kTimingBlock = 64, kTimingRandom = 3;

// The best of up to three forward + backward calls of one bidirectional layer at this length, in
// milliseconds; fewer calls once two seconds are spent.
double layer_ms(nn::AttentionKind& kind, int64_t length, Generator& gen) {
  Tensor q = randn({1, kHeads, length, kDim}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
  const Tensor gout = randn(q.shape(), gen);
  for (Tensor* x : {&q, &k, &v}) x->requires_grad_();
  double best = 1e300, spent = 0;
  for (int call = 0; call < 3 && spent < 2000; ++call) {
    for (Tensor* x : {&q, &k, &v}) x->zero_grad();
    const auto start = std::chrono::steady_clock::now();
    kind.attend(q, k, v, {}).backward(gout);
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
  const std::shared_ptr<nn::AttentionKind> full = nn::make_attention({.kind = "full"});
  const std::shared_ptr<nn::AttentionKind> bigbird =
      nn::make_attention({.kind = "bigbird", .block = kTimingBlock, .random_blocks = kTimingRandom, .seed = seed});
  std::printf("\n== 3. one bidirectional attention layer, forward + backward, B=1 H=%lld D=%lld; BigBird b=%lld r=%lld ==\n",
              static_cast<long long>(kHeads), static_cast<long long>(kDim), static_cast<long long>(kTimingBlock),
              static_cast<long long>(kTimingRandom));
  std::printf("   %6s %10s %12s %8s %14s %12s\n", "n", "full ms", "BigBird ms", "full/BB", "tiles computed",
              "kept (both)");
  lessons::CsvWriter csv(run.file("timing.csv"),
                         {"n", "full_ms", "bigbird_ms", "bigbird_tiles", "dense_tiles", "kept_bytes"});
  Timing t;
  Generator gen(seed);
  for (int64_t n = 256; n <= max_n; n *= 2) {
    const double f = layer_ms(*full, n, gen), b = layer_ms(*bigbird, n, gen);
    const int64_t tiles = nn::bigbird_pattern(n, {.block = kTimingBlock, .random_blocks = kTimingRandom}).visible_blocks();
    const int64_t dense = (n / kTimingBlock) * (n / kTimingBlock);
    // The fused op keeps its output (B,H,T,D) and the rows' log-sum-exp (B,H,T) for backward,
    // whatever the pattern: it recomputes the weights instead of keeping them.
    const int64_t kept = 4 * kHeads * n * (kDim + 1);
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
       .series = {{.name = "full", .x = doublings, .y = t.full_ms},
                  {.name = "BigBird b=64 r=3", .x = doublings, .y = t.bigbird_ms}},
       .log_y = true,
       .x_tick = 1}));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson,
                           "Lesson 13: BigBird block-sparse attention: the pattern, the long-range retrieval task, time "
                           "against length.\n(No training yet: --steps, --lr and --batch do not apply.)",
                           {});
    int64_t length = 1024, block = 64, random = 3, max_n = 8192, examples = 2;
    data::RetrievalTaskOptions task{.length = 512, .min_distance = 256};
    cli.option("--length", length, "part 1: sequence length of the drawn pattern", {2, 1 << 16});
    cli.option("--block", block, "part 1 and the task's printout: positions per block b", {1, 4096});
    cli.option("--random", random, "part 1: random blocks r per query block", {0, 64});
    cli.option("--task-length", task.length, "part 2: tokens per sequence of the retrieval task", {6, 1 << 16});
    cli.option("--distance", task.min_distance, "part 2: the asked key at least this many positions back", {3, 1 << 16});
    cli.option("--keys", task.keys, "part 2: distinct keys", {2, 26});
    cli.option("--values", task.values, "part 2: distinct values (the classes)", {2, 10});
    cli.option("--distractors", task.distractors, "part 2: other key/value pairs per sequence", lessons::non_negative);
    cli.option("--examples", examples, "part 2: sequences printed", {0, 20});
    cli.option("--max-n", max_n, "part 3: the longest sequence timed (from 256, doubling)", {256, 1 << 15});
    cli.parse(argc, argv);
    if (length % block != 0)
      fail(kLesson, "--length ", length, " is not a multiple of --block ", block,
           ": the picture draws whole blocks; give --length ", (length / block + 1) * block, " or a --block that divides it");
    const int64_t blocks = length / block;
    // With m <= r + 4 blocks every query block lists them all (2 global + 3 window + r random).
    if (blocks < random + 5)
      fail(kLesson, "--length ", length, " / --block ", block, " = ", blocks,
           " blocks is too short for the pattern: each query block lists up to 2 global + 3 window + ", random,
           " random blocks, so every tile would be computed (full attention); give at least ", random + 5,
           " blocks: --length ", (random + 5) * block, " or more, or a smaller --block or --random");
    if (blocks > kMaxDrawnBlocks)
      fail(kLesson, "--length ", length, " / --block ", block, " = ", blocks, " blocks, more than ", kMaxDrawnBlocks,
           " would make tiles too small to see; give a larger --block or a shorter --length");
    if (task.min_distance >= task.length)
      fail(kLesson, "--distance ", task.min_distance, " must be below --task-length ", task.length,
           ": the asked key sits that far before the question's key at the end");
    task.seed = cli.common.seed;
    data::RetrievalTaskOptions no_sequences = task;  // the task's own checks, before any work
    no_sequences.train = no_sequences.val = no_sequences.test = 0;
    data::make_retrieval_task(no_sequences);
    int64_t sample = 1000;
    if (cli.common.quick) max_n = 512, sample = 100, examples = std::min<int64_t>(examples, 1);
    lessons::Run run(cli);

    const PatternCounts pattern = pattern_figure(run, length, block, random, cli.common.seed);
    const TaskFacts facts = show_task(task, block, examples, sample);
    const Timing timing = time_against_length(run, max_n, cli.common.seed);

    const double dense = static_cast<double>(pattern.blocks * pattern.blocks);
    run.finish({{"pattern_blocks", pattern.blocks},
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
                {"bigbird_ahead_from", timing.ahead_from}},
               {{"pattern_blocks", "part 1: blocks of --block positions in --length"},
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
                {"bigbird_ahead_from", "the length from which BigBird is faster by over 10% (0: none measured)"}},
               "docs/13_bigbird.md, section 1 (The pattern); then exercise 1: --random 0, and count the tiles");
  });
}
