// Core workloads: GEMM against raw OpenBLAS; autograd overhead, softmax, the norms, reductions,
// masking and layout changes against PyTorch.
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "core/autograd.h"
#include "core/ops.h"

namespace ladder::bench {

namespace {

// (M,K) @ (K,N) through matmul(), against cblas_sgemm into a buffer allocated once.
void bench_matmul(int64_t M, int64_t K, int64_t N) {
  Generator gen(1);
  const Tensor a = randn({M, K}, gen), b = randn({K, N}, gen);
  Tensor c = empty({M, N});
  auto ours = [&] { matmul(a, b); };
  const auto [ours_ms, raw_ms] = time_side_by_side(repeats_of(ours), repeats_of(raw_sgemm(a, b, c)));
  const double gflops = 2.0 * M * N * K / (ours_ms * 1e6);
  char note[96];
  std::snprintf(note, sizeof note, "(ref: raw cblas_sgemm; %.1f GFLOP/s)", gflops);
  report("matmul_" + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N), ours_ms, raw_ms, note);
}

}  // namespace

void run_core() {
  bench_matmul(512, 512, 512);
  bench_matmul(768, 128, 384);

  // 10,000 elementwise ops (tanh and a scalar multiply, alternating) on 16 values, then backward;
  // reported per op.
  constexpr int kOps = 10000;
  Tensor x0 = randn({16});
  x0.requires_grad_();
  auto chain = [&] {
    Tensor x = x0;
    for (int i = 0; i < kOps; ++i) x = i % 2 == 0 ? tanh(x) : x * 1.5f;
    sum(x).backward();
  };

  Generator gen(2);
  Tensor x = randn({4096, 128}, gen);
  x.requires_grad_();
  const Tensor gy = randn({4096, 128}, gen);
  Tensor w = ones({128}), b = zeros({128});
  w.requires_grad_();
  b.requires_grad_();

  // The paths attention takes: reductions over the last dim and over dim 0, softmax over a dim
  // that is not the last, masking, and the layout changes between heads and sequence.
  const Tensor gy_row = randn({4096}, gen), gy_col = randn({128}, gen), gy_t = randn({128, 4096}, gen);
  Tensor scores = randn({12, 4, 64, 64}, gen);
  scores.requires_grad_();
  const Tensor gy_scores = randn({12, 4, 64, 64}, gen);
  const Tensor causal = triu_mask(64, 64, 1), causal_4d = reshape(causal, {1, 1, 64, 64});
  const Tensor very_negative = scalar(-1e9f);
  Tensor heads = randn({12, 64, 4, 32}, gen);
  heads.requires_grad_();
  const Tensor gy_heads = randn({12, 4, 64, 32}, gen);
  auto reduction = [&](const std::string& name, auto op) -> std::vector<Workload> {
    return {{.name = name + "_last_fwd_bwd_4096x128", .step = [&x, &gy_row, op] { op(x, -1).backward(gy_row); },
             .note = "(ref: PyTorch)"},
            {.name = name + "_dim0_fwd_bwd_4096x128", .step = [&x, &gy_col, op] { op(x, 0).backward(gy_col); },
             .note = "(ref: PyTorch)"}};
  };

  std::vector<Workload> workloads = {
      {.name = "autograd_chain_per_op_us", .step = chain, .scale = 1000.0 / kOps,
       .note = "(ref: PyTorch; forward + backward, 16-element tensor; microseconds per op)"},
      {.name = "softmax_fwd_bwd_4096x128", .step = [&] { softmax(x, -1).backward(gy); }, .note = "(ref: PyTorch)"},
      {.name = "softmax_dim0_fwd_bwd_4096x128", .step = [&] { softmax(x, 0).backward(gy); }, .note = "(ref: PyTorch)"},
      {.name = "layer_norm_fwd_bwd_4096x128", .step = [&] { layer_norm(x, {128}, w, b).backward(gy); },
       .note = "(ref: PyTorch, affine)"},
      {.name = "rms_norm_fwd_bwd_4096x128", .step = [&] { rms_norm(x, {128}, w).backward(gy); },
       .note = "(ref: the same formula in PyTorch ops)"}};
  for (auto& [name, op] : std::vector<std::pair<std::string, Tensor (*)(const Tensor&, int64_t)>>{
           {"sum", [](const Tensor& t, int64_t d) { return sum(t, {d}); }},
           {"mean", [](const Tensor& t, int64_t d) { return mean(t, {d}); }},
           {"amax", [](const Tensor& t, int64_t d) { return amax(t, {d}); }},
           {"logsumexp", [](const Tensor& t, int64_t d) { return logsumexp(t, {d}); }}})
    for (Workload& workload : reduction(name, op)) workloads.push_back(std::move(workload));
  workloads.push_back({.name = "where_fwd_bwd_12x4x64x64",
                       .step = [&] { where(causal, very_negative, scores).backward(gy_scores); },
                       .note = "(ref: PyTorch; mask (64,64), a 0-d fill value)"});
  workloads.push_back({.name = "masked_fill_fwd_bwd_12x4x64x64",
                       .step = [&] { masked_fill(scores, causal_4d, -INFINITY).backward(gy_scores); },
                       .note = "(ref: PyTorch; mask (1,1,64,64))"});
  workloads.push_back({.name = "permute_0213_fwd_bwd_12x64x4x32",
                       .step = [&] { permute(heads, {0, 2, 1, 3}).backward(gy_heads); },
                       .note = "(ref: PyTorch .contiguous())"});
  workloads.push_back({.name = "transpose_fwd_bwd_4096x128", .step = [&] { transpose(x, 0, 1).backward(gy_t); },
                       .note = "(ref: PyTorch .contiguous())"});
  compare_with_pytorch("bench_core.py", workloads);
}

}  // namespace ladder::bench
