"""Trains a small MLP with Adam on random data and prints the process's
resident memory (RSS) at intervals, so that a leak shows as growth.

    python tools/training_memory.py                     # 10,000 steps, RSS every 1,000
    python tools/training_memory.py --steps 300 --workers 2 --interval 100

`--workers N` (N > 0) also feeds the batches through a DataLoader with N
worker processes. `--max-growth-mb M` exits with status 1 when RSS after the
first interval grows by more than M MiB by the last step. `make asan-leaks`
runs a short form of this under LeakSanitizer.
"""

from __future__ import annotations

import argparse
import os
import sys


def rss_mib():
    """The resident set size of this process in MiB (Linux /proc)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--interval", type=int, default=1_000, help="steps between RSS lines")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes (0: no DataLoader)")
    p.add_argument("--max-growth-mb", type=float, default=None)
    p.add_argument("--torch", action="store_true", help="run on PyTorch instead of Ember")
    return p.parse_args()


def batches(torch, args):
    """Endless (inputs, labels) batches, from a DataLoader when workers are asked for."""
    gen = torch.Generator().manual_seed(0)
    if args.workers == 0:
        x = torch.randn(args.batch_size * 16, 784, generator=gen)
        y = torch.randint(0, 10, (args.batch_size * 16,), generator=gen)
        while True:
            for i in range(16):
                part = slice(i * args.batch_size, (i + 1) * args.batch_size)
                yield x[part], y[part]
    n = args.batch_size * 8
    data = torch.utils.data.TensorDataset(torch.randn(n, 784, generator=gen), torch.randint(0, 10, (n,), generator=gen))
    loader = torch.utils.data.DataLoader(
        data, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, persistent_workers=True
    )
    while True:
        yield from loader


def main():
    args = parse_args()
    if args.torch:
        import torch
    else:
        import ember as torch
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    feed = batches(torch, args)
    first = None
    print(f"pid {os.getpid()}  start  rss {rss_mib():8.1f} MiB", flush=True)
    for step in range(1, args.steps + 1):
        x, y = next(feed)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if step % args.interval == 0 or step == args.steps:
            rss = rss_mib()
            if first is None:
                first = rss
            print(f"step {step:6d}  loss {loss.item():.4f}  rss {rss:8.1f} MiB", flush=True)
    feed.close()
    growth = rss_mib() - first
    print(f"rss growth after step {min(args.interval, args.steps)}: {growth:+.1f} MiB", flush=True)
    if args.max_growth_mb is not None and growth > args.max_growth_mb:
        print(f"RSS grew by more than {args.max_growth_mb} MiB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
