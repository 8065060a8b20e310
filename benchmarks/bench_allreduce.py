"""all_reduce bus bandwidth on local ranks (2 by default) over Gloo, Ember vs PyTorch.

Each rank process starts both libraries' process groups and times them in
alternation on float32 tensors of 4 KB ... 64 MB; rank 0 prints the median
bus bandwidth (size x 2(n-1)/n / time, GB/s) of each and Ember's ratio
(higher is better).

    python benchmarks/bench_allreduce.py [--repeats 5] [--max-mb 64] [--world 2] [--ember-backend gloo|mpi]

With --ember-backend mpi the ranks start under the mpich wheel's mpiexec and
Ember's group is an MPI one (PyTorch's stays Gloo).
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bus_bandwidth(dist, t, world, min_time=0.15) -> float:
    dist.all_reduce(t)
    n = 1
    while True:
        dist.barrier()
        start = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(t)
        elapsed = time.perf_counter() - start
        # Every rank must agree on the loop count: rank 0's decision wins.
        decision = t.new_tensor([1.0 if elapsed >= min_time or n >= 4096 else 0.0])
        dist.broadcast(decision, 0)
        if decision.item() == 1.0:
            return t.numel() * t.element_size() * 2 * (world - 1) / world / (elapsed / n) / 1e9
        n *= 4


def rank_main(args):
    import torch
    import torch.distributed as tdist

    import ember
    import ember.distributed as edist

    world = args.world
    timeout = datetime.timedelta(seconds=120)
    if args.ember_backend == "mpi":
        edist.init_process_group("mpi", timeout=timeout)
        rank = edist.get_rank()
    else:
        rank = int(os.environ["RANK"])
        edist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{args.ports[0]}", rank=rank, world_size=world, timeout=timeout
        )
    tdist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{args.ports[1]}", rank=rank, world_size=world, timeout=timeout
    )
    size = 4096
    rows = []
    while size <= args.max_mb * 1024 * 1024:
        e = ember.ones(size // 4)
        t = torch.ones(size // 4)
        eb, tb = [], []
        for _ in range(args.repeats):
            eb.append(bus_bandwidth(edist, e, world))
            tb.append(bus_bandwidth(tdist, t, world))
        rows.append((size, statistics.median(eb), statistics.median(tb)))
        size *= 4
    if rank == 0:
        print(
            f"{'size':>8} {'ember GB/s':>11} {'torch GB/s':>11} {'ratio':>6}   (ember {args.ember_backend}, torch gloo)"
        )
        for size, eb, tb in rows:
            label = f"{size // 1024} KB" if size < 1024 * 1024 else f"{size // (1024 * 1024)} MB"
            print(f"{label:>8} {eb:11.3f} {tb:11.3f} {eb / tb:6.2f}")
        print(f"geometric mean ratio {statistics.geometric_mean([r[1] / r[2] for r in rows]):.2f}")
    edist.destroy_process_group()
    tdist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-mb", type=int, default=64)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--ember-backend", choices=["gloo", "mpi"], default="gloo")
    ap.add_argument("--ports", type=int, nargs=2, default=None)
    args = ap.parse_args()
    if args.ports:
        rank_main(args)
        return
    ports = [str(free_port()), str(free_port())]
    cmd = [sys.executable, __file__, "--repeats", str(args.repeats), "--max-mb", str(args.max_mb)]
    cmd += ["--world", str(args.world), "--ember-backend", args.ember_backend, "--ports", *ports]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if args.ember_backend == "mpi":
        mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or "mpiexec"
        sys.exit(subprocess.call([mpiexec, "-n", str(args.world), *cmd], env=env))
    procs = [subprocess.Popen(cmd, env=dict(env, RANK=str(r))) for r in range(args.world)]
    sys.exit(max(p.wait() for p in procs))


if __name__ == "__main__":
    main()
