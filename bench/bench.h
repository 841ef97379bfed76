// What every benchmark shares: timing a workload, running the PyTorch reference script, and
// printing one line per workload: name ours_ms=... ref_ms=... ratio=...
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

namespace ladder::bench {

// Best time of one call in milliseconds: warm up, then the fastest of several timed repeats
// (the minimum is the measurement least disturbed by other work on a shared machine).
double time_ms(const std::function<void()>& work);
// The same for two workloads in the same process, their repeats interleaved; returns (ours, ref).
std::pair<double, double> time_side_by_side(const std::function<void()>& ours, const std::function<void()>& ref);

// Runs bench/pytorch/<script> with Debian's /usr/bin/python3 and reads its "name ms" lines.
// Empty when python3-torch is not installed (the reason is printed).
std::map<std::string, double> pytorch_reference(const std::string& script);

// One result line; ref_ms < 0 means no reference ran.
void report(const std::string& name, double ours_ms, double ref_ms, const std::string& note = "");

void run_core();
void run_cnn();
void run_rnn();

}  // namespace ladder::bench
