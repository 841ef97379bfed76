// Attention against sequence length, for every attention kind of the registry
// (nn/attention/attention_registry.h): one training step of its layer (nn::layer_training_step:
// forward + backward, its auxiliary losses and after_optimizer_step, B=1, H=4, D=64), causal for
// every kind that attends causally and bidirectional for every kind that attends both ways. Each
// kind runs with its registered defaults (linear: elu + 1, chunks of 64; BigBird: blocks of 64, 3
// random blocks), or in the forms it registers for measuring (KindDescription::measured):
// Transformer-VQ with the paper's 512 codes per head in blocks of 512, in the paper's form (q and k
// normalised, the position bias) and plain (vq_plain: keys rounded as they come). Full attention, the
// default kind, causal, is compared with PyTorch's composed attention (matmul, masked_fill, softmax, matmul).
// Each line gives the time, its growth from the previous (half) length, and the peak memory the call
// adds, measured the same way on both sides: in a fresh process, the rise of the peak resident set
// size above the resident size before the call (core/peak_memory.h), after a small warm-up call.
// Then how each kind's time compares with full attention's at each length, and the time of one
// generated token (nn::generated_token) at contexts of 2048, 4096 and 8192 for every kind that generates.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "bench/pytorch_process.h"
#include "core/error.h"
#include "core/peak_memory.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/attention_workload.h"

namespace ladder::bench {

namespace {

constexpr int64_t kLengths[] = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
constexpr int64_t kGenerationContexts[] = {2048, 4096, 8192};
// A length whose call would take longer than this (predicted from the previous length and the
// kind's growth) is left out: the repeats would take minutes. Full attention at 32768 (about 27 s
// on the idle machine) stays in: Transformer-VQ is compared with it there.
constexpr double kLongestCallMs = 40000;
// PyTorch's peak holds about three (B,H,T,T) float tensors (measured: 0.81 GB at T = 4096); the
// lengths where that passes this budget are left out (bench_attention.py serves the others).
constexpr double kTorchBudgetBytes = 8.0 * (1 << 30);

double torch_peak_estimate(int64_t length) { return 3.0 * nn::kWorkloadHeads * length * length * 4; }

// One kind as the bench measures it.
struct Measured {
  std::string name;  // in bench lines: the kind, its compared settings' choices, and the direction
  nn::AttentionSettings settings;
  bool causal = true;
};

// The kind's name in bench lines: "linear_elu" (its compared settings' values show which).
std::string kind_name(const nn::KindDescription& kind, const nn::KindSettings& own) {
  std::string name = kind.name;
  for (const nn::KindSetting& setting : kind.settings)
    if (setting.compared) name += "_" + std::get<std::string>(setting.get(own));
  return name;
}

// The forms each kind is measured in, by the suffix of their name: those it registered
// (Transformer-VQ's), else its defaults.
std::vector<std::pair<std::string, nn::KindSettings>> measured_settings(const nn::KindDescription& kind) {
  if (kind.measured.empty()) return {{"", kind.defaults}};
  return kind.measured;
}

// Every kind of the registry, causal where it attends so, then bidirectional where it attends so.
std::vector<Measured> measured_kinds() {
  std::vector<Measured> all;
  for (const bool causal : {true, false})
    for (const nn::KindDescription& kind : nn::attention_kinds()) {
      if (!kind.attends(causal)) continue;
      for (const auto& [suffix, own] : measured_settings(kind))
        all.push_back({kind_name(kind, own) + suffix + (causal ? "" : "_bidirectional"), {.kind = own}, causal});
    }
  return all;
}

std::function<void()> workload(const Measured& kind, int64_t length) {
  Generator gen(length);
  return nn::layer_training_step(kind.settings, length, kind.causal, gen);
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

// One line: kind `over`'s time divided by kind `under`'s at each length both ran ("  full / vq time: T=256 0.80 ...").
void print_ratios(const std::string& over, const std::string& under,
                  const std::map<std::string, std::map<int64_t, double>>& times) {
  std::string line = "  " + over + " / " + under + " time:";
  const std::map<int64_t, double>& under_times = times.at(under);
  for (const auto& [length, ms] : times.at(over))
    if (under_times.count(length)) {
      char part[48];
      std::snprintf(part, sizeof part, " T=%lld %.2f", static_cast<long long>(length), ms / under_times.at(length));
      line += part;
    }
  std::printf("%s\n", line.c_str());
}

// "x3.98", or "x-" for the first length.
std::string growth(double now, double before) {
  if (before <= 0) return "x-";
  char text[32];
  std::snprintf(text, sizeof text, "x%.2f", now / before);
  return text;
}

// Every length of one kind, until a call would take too long; returns its time at each length.
std::map<int64_t, double> time_against_length(const Measured& kind, PytorchProcess& torch) {
  const std::string script = std::string(LADDER_SOURCE_DIR) + "/bench/pytorch/bench_attention.py";
  std::map<int64_t, double> times;
  double previous_ours = 0, previous_ref = 0, growth_ours = 4;
  for (const int64_t length : kLengths) {
    const std::string name = "attention_" + kind.name + "_T" + std::to_string(length);
    const double predicted_ms = previous_ours * growth_ours;
    if (predicted_ms > kLongestCallMs) {
      std::printf("%-34s skipped: about %.0f s per call\n", name.c_str(), predicted_ms / 1000);
      previous_ours = predicted_ms;  // the next length is predicted from this prediction
      continue;
    }
    // Calls of a second or more vary little: two repeats are enough, one from ten seconds (after
    // its warm-up call), and keep the run to minutes.
    const int repeats = predicted_ms > 10000 ? 1 : predicted_ms > 1000 ? 2 : kRepeats;
    const std::string torch_name = "attention_causal_T" + std::to_string(length);
    const bool torch_fits = nn::is_default_kind(kind.settings.kind) && kind.causal && torch.available() &&
                            torch_peak_estimate(length) <= kTorchBudgetBytes;
    double ours = 0, ref = -1;
    if (torch_fits)
      std::tie(ours, ref) = time_side_by_side(repeats_of(workload(kind, length)),
                                              [&] { return torch.repeat_ms(torch_name); }, repeats);
    else
      ours = time_ms(workload(kind, length), repeats);
    const int64_t ours_peak =
        peak_bytes_from(self_path() + " --attention-peak-memory " + kind.name + " " + std::to_string(length));
    std::string note = "growth ours " + growth(ours, previous_ours);
    if (ref > 0) note += " ref " + growth(ref, previous_ref);
    note += "; peak ours " + mib(static_cast<double>(ours_peak));
    if (torch_fits) {
      const std::string command = "/usr/bin/python3 " + script + " --peak-memory " + std::to_string(length);
      note += ", PyTorch " + mib(static_cast<double>(peak_bytes_from(command)));
      note += " [PyTorch fastest at " + std::to_string(torch.fastest_threads(torch_name)) + " thread(s)]";
    }
    report(name, ours, ref, note);
    if (previous_ours > 0) growth_ours = ours / previous_ours;
    previous_ours = ours;
    previous_ref = ref;
    times[length] = ours;
  }
  return times;
}

}  // namespace

void attention_peak_memory(const std::string& name, int64_t length) {
  for (const Measured& kind : measured_kinds())
    if (kind.name == name) {
      workload(kind, 64)();  // thread pool, allocator and BLAS buffers set up before measuring
      std::printf("%lld\n", static_cast<long long>(peak_bytes_added(workload(kind, length))));
      return;
    }
  fail("bench", "no attention kind '", name, "' is measured");
}

void run_attention() {
  PytorchProcess torch("bench_attention.py");
  std::printf("  attention: B=1 H=%lld D=%lld; ours at the default threads (all cores), "
              "PyTorch at its faster of 1 and 2; growth = t(T)/t(T/2); peak = VmHWM rise in a fresh process\n",
              static_cast<long long>(nn::kWorkloadHeads), static_cast<long long>(nn::kWorkloadHeadDim));
  std::string forms;  // the kinds measured in forms of their own, as their first
  for (const nn::KindDescription& kind : nn::attention_kinds())
    if (!kind.measured.empty()) forms += "; " + kind.name + ": " + kind.describe({.kind = kind.measured.front().second}, true);
  std::printf("  each line: one training step of the layer (forward, backward, its auxiliary losses, "
              "after_optimizer_step)%s\n", forms.c_str());
  const std::vector<Measured> kinds = measured_kinds();
  std::map<std::string, std::map<int64_t, double>> times;  // kind -> length -> ms
  for (const Measured& kind : kinds) times[kind.name] = time_against_length(kind, torch);
  // Where the efficient kinds overtake full attention, and by how much at each length both ran.
  for (const bool causal : {true, false}) {
    const auto full = std::find_if(kinds.begin(), kinds.end(), [&](const Measured& k) {
      return k.causal == causal && nn::is_default_kind(k.settings.kind);
    });
    for (const Measured& kind : kinds)
      if (kind.causal == causal && &kind != &*full) print_ratios(full->name, kind.name, times);
  }
  for (const int64_t context : kGenerationContexts) {
    double full_token = 0;
    for (const Measured& kind : kinds) {
      if (!kind.causal) continue;
      Generator gen(context);
      const double ms = time_ms(nn::generated_token(kind.settings, context, gen));
      const bool full = nn::is_default_kind(kind.settings.kind);
      if (full) full_token = ms;
      report("generate_token_" + kind.name + "_context" + std::to_string(context), ms, -1,
             nn::registered_kind(kind.settings.kind).describe(kind.settings, true) +
                 (full ? "" : "; full / this = " + growth(full_token, ms).substr(1)));
    }
  }
}

}  // namespace ladder::bench
