"""PyTorch side of `./ladder bench attention`: causal attention forward + backward for B=1, H=4,
D=64, written as PyTorch 1.13 runs it on a CPU (it has no fused CPU kernel): matmul, masked_fill,
softmax, matmul. Driven by ladder_bench (see serve.py), at torch.set_num_threads(1) and (2).

`bench_attention.py --peak-memory T` instead runs one forward + backward at length T in this fresh
process, after a small warm-up call, and prints how far it raised the peak resident set size
(VmHWM, reset just before the call) above the resident size before the call (VmRSS), in bytes:
the method ladder_bench uses for its own side.
"""
import math
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve import serve  # noqa: E402

HEADS, DIM = 4, 64
BUDGET_BYTES = 8 * 2**30  # as ladder_bench's: about three (H,T,T) float tensors must fit
LENGTHS = [n for n in (256, 512, 1024, 2048, 4096, 8192, 16384, 32768) if 3 * HEADS * n * n * 4 <= BUDGET_BYTES]


def attention(q, k, v, hidden):
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    return torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1) @ v


def workload(length):
    """One forward + backward at this length, on inputs made once."""
    gen = torch.Generator().manual_seed(length)
    q, k, v = (torch.randn(1, HEADS, length, DIM, generator=gen, requires_grad=True) for _ in range(3))
    gout = torch.randn(1, HEADS, length, DIM, generator=gen)
    hidden = torch.ones(length, length, dtype=torch.bool).triu(1)  # key j > query i

    def step():
        for x in (q, k, v):
            x.grad = None
        attention(q, k, v, hidden).backward(gout)

    return step


def status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_memory(length):
    workload(64)()  # thread pool, allocator and BLAS buffers set up before measuring
    step = workload(length)
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to the current resident size
    before = status_kib("VmRSS")
    step()
    print((status_kib("VmHWM") - before) * 1024)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--peak-memory":
        peak_memory(int(sys.argv[2]))
    else:
        serve({f"attention_causal_T{n}": (workload(n), (1, 2)) for n in LENGTHS})
