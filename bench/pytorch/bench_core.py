"""PyTorch side of `./ladder bench core`: the same workloads as bench/bench_core.cpp.

Prints one "name milliseconds" line per workload: the best time over PyTorch's intra-op thread
settings 1 and 2 (on two cores its own threads and OpenBLAS's can oversubscribe), with the same
timing protocol as ladder's (warm-up, then the fastest of 7 repeats of about 100 ms each).
"""
import time

import torch


def time_ms(work):
    for _ in range(3):
        work()
    start = time.perf_counter()
    work()
    once = (time.perf_counter() - start) * 1e3
    calls = max(1, int(100.0 / max(once, 1e-3)))
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            work()
        best = min(best, (time.perf_counter() - start) * 1e3 / calls)
    return best


def best_over_threads(work):
    results = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        results[threads] = time_ms(work)
    threads = min(results, key=results.get)
    return results[threads], threads


def main():
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

    workloads = {
        "autograd_chain_per_op_us": (chain, 1000.0 / 10000),  # ms per chain -> microseconds per op
        "softmax_fwd_bwd_4096x128": (lambda: torch.softmax(x, -1).backward(gy), 1.0),
        "layer_norm_fwd_bwd_4096x128": (
            lambda: torch.nn.functional.layer_norm(x, (128,), w, b).backward(gy), 1.0),
    }
    print(f"# torch {torch.__version__}, {torch.__config__.parallel_info().splitlines()[-1].strip()}")
    for name, (work, scale) in workloads.items():
        ms, threads = best_over_threads(work)
        print(f"# {name}: best with torch.set_num_threads({threads})")
        print(f"{name} {ms * scale:.6f}")


if __name__ == "__main__":
    main()
