"""Tensor hand-over through a multiprocessing queue, Ember vs PyTorch: a
producer process puts fresh float32 tensors on a queue (their storage moves
to shared memory as they are sent), the main process takes them and reads
one element of each.

One producer per library (spawned once, imports excluded from the timing),
rounds interleaved; prints the median time per tensor and Ember's ratio.
cases.py declares the same hand-over, one tensor per call, for run.py.

    python benchmarks/bench_multiprocessing.py [--repeats 5] [--count 200]
                                               [--sizes 1024 262144 4194304]
                                               [--strategy file_descriptor]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time


def producer(lib_name, strategy, commands, tensors):
    lib = __import__(lib_name)
    lib.set_num_threads(1)
    lib.multiprocessing.set_sharing_strategy(strategy)
    tensors.put("ready")
    while True:
        command = commands.get()
        if command is None:
            return
        numel, count = command
        for i in range(count):
            tensors.put(lib.full((numel,), float(i)))


def start_producer(lib, strategy="file_descriptor"):
    """A spawned producer for lib (ember or torch): (process, commands, tensors)."""
    lib.multiprocessing.set_sharing_strategy(strategy)
    ctx = lib.multiprocessing.get_context("spawn")
    commands, tensors = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=producer, args=(lib.__name__, strategy, commands, tensors), daemon=True)
    p.start()
    assert tensors.get(timeout=120) == "ready"
    return p, commands, tensors


def round_trip(commands, tensors, numel, count):
    start = time.perf_counter()
    commands.put((numel, count))
    for i in range(count):
        t = tensors.get(timeout=60)
        assert t[-1].item() == float(i)
        del t
    return (time.perf_counter() - start) / count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 262144, 4194304])
    ap.add_argument("--strategy", default="file_descriptor")
    args = ap.parse_args()

    import torch

    import ember

    torch.set_num_threads(1)
    ember.set_num_threads(1)
    workers = {lib.__name__: start_producer(lib, args.strategy) for lib in (torch, ember)}

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}")
    print(f"strategy {args.strategy}, {args.count} tensors per round, median of {args.repeats} rounds")
    for numel in args.sizes:
        times = {"torch": [], "ember": []}
        for _ in range(args.repeats):  # interleaved
            for name, (_, commands, tensors) in workers.items():
                times[name].append(round_trip(commands, tensors, numel, args.count))
        t, e = statistics.median(times["torch"]), statistics.median(times["ember"])
        print(
            f"{numel * 4 / 1024:>8.0f} KiB: torch {t * 1e6:8.1f} us/tensor, "
            f"ember {e * 1e6:8.1f} us/tensor, ember/torch {e / t:.2f}"
        )
    for p, commands, _ in workers.values():
        commands.put(None)
        p.join(30)


if __name__ == "__main__":
    main()
