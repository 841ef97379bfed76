// Attention forward + backward against sequence length, for each attention kind: full (the fused
// scaled_dot_product_attention, against PyTorch's composed attention: matmul, masked_fill, softmax,
// matmul), linear (elu + 1, causal, chunked), BigBird (blocks of 64, 3 random blocks, causal) and
// Transformer-VQ (512 codes per head, blocks of 512: the paper's settings; with its commitment loss
// and EMA step) through their layers (nn/attention); B=1, H=4, D=64, causal. Each line gives the time, its growth from the previous (half) length, and
// the peak memory the call adds, measured the same way on both sides: in a fresh process, the rise
// of the peak resident set size above the resident size before the call (core/peak_memory.h), after
// a small warm-up call. Then how the kinds' times compare with full attention's at each length, and
// the time of one generated token at a context of 4096: full attention's KV cache against linear
// attention's recurrent state and Transformer-VQ's cache.
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "bench/bench.h"
#include "bench/pytorch_process.h"
#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/peak_memory.h"
#include "nn/attention/attention_kind.h"

namespace ladder::bench {

namespace {

constexpr int64_t kHeads = 4, kDim = 64;
constexpr int64_t kLengths[] = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
constexpr int64_t kGenerationContext = 4096;
constexpr int64_t kCodes = 512, kBlock = 512;  // Transformer-VQ: S codes per head, L positions per block
// A length whose call would take longer than this (predicted from the previous length and the
// kind's growth) is left out: the repeats would take minutes. Full attention at 32768 (about 27 s
// on the idle machine) stays in: issue 14 compares Transformer-VQ with it there.
constexpr double kLongestCallMs = 40000;
// PyTorch's peak holds about three (B,H,T,T) float tensors (measured: 0.81 GB at T = 4096); the
// lengths where that passes this budget are left out (bench_attention.py serves the others).
constexpr double kTorchBudgetBytes = 8.0 * (1 << 30);

double torch_peak_estimate(int64_t length) { return 3.0 * kHeads * length * length * 4; }

// The kinds measured through their layer (nn/attention), by the name bench lines use.
std::map<std::string, nn::AttentionSettings> layer_kinds() {
  return {{"full", {.kind = "full"}},
          {"linear_elu", {.kind = "linear", .feature_map = "elu", .chunk = 64}},
          {"bigbird", {.kind = "bigbird", .block = 64, .random_blocks = 3}},
          {"vq", {.kind = "vq", .block = kBlock, .codes = kCodes, .heads = kHeads, .head_dim = kDim}}};
}

// q, k, v and the output's gradient, (1,H,T,D) each, drawn once per length; q, k, v require grad.
struct Inputs {
  Tensor q, k, v, gout;
};

std::shared_ptr<Inputs> random_inputs(int64_t length, Generator& gen) {
  const Shape shape{1, kHeads, length, kDim};
  auto in = std::make_shared<Inputs>(
      Inputs{randn(shape, gen), randn(shape, gen), randn(shape, gen), randn(shape, gen)});
  for (Tensor* x : {&in->q, &in->k, &in->v}) x->requires_grad_();
  return in;
}

// One causal training step of this layer kind at this length on inputs made once, gradients reset
// on every call: forward + backward, with what the layer adds to the loss and learns outside the
// optimiser (vq: the keys' quantisation, the commitment loss, the codebook's EMA step).
std::function<void()> workload(const nn::AttentionSettings& settings, int64_t length) {
  Generator gen(length);
  std::shared_ptr<Inputs> in = random_inputs(length, gen);
  std::shared_ptr<nn::AttentionKind> kind = nn::make_attention(settings);
  return [in, kind] {
    for (Tensor* x : {&in->q, &in->k, &in->v}) x->zero_grad();
    kind->attend(in->q, in->k, in->v, {.causal = true}).backward(in->gout);
    const Tensor extra = kind->take_auxiliary_loss();
    if (extra.defined()) extra.backward();
    kind->after_optimizer_step();
  };
}

// Every kind measured, by the name bench lines and --attention-peak-memory use: its workload at a length.
std::map<std::string, std::function<std::function<void()>(int64_t)>> measured_kinds() {
  std::map<std::string, std::function<std::function<void()>(int64_t)>> kinds;
  for (const auto& [name, settings] : layer_kinds())
    kinds[name] = [settings](int64_t length) { return workload(settings, length); };
  return kinds;
}

// One generated token at a context of `context` positions: the state holds them, the token's
// query, key and value go through step() on a copy of it, so that every call sees the same context.
std::function<void()> generation_step(const nn::AttentionSettings& settings, int64_t context) {
  Generator gen(context);
  std::shared_ptr<nn::AttentionKind> kind = nn::make_attention(settings);
  std::shared_ptr<nn::AttentionState> filled = kind->start();
  const Tensor q = randn({1, kHeads, 1, kDim}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
  {
    NoGradGuard no_grad;
    const Tensor keys = randn({1, kHeads, context, kDim}, gen);
    kind->step(keys, keys, randn(keys.shape(), gen), *filled);
  }
  return [kind, filled, q, k, v] {
    NoGradGuard no_grad;
    const std::unique_ptr<nn::AttentionState> state = filled->clone();
    kind->step(q, k, v, *state);
  };
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
                  const std::map<std::string, std::map<int64_t, double>>& times, const std::string& note = "") {
  std::string line = "  " + over + " / " + under + " time:";
  const std::map<int64_t, double>& under_times = times.at(under);
  for (const auto& [length, ms] : times.at(over))
    if (under_times.count(length)) {
      char part[48];
      std::snprintf(part, sizeof part, " T=%lld %.2f", static_cast<long long>(length), ms / under_times.at(length));
      line += part;
    }
  std::printf("%s%s\n", line.c_str(), note.c_str());
}

// "x3.98", or "x-" for the first length.
std::string growth(double now, double before) {
  if (before <= 0) return "x-";
  char text[32];
  std::snprintf(text, sizeof text, "x%.2f", now / before);
  return text;
}

}  // namespace

void attention_peak_memory(const std::string& kind, int64_t length) {
  const auto kinds = measured_kinds();
  if (!kinds.count(kind)) fail("bench", "no attention kind '", kind, "' is measured");
  kinds.at(kind)(64)();  // thread pool, allocator and BLAS buffers set up before measuring
  std::printf("%lld\n", static_cast<long long>(peak_bytes_added(kinds.at(kind)(length))));
}

void run_attention() {
  PytorchProcess torch("bench_attention.py");
  const std::string script = std::string(LADDER_SOURCE_DIR) + "/bench/pytorch/bench_attention.py";
  std::printf("  attention: causal, B=1 H=%lld D=%lld; ours at the default threads (all cores, fewer while busy), "
              "PyTorch at its faster of 1 and 2; growth = t(T)/t(T/2); peak = VmHWM rise in a fresh process\n",
              static_cast<long long>(kHeads), static_cast<long long>(kDim));
  std::printf("  vq: the layer's training step: keys to the nearest of S=%lld codes per head, straight-through, "
              "vq_attention in blocks of L=%lld, the commitment loss and the codebook's EMA step\n",
              static_cast<long long>(kCodes), static_cast<long long>(kBlock));
  std::map<std::string, std::map<int64_t, double>> times;  // kind -> length -> ms
  for (const auto& [kind, kind_workload] : measured_kinds()) {
    double previous_ours = 0, previous_ref = 0, growth_ours = 4;
    for (const int64_t length : kLengths) {
      const std::string name = "attention_" + kind + "_T" + std::to_string(length);
      const double predicted_ms = previous_ours * growth_ours;
      if (predicted_ms > kLongestCallMs) {
        std::printf("%-32s skipped: about %.0f s per call\n", name.c_str(), predicted_ms / 1000);
        previous_ours = predicted_ms;  // the next length is predicted from this prediction
        continue;
      }
      // Calls of a second or more vary little: two repeats are enough, one from ten seconds (after
      // its warm-up call), and keep the run to minutes.
      const int repeats = predicted_ms > 10000 ? 1 : predicted_ms > 1000 ? 2 : kRepeats;
      const std::string torch_name = "attention_causal_T" + std::to_string(length);
      const bool torch_fits = kind == "full" && torch.available() && torch_peak_estimate(length) <= kTorchBudgetBytes;
      double ours = 0, ref = -1;
      if (torch_fits)
        std::tie(ours, ref) = time_side_by_side(repeats_of(kind_workload(length)),
                                                [&] { return torch.repeat_ms(torch_name); }, repeats);
      else
        ours = time_ms(kind_workload(length), repeats);
      const int64_t ours_peak = peak_bytes_from(self_path() + " --attention-peak-memory " + kind + " " +
                                                std::to_string(length));
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
      times[kind][length] = ours;
    }
  }
  // Where the efficient kinds overtake full attention, and by how much at each length both ran.
  print_ratios("linear_elu", "full", times);
  print_ratios("bigbird", "full", times);
  print_ratios("full", "vq", times, "  (full's time over vq's; issue 14's targets: >= 3 at T=8192, >= 10 at T=32768)");
  double full_token = 0;
  const std::map<std::string, std::string> carried = {
      {"full", "KV cache: attends to every cached key (and copies the cache to append)"},
      {"linear_elu", "recurrent state: the (M,D) sum, whatever the context"},
      {"vq", "VQ cache: the last two blocks exactly, older keys per code, whatever the context"}};
  for (const std::string kind : {"full", "linear_elu", "vq"}) {
    const double ms = time_ms(generation_step(layer_kinds().at(kind), kGenerationContext));
    if (kind == "full") full_token = ms;
    report("generate_token_" + kind + "_context" + std::to_string(kGenerationContext), ms, -1,
           carried.at(kind) + (kind == "full" ? "" : "; full / this = " + growth(full_token, ms).substr(1)));
  }
}

}  // namespace ladder::bench
