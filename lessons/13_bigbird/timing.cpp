#include "lessons/13_bigbird/timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "plot/plot.h"
#include "nn/attention/attention_workload.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/bigbird_pattern.h"
#include "nn/attention/full_attention.h"

namespace ladder::lessons {

namespace {

constexpr int64_t kTimingBlock = 64, kTimingRandom = 3;  // BigBird's b and r in the timing

struct Timing {
  std::vector<double> lengths, full_ms, bigbird_ms;  // n = 256, 512, ... up to max_n
  int64_t ahead_from = 0;  // the first length from which BigBird is faster by over 10%; 0: none measured
};

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

}  // namespace

void time_against_length(harness::Run& run, int64_t max_n, uint64_t seed, harness::Summary& summary) {
  const nn::AttentionSettings full = nn::full_attention();
  const nn::AttentionSettings bigbird =
      nn::bigbird_attention_settings({.block = kTimingBlock, .random_blocks = kTimingRandom, .seed = seed});
  std::printf("\n== 3. one bidirectional attention layer, forward + backward, B=1 H=%lld D=%lld; BigBird b=%lld r=%lld ==\n",
              static_cast<long long>(nn::kWorkloadHeads), static_cast<long long>(nn::kWorkloadHeadDim),
              static_cast<long long>(kTimingBlock), static_cast<long long>(kTimingRandom));
  std::printf("   %6s %10s %12s %8s %14s %12s\n", "n", "full ms", "BigBird ms", "full/BB", "tiles computed",
              "kept (both)");
  harness::CsvWriter csv(run.file("timing.csv"), {"n", "full_ms", "bigbird_ms", "bigbird_tiles", "dense_tiles", "kept_bytes"});
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
  run.wrote(plot::save_line_chart(
      run.path("attention_time"),
      {.title = "One attention layer, forward + backward (B=1, H=4, D=64)",
       .x_label = "sequence length n (k = 1024)",
       .y_label = "milliseconds (best of up to 3)",
       .series = {{.name = nn::FullAttention::kName, .x = t.lengths, .y = t.full_ms},
                  {.name = "BigBird b=64 r=3", .x = t.lengths, .y = t.bigbird_ms}},
       .log_y = true,
       .log2_x = true}));
  summary.report("longest_n_timed", static_cast<int64_t>(t.lengths.back()), "part 3: the longest sequence timed");
  summary.report("full_ms_longest", t.full_ms.back(), "full attention at that length, forward + backward, ms");
  summary.report("bigbird_ms_longest", t.bigbird_ms.back(), "BigBird (b=64, r=3) at that length, ms");
  summary.report("bigbird_ahead_from", t.ahead_from, "the length from which BigBird is faster by over 10% (0: none measured)");
}

}  // namespace ladder::lessons
