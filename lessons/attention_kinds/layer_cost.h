// What attention kinds cost against the sequence length, as lessons 12, 14 and 17 measure it: the work
// ./ladder bench attention times too (nn/attention/attention_workload.h), one causal training step
// of a layer at B=1, H=4, D=64, timed and its peak memory measured at n = 256, 512, ... up to a
// maximum; and the time of one generated token against the context already read, each kind carrying
// its own state (full attention's KV cache, linear attention's fixed sum, Transformer-VQ's per-code
// cache). Prints the tables, writes layer_cost.csv, layer_time, layer_memory, generation.csv and
// generation_time into the run folder.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/random.h"
#include "harness/cli.h"
#include "harness/run.h"
#include "nn/attention/attention_kind.h"

namespace ladder::lessons {

inline constexpr int64_t kCostFirstLength = 256;

struct CostKind {
  std::string name;   // in tables, CSV columns and metric names: full
  std::string label;  // in the legends: "softmax (full, fused)"
  std::string state;  // what it carries when generating, for the legend and the table: "KV cache"
  nn::AttentionSettings settings;
  int64_t longest = 0;  // measured up to this n and context; 0: at every one (full attention's n^2 takes minutes at 32k)
};

struct LayerCost {
  double ms = 0;           // the fastest of the calls
  int64_t peak_bytes = 0;  // what the first call's peak adds
};

// One causal training step of a layer of `settings` at length n (nn::layer_training_step): the memory
// the first call's peak adds (the gradients of q, k and v included, as ./ladder bench attention
// counts it), and the fastest of the calls.
LayerCost layer_cost(const nn::AttentionSettings& settings, int64_t n, Generator& gen);

// Milliseconds for one generated token after a context of `context` positions
// (nn::generated_token): the fastest of 16.
double token_ms(const nn::AttentionSettings& settings, int64_t context, Generator& gen);

struct Costs {
  std::map<std::string, int64_t> max_n;        // kind -> the longest n (and context) it was measured at
  std::map<std::string, LayerCost> at_max;     // kind -> its layer at its max_n
  std::map<std::string, double> growth;        // kind -> t(max_n) / t(max_n / 2)
  std::map<std::string, double> token_at_max;  // kind -> ms per token after a context of its max_n
};

// --max-n, the longest length measured, its help starting with `part` ("part 4: ").
void add_max_n_option(harness::LessonCli& cli, int64_t& max_n, const std::string& part);

// The lengths measured: 256, 512, ... up to `max_n` (at least 512).
std::vector<int64_t> doublings(int64_t max_n);

// layer_ms_NAME, layer_growth_NAME, layer_peak_mib_NAME and token_ms_NAME for each kind, at the
// longest n it was measured at, noted as "<part>...".
void add_cost_metrics(nlohmann::ordered_json& metrics, harness::MetricNotes& notes, const Costs& costs,
                      const std::vector<CostKind>& kinds, const std::string& part);

// Both measurements for every kind at every length of doublings(max_n) up to its `longest`: tables
// on stdout (each kind's time beside the first kind's, "-" where one was not measured), the CSVs
// (empty cells there) and the plots in `run`'s folder.
Costs cost_against_length(harness::Run& run, const std::vector<CostKind>& kinds, int64_t max_n, Generator& gen);

}  // namespace ladder::lessons
