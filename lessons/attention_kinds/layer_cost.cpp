#include "lessons/attention_kinds/layer_cost.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "core/error.h"
#include "core/peak_memory.h"
#include "plot/plot.h"
#include "nn/attention/attention_workload.h"

namespace ladder::lessons {
namespace {

constexpr int kTokenTimings = 16;  // generated tokens timed, each after the same context

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// The fastest of `repeats` calls, in milliseconds (the least disturbed by other work on the machine).
double fastest_ms(const std::function<void()>& call, int repeats) {
  double best = INFINITY;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    call();
    best = std::min(best, elapsed_ms(start));
  }
  return best;
}

// One header cell per kind: its name and `suffix`, right-aligned in `width` characters.
void print_headers(const std::vector<CostKind>& kinds, const std::string& suffix, int width) {
  for (const CostKind& kind : kinds) std::printf(" %*s", width, (kind.name + suffix).c_str());
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

using Cell = std::optional<double>;  // a figure of a table, missing for a kind not measured there

// Each cell right-aligned in `width` characters with `decimals`, "-" where one is missing.
void print_cells(const std::vector<Cell>& cells, int width, int decimals) {
  for (const Cell& cell : cells)
    if (cell) std::printf(" %*.*f", width, decimals, *cell);
    else std::printf(" %*s", width, "-");
}

}  // namespace

LayerCost layer_cost(const nn::AttentionSettings& settings, int64_t n, Generator& gen) {
  const std::function<void()> call = nn::layer_training_step(settings, n, /*causal=*/true, gen);
  const auto start = std::chrono::steady_clock::now();
  const int64_t peak = peak_bytes_added(call);
  const double first_ms = elapsed_ms(start);
  return {std::min(first_ms, fastest_ms(call, first_ms > 1000 ? 1 : 3)), peak};
}

double token_ms(const nn::AttentionSettings& settings, int64_t context, Generator& gen) {
  return fastest_ms(nn::generated_token(settings, context, gen), kTokenTimings);
}

void add_max_n_option(harness::LessonCli& cli, int64_t& max_n, const std::string& part) {
  cli.option("--max-n", max_n, part + "the longest length and context, doubling from 256 (at least two of them)",
             {2 * kCostFirstLength, 65536});
}

std::vector<int64_t> doublings(int64_t max_n) {
  std::vector<int64_t> out;
  for (int64_t n = kCostFirstLength; n <= std::max<int64_t>(max_n, 2 * kCostFirstLength); n *= 2) out.push_back(n);
  return out;
}

Costs cost_against_length(harness::Run& run, const std::vector<CostKind>& kinds, int64_t max_n, Generator& gen) {
  const std::vector<int64_t> lengths = doublings(max_n);
  const CostKind& first = kinds.front();
  const auto measured = [](const CostKind& kind, int64_t n) { return kind.longest == 0 || n <= kind.longest; };
  Costs costs;

  std::vector<std::string> columns = {"n"};
  for (const CostKind& kind : kinds) columns.push_back(kind.name + "_ms");
  for (const CostKind& kind : kinds) columns.push_back(kind.name + "_peak_mib");
  harness::CsvWriter layer_csv(run.file("layer_cost.csv"), columns);
  std::printf("  peak MiB: the memory the first call's peak adds\n  %8s", "n");
  print_headers(kinds, " ms", 11);
  for (size_t i = 1; i < kinds.size(); ++i) std::printf(" %11s", (kinds[i].name + "/" + first.name).c_str());
  print_headers(kinds, " MiB", 11);
  std::printf("\n");
  std::map<std::string, std::vector<LayerCost>> layer;
  for (const int64_t n : lengths) {
    std::vector<Cell> times, ratios, peaks;  // one per kind, missing where it is not measured
    for (const CostKind& kind : kinds) {
      if (!measured(kind, n)) {
        times.emplace_back(), peaks.emplace_back();
        continue;
      }
      layer[kind.name].push_back(layer_cost(kind.settings, n, gen));
      times.emplace_back(layer[kind.name].back().ms);
      peaks.emplace_back(mib(layer[kind.name].back().peak_bytes));
    }
    for (size_t i = 1; i < kinds.size(); ++i) ratios.push_back(times[i] && times[0] ? Cell(*times[i] / *times[0]) : Cell());
    std::printf("  %8lld", static_cast<long long>(n));
    print_cells(times, 11, 2), print_cells(ratios, 11, 2), print_cells(peaks, 11, 1);
    std::printf("\n");
    std::vector<Cell> row = {static_cast<double>(n)};
    row.insert(row.end(), times.begin(), times.end());
    row.insert(row.end(), peaks.begin(), peaks.end());
    layer_csv.row_with_gaps(row);
  }

  // Lengths double: both axes of the time chart are logarithmic, so that a slope of 1 is linear and 2 quadratic.
  plot::LineChart time_chart{.title = "One attention layer, forward + backward (causal)", .x_label = "n (positions; k = 1024)",
                       .y_label = "milliseconds (log scale)", .log_y = true, .log2_x = true};
  plot::LineChart memory_chart{.title = "Memory its peak adds (forward + backward)", .x_label = "n (positions; k = 1024)",
                         .y_label = "MiB", .log2_x = true};
  std::printf("  time growth from n = %lld to %lld:", static_cast<long long>(lengths.back() / 2),
              static_cast<long long>(lengths.back()));
  for (const CostKind& kind : kinds) {
    const std::vector<LayerCost>& c = layer[kind.name];
    plot::Series time{kind.label, {}, {}}, memory{kind.label, {}, {}};
    for (size_t i = 0; i < c.size(); ++i) {
      const auto n = static_cast<double>(lengths[i]);
      time.x.push_back(n), time.y.push_back(c[i].ms);
      memory.x.push_back(n), memory.y.push_back(mib(c[i].peak_bytes));
    }
    time_chart.series.push_back(time), memory_chart.series.push_back(memory);
    costs.max_n[kind.name] = lengths[c.size() - 1];
    costs.at_max[kind.name] = c.back();
    costs.growth[kind.name] = c.back().ms / c[c.size() - 2].ms;
    std::printf(" %s x%.2f%s%s", kind.name.c_str(), costs.growth[kind.name],
                costs.max_n[kind.name] == lengths.back() ? "" : cat(" (to ", costs.max_n[kind.name], ")").c_str(),
                &kind == &kinds.back() ? "" : ",");
  }
  std::printf(" (quadratic: x4, linear: x2)\n");
  run.wrote(plot::save_line_chart(run.path("layer_time"), time_chart));
  run.wrote(plot::save_line_chart(run.path("layer_memory"), memory_chart));

  columns = {"context"};
  for (const CostKind& kind : kinds) columns.push_back(kind.name + "_ms_per_token");
  harness::CsvWriter token_csv(run.file("generation.csv"), columns);
  std::printf("  generating: %d tokens, one at a time, after the context\n  %8s", kTokenTimings, "context");
  for (const CostKind& kind : kinds) std::printf(" %20s", (kind.state + " ms/token").c_str());
  for (size_t i = 1; i < kinds.size(); ++i) std::printf(" %12s", (first.name + "/" + kinds[i].name).c_str());
  std::printf("\n");
  plot::LineChart token_chart{.title = "One generated token against the context already read",
                        .x_label = "context (positions; k = 1024)", .y_label = "milliseconds per token", .log2_x = true};
  for (const CostKind& kind : kinds) token_chart.series.push_back({kind.label + ": " + kind.state, {}, {}});
  for (const int64_t context : lengths) {
    std::vector<Cell> times, ratios;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (!measured(kinds[i], context)) {
        times.emplace_back();
        continue;
      }
      times.emplace_back(token_ms(kinds[i].settings, context, gen));
      token_chart.series[i].x.push_back(static_cast<double>(context)), token_chart.series[i].y.push_back(*times[i]);
      costs.token_at_max[kinds[i].name] = *times[i];
    }
    for (size_t i = 1; i < kinds.size(); ++i) ratios.push_back(times[0] && times[i] ? Cell(*times[0] / *times[i]) : Cell());
    std::printf("  %8lld", static_cast<long long>(context));
    print_cells(times, 20, 4), print_cells(ratios, 12, 1);
    std::printf("\n");
    std::vector<Cell> row = {static_cast<double>(context)};
    row.insert(row.end(), times.begin(), times.end());
    token_csv.row_with_gaps(row);
  }
  run.wrote(plot::save_line_chart(run.path("generation_time"), token_chart));
  return costs;
}

void add_cost_metrics(nlohmann::ordered_json& metrics, harness::MetricNotes& notes, const Costs& costs,
                      const std::vector<CostKind>& kinds, const std::string& part) {
  for (const CostKind& kind : kinds) {
    const std::string& name = kind.name;
    const std::string at = " at n = " + std::to_string(costs.max_n.at(name));
    metrics["layer_ms_" + name] = costs.at_max.at(name).ms;
    notes["layer_ms_" + name] = part + name + " attention, forward + backward" + at;
    metrics["layer_growth_" + name] = costs.growth.at(name);
    notes["layer_growth_" + name] = part + "its time" + at + " over its time at half that";
    metrics["layer_peak_mib_" + name] = mib(costs.at_max.at(name).peak_bytes);
    notes["layer_peak_mib_" + name] = part + "the memory its peak adds" + at;
    metrics["token_ms_" + name] = costs.token_at_max.at(name);
    notes["token_ms_" + name] =
        part + "one generated token after a context of " + std::to_string(costs.max_n.at(name)) + " (" + kind.state + ")";
  }
}

}  // namespace ladder::lessons
