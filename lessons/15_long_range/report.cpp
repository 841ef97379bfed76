#include "lessons/15_long_range/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "models/predictions.h"

namespace ladder::lessons {

namespace {

// Accuracy against speed, a dot per contender whose area grows with the memory it used, and the
// chance and most-common-answer levels as lines; and the training losses.
void charts(harness::Run& run, const TaskResults& task) {
  double most_memory = 0, fastest = 0;
  for (const ContenderResult& r : task.contenders)
    most_memory = std::max(most_memory, r.peak_mib), fastest = std::max(fastest, r.steps_per_s);
  plot::LineChart chart{task.title + ": test accuracy against training speed (dot area: peak memory)",
                  "training steps per second", "test accuracy (%)", {}};
  plot::LineChart losses{task.title + ": training loss (cross entropy, nats)", "step", "training loss", {}};
  for (const ContenderResult& r : task.contenders) {
    const double size = most_memory > 0 ? 4 * std::sqrt(r.peak_mib / most_memory) : 1;
    chart.series.push_back({cat(r.name, ", ", std::round(10 * r.peak_mib) / 10, " MiB"), {r.steps_per_s},
                            {100 * r.test_acc}, true, std::max(1.0, size)});
    losses.series.push_back(r.curve);
  }
  for (plot::Series& level : plot::baseline_lines(task.chance, task.majority, 0, fastest)) chart.series.push_back(level);
  run.wrote(plot::save_line_chart(run.path("accuracy_speed_" + task.name), chart));
  run.wrote(plot::save_line_chart(run.path("loss_" + task.name), losses));
}

}  // namespace

void report_benchmark(harness::Run& run, const std::vector<TaskResults>& tasks, harness::Summary& summary) {
  if (tasks.empty()) fail("report_benchmark", "no tasks to report");
  std::vector<std::string> names;  // every contender, in the order they first appear
  for (const TaskResults& task : tasks)
    for (const ContenderResult& r : task.contenders)
      if (std::find(names.begin(), names.end(), r.name) == names.end()) names.push_back(r.name);
  std::printf("\n== 3. results (test accuracy with its standard error; steps/s and peak MiB of a training step) ==\n"
              "   %-16s", "kind");
  for (const TaskResults& task : tasks) std::printf(" %24s %8s %9s", task.title.c_str(), "steps/s", "peak MiB");
  std::printf("\n");
  harness::CsvWriter table(run.file("results.csv"),
                  {"task", "kind", "test_acc", "test_se", "answers", "steps_per_s", "peak_mib", "parameters"});
  for (const std::string& name : names) {
    std::printf("   %-16s", name.c_str());
    for (const TaskResults& task : tasks) {
      const auto r = std::find_if(task.contenders.begin(), task.contenders.end(),
                                  [&](const ContenderResult& c) { return c.name == name; });
      if (r == task.contenders.end()) {
        std::printf(" %24s %8s %9s", "-", "-", "-");
        continue;
      }
      const double se = models::standard_error(r->test_acc, r->answers);
      std::printf(" %16.1f%% +-%4.1f %8.2f %9.1f", 100 * r->test_acc, 100 * se, r->steps_per_s, r->peak_mib);
      table.row(std::vector<std::string>{task.name, r->name, std::to_string(r->test_acc), std::to_string(se),
                                         std::to_string(r->answers), std::to_string(r->steps_per_s),
                                         std::to_string(r->peak_mib), std::to_string(r->parameters)});
      summary.report(cat("test_acc_", task.name, "_", r->name), r->test_acc, task.title + ", test accuracy");
      summary.report(cat("test_se_", task.name, "_", r->name), se,
                     cat(task.title, ", its standard error over ", r->answers, " test answers"));
    }
    std::printf("\n");
  }
  for (const TaskResults& task : tasks) {
    std::printf("   %s: chance %.1f%%, the most common answer %.1f%%\n", task.title.c_str(), 100 * task.chance,
                100 * task.majority);
    summary.report(task.name + "_chance", task.chance, task.title + ": guessing");
    summary.report(task.name + "_majority", task.majority, task.title + ": always the most common training answer");
  }
  for (const TaskResults& task : tasks) charts(run, task);
}

}  // namespace ladder::lessons
