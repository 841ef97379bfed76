// Lesson 15's part 3, the results as the Long Range Arena shows them: a row per contender and per
// task its test accuracy with its standard error, training steps per second and the memory a
// training step adds at its peak; results.csv; and per task a chart of accuracy against speed in
// which a dot's area shows the memory, and a chart of the training losses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plot/plot.h"
#include "harness/run.h"

namespace ladder::lessons {

struct ContenderResult {
  std::string name;  // as --kinds names it: "linear_elu", "lstm"
  double test_acc = 0, steps_per_s = 0, peak_mib = 0;
  int64_t parameters = 0;
  plot::Series curve;  // the training loss, averaged over the steps between evaluations
  int64_t answers = 0;  // the test answers test_acc counts (its standard error's n)
};

struct TaskResults {
  std::string name, title;  // "listops", "ListOps"
  double chance = 0;        // guessing uniformly
  double majority = 0;      // always answering the training set's most common answer, on the test set
  std::vector<ContenderResult> contenders;  // a task may leave out a contender that cannot run it
};

// Prints the table (a row per contender, in the order they first appear; "-" where a task left it
// out), writes results.csv, accuracy_speed_<task> and loss_<task>, and reports each test accuracy
// (test_acc_<task>_<contender>) and its standard error (test_se_<task>_<contender>), chance and
// majority share to `summary`.
void report_benchmark(harness::Run& run, const std::vector<TaskResults>& tasks, harness::Summary& summary);

}  // namespace ladder::lessons
