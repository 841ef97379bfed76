#include "lessons/17_delta_rule/recall_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "models/predictions.h"
#include "plot/plot.h"

namespace ladder::lessons {

void report_recall_state(harness::Run& run, const std::vector<RecallPoint>& points, double chance, harness::Summary& summary) {
  if (points.empty()) fail("report_recall_state", "no results to report");
  std::vector<int64_t> pairs;
  std::vector<std::pair<std::string, int64_t>> rows;  // (kind, head width), in the order trained
  for (const RecallPoint& p : points) {
    if (std::find(pairs.begin(), pairs.end(), p.pairs) == pairs.end()) pairs.push_back(p.pairs);
    if (std::find(rows.begin(), rows.end(), std::make_pair(p.kind, p.head_dim)) == rows.end()) rows.emplace_back(p.kind, p.head_dim);
  }
  std::sort(pairs.begin(), pairs.end());
  const auto at = [&](const std::pair<std::string, int64_t>& row, int64_t count) -> const RecallPoint* {
    for (const RecallPoint& p : points)
      if (p.kind == row.first && p.head_dim == row.second && p.pairs == count) return &p;
    return nullptr;
  };
  std::printf("\n   test accuracy on multi-query recall (one token per pair), and the state a query reads:\n"
              "   %-12s %5s %12s", "kind", "D", "state/head");
  for (const int64_t count : pairs) std::printf(" %11lld pairs", static_cast<long long>(count));
  std::printf("\n");
  harness::CsvWriter csv(run.file("recall_state.csv"),
                         {"kind", "head_dim", "pairs", "state_numbers", "test_acc", "test_se", "answers"});
  plot::LineChart chart{.title = cat("Multi-query recall at ", pairs.back(), " pairs: accuracy against the state"),
                        .x_label = "numbers per head the queries read (k = 1024)", .y_label = "test accuracy (%)",
                        .log2_x = true};
  std::string kind_of_line;
  for (const auto& row : rows) {
    const RecallPoint* first = at(row, pairs.front());
    std::printf("   %-12s %5lld %12lld", row.first.c_str(), static_cast<long long>(row.second),
                static_cast<long long>(first ? first->state : 0));
    for (const int64_t count : pairs) {
      const RecallPoint* p = at(row, count);
      if (!p) {
        std::printf(" %17s", "-");
        continue;
      }
      const double se = models::standard_error(p->accuracy, p->answers);
      std::printf(" %9.1f%% +-%4.1f", 100 * p->accuracy, 100 * se);
      csv.row({p->kind, std::to_string(p->head_dim), std::to_string(p->pairs), std::to_string(p->state),
               std::to_string(p->accuracy), std::to_string(se), std::to_string(p->answers)});
      summary.report(cat("recall_acc_", p->kind, "_", p->head_dim, "_", p->pairs), p->accuracy,
                     cat("part 3: ", p->kind, ", heads of ", p->head_dim, ", ", p->pairs, " pairs, test accuracy"));
    }
    std::printf("\n");
    if (const RecallPoint* most = at(row, pairs.back())) {
      if (row.first != kind_of_line) chart.series.push_back({row.first, {}, {}}), kind_of_line = row.first;
      chart.series.back().x.push_back(static_cast<double>(most->state));
      chart.series.back().y.push_back(100 * most->accuracy);
    }
  }
  std::printf("   chance %.1f%%; full attention's state is its KV cache, %lld pairs' here (the chart: %lld pairs')\n",
              100 * chance, static_cast<long long>(pairs.front()), static_cast<long long>(pairs.back()));
  double fewest = INFINITY, most = 0;
  for (plot::Series& line : chart.series) {
    if (line.x.size() == 1) line.dots = true;  // a kind run at one width is a point, not a line
    fewest = std::min(fewest, line.x.front()), most = std::max(most, line.x.back());
  }
  chart.series.push_back({cat("chance, ", plot::percent_label(chance)), {fewest, most}, {100 * chance, 100 * chance}});
  run.wrote(plot::save_line_chart(run.path("recall_state"), chart));
}

}  // namespace ladder::lessons
