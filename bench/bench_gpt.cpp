// models::GPT (character vocabulary of 65, no dropout) against the same model in PyTorch
// (bench/pytorch/bench_gpt.py, nanoGPT's model written out with torch.nn):
//  - one training step (forward, cross entropy, backward, clipping to norm 1, AdamW with decay on
//    the weight matrices only) on random ids, in two sizes: nanoGPT's CPU example (4 layers, 4 heads,
//    128 wide, context 64, batch 12) and its Shakespeare model (6 layers, 6 heads, 384 wide, context
//    256, batch 16); ladder at one and at two threads, PyTorch at the faster of 1 and 2. After each
//    size, its FLOP per step and both sides' FLOP/s as a share of raw sgemm's rate at the same
//    thread count, measured in this run, and where our step's time goes (print_breakdown);
//  - generation speed: context - 1 tokens from one token, at contexts 64 and 512, with the KV cache
//    and without it (PyTorch: without, as nanoGPT's generate runs);
//  - lesson 15's encoder and LSTM classifiers (bench_classifiers.cpp).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"
#include "models/gpt.h"
#include "optim/adam.h"

namespace ladder::bench {

namespace {

constexpr int64_t kVocab = 65;

struct StepSize {
  int64_t layers, heads, embd, context, batch;
  std::string name() const {
    return "gpt_step_" + std::to_string(layers) + "x" + std::to_string(embd) + "_t" + std::to_string(context) + "_b" +
           std::to_string(batch);
  }
  // Seconds per step: fewer timed repeats, and the breakdown over 3 steps at 2 threads only.
  bool slow() const { return embd > 128; }
};

// FLOP of one training step, counted as the GEMMs do: each of the P weights of a matrix multiply does
// one multiply-add per token forward and two backward (6 P per token); the attention's two (T,T)
// products, q k^T and weights @ v, do 2 * 2 * T^2 * C per sequence and layer forward and twice that
// backward, counted over the full square (PyTorch computes it; the causal mask hides half of it).
// Layer norms, softmax, GELU and AdamW are left out: a few FLOP per element, not per weight.
struct StepFlop {
  double matmul_params, matmul, attention;
  double total() const { return matmul + attention; }
};
StepFlop step_flop(const StepSize& s) {
  const double C = static_cast<double>(s.embd), L = static_cast<double>(s.layers);
  const double T = static_cast<double>(s.context), B = static_cast<double>(s.batch);
  // per layer: q, k, v (3 C^2), out_proj (C^2), the MLP (8 C^2); then the tied head (C V)
  const double params = L * 12 * C * C + C * static_cast<double>(kVocab);
  return {params, 6 * params * B * T, 3 * L * B * 4 * T * T * C};
}

void bench_steps(const std::vector<StepSize>& sizes, const std::map<int, double>& sgemm_rate) {
  std::vector<Workload> workloads;
  std::vector<TrainingStep> steps;
  std::vector<std::unique_ptr<models::GPT>> models;
  std::vector<std::unique_ptr<optim::AdamW>> optimizers;
  Generator gen(12);
  for (const StepSize& s : sizes) {
    models.push_back(std::make_unique<models::GPT>(
        models::GPTConfig{.vocab_size = kVocab, .block_size = s.context, .n_layer = s.layers, .n_head = s.heads,
                          .n_embd = s.embd},
        gen));
    models::GPT& model = *models.back();
    optimizers.push_back(std::make_unique<optim::AdamW>(optim::decay_groups(model.named_parameters(), 0.1f),
                                                        optim::AdamOptions{.lr = 1e-3f, .beta2 = 0.99f}));
    optim::AdamW& adamw = *optimizers.back();
    const Tensor x = randint(0, kVocab, {s.batch, s.context}, gen), y = randint(0, kVocab, {s.batch, s.context}, gen);
    const TrainingStep step{.zero_grad = [&adamw] { adamw.zero_grad(); },
                            .loss = [&model, x, y] { return cross_entropy(model.forward(x), y); },
                            .clip = [&model] { optim::clip_grad_norm(model.parameters(), 1.0f); },
                            .update = [&adamw] { adamw.step(); }};
    steps.push_back(step);
    for (int threads : {1, 2})
      workloads.push_back({.name = s.name() + "_threads" + std::to_string(threads),
                           .step = step,
                           .threads = threads,
                           .note = "(ref: nanoGPT's model in torch.nn, its faster of 1 and 2 threads; "
                                   "fwd + bwd + clip + AdamW)",
                           .repeats = s.slow() ? 3 : kRepeats});
  }
  const std::vector<Comparison> results = compare_with_pytorch("bench_gpt.py", workloads);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const StepFlop flop = step_flop(sizes[i]);
    std::printf("  %s: %.2f GFLOP per step = 6 x %.2fM matmul weights x %lld tokens + attention %.2f GFLOP\n",
                sizes[i].name().c_str(), flop.total() * 1e-9, flop.matmul_params * 1e-6,
                static_cast<long long>(sizes[i].batch * sizes[i].context), flop.attention * 1e-9);
    for (size_t t = 0; t < 2; ++t) {
      const Comparison& r = results[2 * i + t];
      const int threads = static_cast<int>(t) + 1;
      const double ours = flop.total() / (r.ours * 1e6), ref = flop.total() / (r.ref * 1e6);  // GFLOP/s
      std::printf("    %d thread%s: ours %.1f GFLOP/s = %.2f of sgemm's %.1f", threads, threads == 1 ? "" : "s", ours,
                  ours / sgemm_rate.at(threads), sgemm_rate.at(threads));
      if (r.ref > 0) {
        const double rate = sgemm_rate.at(r.ref_threads);
        std::printf("; PyTorch (%d thread%s) %.1f GFLOP/s = %.2f of sgemm's %.1f", r.ref_threads,
                    r.ref_threads == 1 ? "" : "s", ref, ref / rate, rate);
      }
      std::printf("\n");
    }
    if (!sizes[i].slow()) print_breakdown(steps[i], 1);
    print_breakdown(steps[i], 2, sizes[i].slow() ? 3 : 20);
  }
}

// Tokens per second generating context - 1 tokens from one token, with and without the cache; the
// uncached line is compared with PyTorch's. Lines in milliseconds per token. Ours runs at one
// thread: a batch of one token is too little work to share (PyTorch takes the faster of 1 and 2).
void bench_generation(int64_t context) {
  const int threads_before = num_threads();
  set_num_threads(1);
  Generator gen(context);
  models::GPT model({.vocab_size = kVocab, .block_size = context, .n_layer = 4, .n_head = 4, .n_embd = 128}, gen);
  const Tensor first = zeros({1, 1});
  auto generate = [&model, &gen, first, context](bool use_cache) {
    return [&model, &gen, first, context, use_cache] {
      model.generate(first, context - 1, {.use_cache = use_cache}, gen);
    };
  };
  const double per_token = 1.0 / static_cast<double>(context - 1);
  const std::string note =
      "(4 layers x 128, batch 1, " + std::to_string(context - 1) + " tokens from one, ours at 1 thread; ms per token";
  const double cached_ms = time_ms(generate(true), context > 64 ? 3 : kRepeats) * per_token;
  report("gpt_generate_cached_ctx" + std::to_string(context), cached_ms, -1, note + ")");
  const Comparison uncached =
      compare_with_pytorch("bench_gpt.py", {{.name = "gpt_generate_uncached_ctx" + std::to_string(context),
                                             .step = generate(false),
                                             .threads = 1,
                                             .scale = per_token,
                                             .note = note + "; ref: PyTorch without a cache, as nanoGPT's generate)",
                                             .repeats = context > 64 ? 3 : kRepeats}})
          .front();
  std::printf("  context %lld: %.0f tokens/s with the cache, %.0f without (PyTorch without: %s)\n",
              static_cast<long long>(context), 1e3 / cached_ms, 1e3 / uncached.ours,
              uncached.ref > 0 ? std::to_string(static_cast<int>(1e3 / uncached.ref)).c_str() : "n/a");
  set_num_threads(threads_before);
}

}  // namespace

void run_gpt() {
  std::map<int, double> sgemm_rate;  // threads -> GFLOP/s of raw cblas_sgemm 512^3
  const int threads_before = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    sgemm_rate[threads] = sgemm_gflops(512);
  }
  set_num_threads(threads_before);
  std::printf("  raw cblas_sgemm 512^3: %.1f GFLOP/s at 1 thread, %.1f at 2\n", sgemm_rate[1], sgemm_rate[2]);
  bench_steps({{4, 4, 128, 64, 12}, {6, 6, 384, 256, 16}}, sgemm_rate);
  for (int64_t context : {64, 512}) bench_generation(context);
  run_classifiers();
}

}  // namespace ladder::bench
