#include "lessons/15_long_range/capacity.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "models/predictions.h"
#include "plot/plot.h"

namespace ladder::lessons {

void report_capacity(harness::Run& run, const std::vector<KindCapacity>& kinds, double chance, harness::Summary& summary) {
  if (kinds.empty()) fail("report_capacity", "no kinds to report");
  const std::vector<CapacityPoint>& first = kinds.front().points;
  for (const KindCapacity& kind : kinds)
    if (kind.points.size() != first.size())
      fail("report_capacity", kind.name, " has ", kind.points.size(), " counts of pairs, ", kinds.front().name, " ",
           first.size(), "; every kind needs the same");
  std::printf("\n   test accuracy on multi-query recall (one token per pair):\n   %-16s",
              "kind \\ pairs");
  for (const CapacityPoint& p : first) std::printf(" %13lld", static_cast<long long>(p.pairs));
  std::printf("\n");
  harness::CsvWriter csv(run.file("capacity.csv"), {"kind", "pairs", "length", "state_numbers", "test_acc", "test_se", "answers"});
  // The pairs double, and the states span decades: both on a log2 axis.
  plot::LineChart by_pairs{.title = "Multi-query recall: test accuracy against the key-value pairs",
                     .x_label = "key-value pairs per sequence", .y_label = "test accuracy (%)", .log2_x = true};
  plot::LineChart by_state{.title = "Multi-query recall: test accuracy against the state a query reads",
                     .x_label = "numbers per head (k = 1024)", .y_label = "test accuracy (%)", .log2_x = true};
  for (const KindCapacity& kind : kinds) {
    std::printf("   %-16s", kind.name.c_str());
    plot::Series line{kind.name}, dots{kind.name, {}, {}, true};
    for (const CapacityPoint& p : kind.points) {
      const double se = models::standard_error(p.accuracy, p.answers);
      std::printf(" %7.1f%% +-%3.1f", 100 * p.accuracy, 100 * se);
      csv.row({kind.name, std::to_string(p.pairs), std::to_string(p.length), std::to_string(p.state),
               std::to_string(p.accuracy), std::to_string(se), std::to_string(p.answers)});
      summary.report(cat("recall_acc_", kind.name, "_", p.pairs), p.accuracy,
                     cat("part 4: ", kind.name, ", ", p.pairs, " pairs, test accuracy"));
      line.x.push_back(static_cast<double>(p.pairs)), line.y.push_back(100 * p.accuracy);
      if (p.state > 0) dots.x.push_back(static_cast<double>(p.state)), dots.y.push_back(100 * p.accuracy);
    }
    std::printf("\n");
    by_pairs.series.push_back(line);
    if (!dots.x.empty()) by_state.series.push_back(dots);
  }
  std::printf("   chance %.1f%%; the state a query reads, numbers per head (capacity.csv has every count):\n   %-16s",
              100 * chance, "kind \\ pairs");
  for (const CapacityPoint& p : first) std::printf(" %13lld", static_cast<long long>(p.pairs));
  std::printf("\n");
  for (const KindCapacity& kind : kinds) {
    std::printf("   %-16s", kind.name.c_str());
    for (const CapacityPoint& p : kind.points) std::printf(" %13lld", static_cast<long long>(p.state));
    std::printf("\n");
  }
  const double fewest = static_cast<double>(first.front().pairs), most = static_cast<double>(first.back().pairs);
  by_pairs.series.push_back({cat("chance, ", plot::percent_label(chance)), {fewest, most}, {100 * chance, 100 * chance}});
  run.wrote(plot::save_line_chart(run.path("recall_pairs"), by_pairs));
  run.wrote(plot::save_line_chart(run.path("recall_state"), by_state));
}

}  // namespace ladder::lessons
