"""DataLoader throughput, Ember vs PyTorch: a TensorDataset of 60000 x 784
float32 samples with int64 labels, batch 64, 0 and 2 worker processes.

Runs both libraries in the same process on the same data, interleaved, and
prints the median samples/s of several epochs and Ember's ratio.

    python benchmarks/bench_dataloader.py [--repeats 5] [--workers 0 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
import torch
import torch.utils.data as td

import ember
import ember.utils.data as ed


def epoch(loader_cls, dataset, workers, batch_size):
    start = time.perf_counter()
    n = 0
    for xb, _ in loader_cls(dataset, batch_size=batch_size, num_workers=workers):
        n += xb.shape[0]
    return n / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    x = rng.random((60000, 784), dtype=np.float32)
    y = rng.integers(0, 10, 60000)
    tds = td.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    eds = ed.TensorDataset(ember.from_numpy(x), ember.from_numpy(y))
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}"
    )
    for workers in args.workers:
        t_rates, e_rates = [], []
        for _ in range(args.repeats):  # interleaved
            t_rates.append(epoch(td.DataLoader, tds, workers, args.batch_size))
            e_rates.append(epoch(ed.DataLoader, eds, workers, args.batch_size))
        t, e = statistics.median(t_rates), statistics.median(e_rates)
        print(
            f"num_workers={workers}: torch {t:,.0f} samples/s, ember {e:,.0f} samples/s, ember/torch {e / t:.2f}"
        )


if __name__ == "__main__":
    main()
