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
  const auto [ours, raw] = time_side_by_side([&] { matmul(a, b); },
                                              [&] {
                                                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                                                            static_cast<int>(M), static_cast<int>(N),
                                                            static_cast<int>(K), 1.0f, a.data(), static_cast<int>(K),
                                                            b.data(), static_cast<int>(N), 0.0f, c.data(),
                                                            static_cast<int>(N));
                                              });
  const double gflops = 2.0 * M * N * K / (ours * 1e6);
  char note[96];
  std::snprintf(note, sizeof note, "(ref: raw cblas_sgemm; %.1f GFLOP/s)", gflops);
  report("matmul_" + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N), ours, raw, note);
}

}  // namespace

void run_core() {
  const auto torch = pytorch_reference("bench_core.py");
  auto ref = [&](const std::string& name) { return torch.count(name) ? torch.at(name) : -1.0; };

  bench_matmul(512, 512, 512);
  bench_matmul(768, 128, 384);

  // 10,000 elementwise ops (tanh and a scalar multiply, alternating) on 16 values, then backward;
  // reported per op.
  constexpr int kOps = 10000;
  Tensor x0 = randn({16});
  x0.requires_grad_();
  const double chain = time_ms([&] {
    Tensor x = x0;
    for (int i = 0; i < kOps; ++i) x = i % 2 == 0 ? tanh(x) : x * 1.5f;
    sum(x).backward();
  });
  report("autograd_chain_per_op_us", chain * 1000 / kOps, ref("autograd_chain_per_op_us") ,
         "(ref: PyTorch; forward + backward, 16-element tensor)");

  Generator gen(2);
  Tensor x = randn({4096, 128}, gen);
  x.requires_grad_();
  const Tensor gy = randn({4096, 128}, gen);
  const double soft = time_ms([&] { softmax(x, -1).backward(gy); });
  report("softmax_fwd_bwd_4096x128", soft, ref("softmax_fwd_bwd_4096x128"), "(ref: PyTorch)");
  Tensor w = ones({128}), b = zeros({128});
  w.requires_grad_();
  b.requires_grad_();
  const double norm = time_ms([&] { layer_norm(x, {128}, w, b).backward(gy); });
  report("layer_norm_fwd_bwd_4096x128", norm, ref("layer_norm_fwd_bwd_4096x128"), "(ref: PyTorch, affine)");
}

}  // namespace ladder::bench
