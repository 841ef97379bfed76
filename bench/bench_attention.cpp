// Attention forward + backward against sequence length: the fused scaled_dot_product_attention
// against PyTorch's composed attention (matmul, masked_fill, softmax, matmul), B=1, H=4, D=64,
// causal. Each line gives both times, their growth from the previous length, and the peak memory
// each side adds during one call, measured the same way on both sides: in a fresh process, the
// rise of the peak resident set size (VmHWM, reset before the call) above the resident size
// before it (VmRSS), after a small warm-up call.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

#include "bench/bench.h"
#include "bench/pytorch_process.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::bench {

namespace {

constexpr int64_t kHeads = 4, kDim = 64;
constexpr int64_t kLengths[] = {256, 1024, 4096, 16384};
// PyTorch's peak holds about three (B,H,T,T) float tensors (measured: 0.81 GB at T = 4096); the
// lengths where that passes this budget are left out.
constexpr double kTorchBudgetBytes = 8.0 * (1 << 30);

double torch_peak_estimate(int64_t length) { return 3.0 * kHeads * length * length * 4; }

// One forward + backward at this length on inputs made once, gradients reset on every call.
std::function<void()> workload(int64_t length) {
  Generator gen(length);
  auto q = std::make_shared<Tensor>(randn({1, kHeads, length, kDim}, gen));
  auto k = std::make_shared<Tensor>(randn({1, kHeads, length, kDim}, gen));
  auto v = std::make_shared<Tensor>(randn({1, kHeads, length, kDim}, gen));
  auto gout = std::make_shared<Tensor>(randn({1, kHeads, length, kDim}, gen));
  for (const auto& x : {q, k, v}) x->requires_grad_();
  return [q, k, v, gout] {
    for (const auto& x : {q, k, v}) x->zero_grad();
    scaled_dot_product_attention(*q, *k, *v, {.causal = true}).backward(*gout);
  };
}

int64_t status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string key;
  int64_t kib = 0;
  while (status >> key) {
    if (key == field + ":" && status >> kib) return kib;
    status.ignore(1 << 12, '\n');
  }
  fail("bench", "no ", field, " in /proc/self/status");
}

// The peak memory a call adds, in bytes, from a fresh process: this program run again, or the script.
int64_t peak_bytes_from(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  long long bytes = -1;
  if (!pipe || std::fscanf(pipe.get(), "%lld", &bytes) != 1 || bytes < 0)
    fail("bench", "could not measure peak memory with: ", command);
  return bytes;
}

std::string self_path() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) fail("bench", "cannot find this program's path in /proc/self/exe");
  return std::string(path, static_cast<size_t>(n));
}

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
  return text;
}

// "x3.98", or "x-" for the first length.
std::string growth(double now, double before) {
  if (before <= 0) return "x-";
  char text[32];
  std::snprintf(text, sizeof text, "x%.2f", now / before);
  return text;
}

}  // namespace

void attention_peak_memory(int64_t length) {
  workload(64)();  // thread pool, allocator and BLAS buffers set up before measuring
  const auto step = workload(length);
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current resident size
  const int64_t before = status_kib("VmRSS");
  step();
  std::printf("%lld\n", static_cast<long long>((status_kib("VmHWM") - before) * 1024));
}

void run_attention() {
  PytorchProcess torch("bench_attention.py");
  const std::string script = std::string(LADDER_SOURCE_DIR) + "/bench/pytorch/bench_attention.py";
  std::printf("  attention: causal, B=1 H=%lld D=%lld; ours at the default threads (all cores, fewer while busy), "
              "PyTorch at its faster of 1 and 2; growth = t(T)/t(T/4); peak = VmHWM rise in a fresh process\n",
              static_cast<long long>(kHeads), static_cast<long long>(kDim));
  double previous_ours = 0, previous_ref = 0;
  for (const int64_t length : kLengths) {
    const std::string name = "attention_causal_T" + std::to_string(length);
    const bool torch_fits = torch.available() && torch_peak_estimate(length) <= kTorchBudgetBytes;
    double ours = 0, ref = -1;
    if (torch_fits)
      std::tie(ours, ref) = time_side_by_side(repeats_of(workload(length)), [&] { return torch.repeat_ms(name); });
    else
      ours = time_ms(workload(length));
    const int64_t ours_peak = peak_bytes_from(self_path() + " --attention-peak-memory " + std::to_string(length));
    std::string note = "growth ours " + growth(ours, previous_ours);
    if (ref > 0) note += " ref " + growth(ref, previous_ref);
    note += "; peak ours " + mib(static_cast<double>(ours_peak));
    if (torch_fits) {
      const std::string command = "/usr/bin/python3 " + script + " --peak-memory " + std::to_string(length);
      note += ", PyTorch " + mib(static_cast<double>(peak_bytes_from(command)));
      note += " [PyTorch fastest at " + std::to_string(torch.fastest_threads(name)) + " thread(s)]";
    } else if (torch.available()) {
      note += "; PyTorch skipped: about " + mib(torch_peak_estimate(length)) + " of (T,T) scores, over 8 GiB";
    }
    report(name, ours, ref, note);
    previous_ours = ours;
    previous_ref = ref;
  }
}

}  // namespace ladder::bench
