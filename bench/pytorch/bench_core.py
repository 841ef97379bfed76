"""PyTorch side of `./ladder bench core`: the workloads of bench/bench_core.cpp that PyTorch has.

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

serve({
    "autograd_chain_per_op_us": (chain, (1, 2)),
    "softmax_fwd_bwd_4096x128": (lambda: torch.softmax(x, -1).backward(gy), (1, 2)),
    "layer_norm_fwd_bwd_4096x128": (lambda: torch.nn.functional.layer_norm(x, (128,), w, b).backward(gy), (1, 2)),
})
