// Core workloads: GEMM against raw OpenBLAS, autograd overhead, softmax and layer norm against PyTorch.
#include <cblas.h>

#include <cstdio>

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
  auto raw_blas = [&] {
    const int m = static_cast<int>(M), k = static_cast<int>(K), n = static_cast<int>(N);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
  };
  const auto [ours_ms, raw_ms] = time_side_by_side(repeats_of(ours), repeats_of(raw_blas));
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

  compare_with_pytorch(
      "bench_core.py",
      {{.name = "autograd_chain_per_op_us", .step = chain, .scale = 1000.0 / kOps,
        .note = "(ref: PyTorch; forward + backward, 16-element tensor; microseconds per op)"},
       {.name = "softmax_fwd_bwd_4096x128", .step = [&] { softmax(x, -1).backward(gy); }, .note = "(ref: PyTorch)"},
       {.name = "layer_norm_fwd_bwd_4096x128", .step = [&] { layer_norm(x, {128}, w, b).backward(gy); },
        .note = "(ref: PyTorch, affine)"}});
}

}  // namespace ladder::bench
