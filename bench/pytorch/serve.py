"""The PyTorch side of `./ladder bench`, shared by bench_core.py, bench_cnn.py and bench_rnn.py.

ladder_bench (bench/pytorch_process.cpp) starts a script and alternates its own timed repeats with
the script's: it writes a workload's name on a line, and the script runs one repeat of about 100 ms
at each of the workload's thread settings and answers "<milliseconds per call> <threads>" for the
faster. Lines starting with '#' are remarks; "ready" ends the start-up.
"""
import os
import sys
import time

import torch


def calls_per_repeat(work):
    """Warm up (caches, allocator, thread pool): three calls, or one if a call takes over 100 ms;
    then the calls that make a repeat about 100 ms (as bench/bench.cpp's repeats_of)."""
    start = time.perf_counter()
    work()
    if (time.perf_counter() - start) * 1e3 < 100:
        work()
        work()
    start = time.perf_counter()
    work()
    once = (time.perf_counter() - start) * 1e3
    return max(1, int(100.0 / max(once, 1e-3)))


def repeat_ms(work, calls):
    start = time.perf_counter()
    for _ in range(calls):
        work()
    return (time.perf_counter() - start) * 1e3 / calls


def serve(workloads):
    """workloads: name -> (work, thread settings to try). Answers ladder_bench until its input ends."""
    waits = ", ".join(f"{v} {os.environ.get(v, '(unset)')}" for v in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"))
    print(f"# torch {torch.__version__}, {torch.__config__.parallel_info().splitlines()[-1].strip()}, {waits}")
    print("ready", flush=True)
    calls = {}
    for line in sys.stdin:
        name = line.strip()
        if name not in workloads:
            print(f"unknown workload {name!r}; this script has {', '.join(workloads)}", flush=True)
            continue
        work, thread_settings = workloads[name]
        answers = []
        for threads in thread_settings:
            torch.set_num_threads(threads)
            if (name, threads) not in calls:
                calls[(name, threads)] = calls_per_repeat(work)
            answers.append((repeat_ms(work, calls[(name, threads)]), threads))
        ms, threads = min(answers)
        print(f"{ms:.6f} {threads}", flush=True)
