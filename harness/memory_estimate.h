// A run's memory, estimated from its flags before any work, so that flags asking for more than the
// machine has are refused in one line instead of growing until the system kills the process.
// A lesson lists its costs (parameters with their gradients and optimizer state, activations kept
// for backward, attention scores, data), each with the flags that set it; check_memory compares the
// total with /proc/meminfo's MemAvailable. The estimates are rough on purpose: within 2x of the
// measured peak (see the lesson's cost function), enough to tell 400 MiB from 40 GiB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder::harness {

// One named cost: "activations", 38 GiB, set by "--embd 4096, --layers 48, --context 4096".
struct MemoryCost {
  std::string what;
  double bytes = 0;
  std::string flags;
};

class MemoryEstimate {
 public:
  // `count` values of `bytes_each` bytes (4 for a float), set by `flags`.
  MemoryEstimate& add(const std::string& what, double count, double bytes_each, const std::string& flags);
  // A trained parameter costs itself, its gradient and Adam's two moments: four floats.
  MemoryEstimate& parameters(double count, const std::string& flags);
  // `count` more processes like `each` (lesson 16's), each with its own base and costs: one cost,
  // and the refusal says that `flags` (--procs) counted them.
  MemoryEstimate& processes(int count, const MemoryEstimate& each, const std::string& flags);
  double total() const;  // bytes, with the process's own base (code, libraries, threads' stacks)
  const std::vector<MemoryCost>& costs() const { return costs_; }
  const std::string& processes_flags() const { return processes_flags_; }  // "" for one process

 private:
  std::vector<MemoryCost> costs_;
  std::string processes_flags_;
};

// MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read (not Linux: no check then).
double available_memory();

// "41.2 GiB", "380 MiB"
std::string bytes_text(double bytes);

// Fails, before the run folder exists, when the estimate is above `available` bytes:
// "<lesson>: these flags need about 41 GiB (--embd 4096, --layers 48: activations 38 GiB); this
// machine has 21 GiB available: give smaller values". The costliest item is named with its flags;
// "with --procs 4" follows the total when more processes were counted.
void check_memory(const std::string& lesson, const MemoryEstimate& estimate, double available = available_memory());

}  // namespace ladder::harness
