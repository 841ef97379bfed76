"""PyTorch side of `./ladder bench core`: the workloads of bench/bench_core.cpp that PyTorch has.
rms_norm is the formula written with PyTorch ops (as in many models), since torch 1.13 has none.

Each is tried at torch.set_num_threads(1) and (2) (on two cores PyTorch's intra-op threads and
OpenBLAS's can oversubscribe) and the faster counts. Driven by ladder_bench; see serve.py.
"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve import serve  # noqa: E402

torch.manual_seed(0)
x0 = torch.randn(16, requires_grad=True)


def chain():
    x = x0
    for i in range(10000):
        x = torch.tanh(x) if i % 2 == 0 else x * 1.5
    x.sum().backward()


x = torch.randn(4096, 128, requires_grad=True)
gy = torch.randn(4096, 128)
w = torch.ones(128, requires_grad=True)
b = torch.zeros(128, requires_grad=True)
gy_row, gy_col, gy_t = torch.randn(4096), torch.randn(128), torch.randn(128, 4096)
scores = torch.randn(12, 4, 64, 64, requires_grad=True)
gy_scores = torch.randn(12, 4, 64, 64)
causal = torch.ones(64, 64, dtype=torch.bool).triu(1)
causal_4d = causal.view(1, 1, 64, 64)
very_negative = torch.tensor(-1e9)
heads = torch.randn(12, 64, 4, 32, requires_grad=True)
gy_heads = torch.randn(12, 4, 64, 32)


def rms_norm(t, weight, eps=1e-6):
    return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * weight


workloads = {
    "autograd_chain_per_op_us": (chain, (1, 2)),
    "softmax_fwd_bwd_4096x128": (lambda: torch.softmax(x, -1).backward(gy), (1, 2)),
    "softmax_dim0_fwd_bwd_4096x128": (lambda: torch.softmax(x, 0).backward(gy), (1, 2)),
    "layer_norm_fwd_bwd_4096x128": (lambda: torch.nn.functional.layer_norm(x, (128,), w, b).backward(gy), (1, 2)),
    "rms_norm_fwd_bwd_4096x128": (lambda: rms_norm(x, w).backward(gy), (1, 2)),
}
reductions = {
    "sum": lambda t, d: t.sum(d),
    "mean": lambda t, d: t.mean(d),
    "amax": lambda t, d: t.amax(d),
    "logsumexp": lambda t, d: t.logsumexp(d),
}
for name, op in reductions.items():
    workloads[f"{name}_last_fwd_bwd_4096x128"] = (lambda op=op: op(x, -1).backward(gy_row), (1, 2))
    workloads[f"{name}_dim0_fwd_bwd_4096x128"] = (lambda op=op: op(x, 0).backward(gy_col), (1, 2))
workloads["where_fwd_bwd_12x4x64x64"] = (lambda: torch.where(causal, very_negative, scores).backward(gy_scores), (1, 2))
workloads["masked_fill_fwd_bwd_12x4x64x64"] = (
    lambda: scores.masked_fill(causal_4d, float("-inf")).backward(gy_scores), (1, 2))
workloads["permute_0213_fwd_bwd_12x64x4x32"] = (
    lambda: heads.permute(0, 2, 1, 3).contiguous().backward(gy_heads), (1, 2))
workloads["transpose_fwd_bwd_4096x128"] = (lambda: x.t().contiguous().backward(gy_t), (1, 2))

serve(workloads)
