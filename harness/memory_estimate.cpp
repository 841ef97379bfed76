#include "harness/memory_estimate.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace ladder::harness {

namespace {

// What a lesson process holds before its model: code, libraries, the threads' stacks and buffers.
constexpr double kProcessBase = 64.0 * (1 << 20);

}  // namespace

MemoryEstimate& MemoryEstimate::add(const std::string& what, double count, double bytes_each, const std::string& flags) {
  costs_.push_back({what, count * bytes_each, flags});
  return *this;
}

MemoryEstimate& MemoryEstimate::parameters(double count, const std::string& flags) {
  return add("parameters, gradients and optimizer state", count * 4, 4, flags);
}

MemoryEstimate& MemoryEstimate::processes(int count, const MemoryEstimate& each, const std::string& flags) {
  processes_flags_ = flags;
  return add(cat(count, " other process", count == 1 ? "" : "es", " (", bytes_text(each.total()), " each)"), count, each.total(), flags);
}

double MemoryEstimate::total() const {
  double bytes = kProcessBase;
  for (const MemoryCost& cost : costs_) bytes += cost.bytes;
  return bytes;
}

double available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line))
    if (line.starts_with("MemAvailable:")) {
      std::istringstream fields(line.substr(13));
      double kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  return 0;
}

std::string bytes_text(double bytes) {
  char text[32];
  const double gib = bytes / (1 << 30);
  if (gib >= 1) std::snprintf(text, sizeof text, gib < 10 ? "%.1f GiB" : "%.0f GiB", gib);
  else std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1 << 20));
  return text;
}

void check_memory(const std::string& lesson, const MemoryEstimate& estimate, double available) {
  if (available <= 0 || estimate.total() <= available) return;
  const auto& costs = estimate.costs();
  const auto costliest = std::max_element(costs.begin(), costs.end(),
                                          [](const MemoryCost& a, const MemoryCost& b) { return a.bytes < b.bytes; });
  const std::string named = costliest == costs.end() ? ""
                                                      : cat(" (", costliest->flags, ": ", costliest->what, " ",
                                                            bytes_text(costliest->bytes), ")");
  const std::string counted = estimate.processes_flags().empty() ? "" : " with " + estimate.processes_flags();
  fail(lesson.c_str(), "these flags need about ", bytes_text(estimate.total()), counted, named, "; this machine has ",
       bytes_text(available), " available: give smaller values");
}

}  // namespace ladder::harness
