"""A DistributedDataParallel training step on local ranks (2 by default) over
Gloo, Ember vs PyTorch: the MLP and GPT training cases of cases.py, each
wrapped in DDP, every rank on its own batch. Each rank process starts both
libraries' process groups and times their steps in alternation; rank 0 prints
the median step time of each and Ember's ratio (lower is better).

    python benchmarks/bench_ddp.py [--repeats 5] [--steps 10] [--world 2] [--ember-backend gloo|mpi]

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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_step(lib, build, batch, rank):
    import cases

    lib.manual_seed(0)
    model, _ = build(lib)
    ddp = lib.nn.parallel.DistributedDataParallel(model)
    opt = lib.optim.SGD(ddp.parameters(), lr=0.01) if build is cases._mlp else lib.optim.AdamW(ddp.parameters())
    x, y = batch(lib)
    x = x.roll(rank, 0)  # every rank its own batch

    def step():
        opt.zero_grad()
        out = ddp(x)
        lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1)).backward()
        opt.step()

    return step


def time_steps(dist, step, steps):
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    return (time.perf_counter() - start) / steps


def rank_main(args):
    import cases
    import torch
    import torch.distributed as tdist

    import ember
    import ember.distributed as edist

    torch.set_num_threads(1)
    ember.set_num_threads(1)
    timeout = datetime.timedelta(seconds=300)
    if args.ember_backend == "mpi":
        edist.init_process_group("mpi", timeout=timeout)
        rank = edist.get_rank()
    else:
        rank = int(os.environ["RANK"])
        edist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{args.ports[0]}", rank=rank, world_size=args.world, timeout=timeout
        )
    tdist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{args.ports[1]}", rank=rank, world_size=args.world, timeout=timeout
    )
    rows = []
    for name, build, batch in [
        ("MLP step (784-256-128-10, SGD, batch 64)", cases._mlp, cases._vectors),
        ("GPT step (2 layers d128, AdamW, 16x64 tokens)", cases._TinyGPT.build, cases._tokens),
    ]:
        estep, tstep = make_step(ember, build, batch, rank), make_step(torch, build, batch, rank)
        for _ in range(2):  # warm-up, bucket rebuild
            estep()
            tstep()
        et, tt = [], []
        for _ in range(args.repeats):
            et.append(time_steps(edist, estep, args.steps))
            tt.append(time_steps(tdist, tstep, args.steps))
        rows.append((name, statistics.median(et), statistics.median(tt)))
    if rank == 0:
        print(f"{'case':<48} {'ember ms':>9} {'torch ms':>9} {'ratio':>6}   (ember {args.ember_backend}, torch gloo)")
        for name, et, tt in rows:
            print(f"{name:<48} {et * 1e3:9.2f} {tt * 1e3:9.2f} {et / tt:6.2f}")
    edist.destroy_process_group()
    tdist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--ember-backend", choices=["gloo", "mpi"], default="gloo")
    ap.add_argument("--ports", type=int, nargs=2, default=None)
    args = ap.parse_args()
    if args.ports:
        rank_main(args)
        return
    ports = [str(free_port()), str(free_port())]
    cmd = [sys.executable, os.path.abspath(__file__), "--repeats", str(args.repeats), "--steps", str(args.steps)]
    cmd += ["--world", str(args.world), "--ember-backend", args.ember_backend, "--ports", *ports]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if args.ember_backend == "mpi":
        mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or "mpiexec"
        sys.exit(subprocess.call([mpiexec, "-n", str(args.world), *cmd], env=env))
    procs = [subprocess.Popen(cmd, env=dict(env, RANK=str(r))) for r in range(args.world)]
    sys.exit(max(p.wait() for p in procs))


if __name__ == "__main__":
    main()
