"""Convolution timings, Ember against PyTorch in one process (the numbers of
docs/decisions/0004-convolution.md).

    python benchmarks/conv_bench.py [--threads 1 2] [--repeat 7] [--clock wall|cpu]

Each case times the forward alone and forward+backward (gradients for input,
weight and bias) for PyTorch, Ember with its default path (oneDNN where the
build has it) and Ember's im2col + GEMM path (EMBER_CONV_BACKEND=im2col),
alternating between them, and reports medians and the ratios to PyTorch.
--clock cpu measures process CPU time instead of wall time: on a machine
shared with other work it is the steadier measure for one thread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch

import ember

SHAPES = [
    # name, batch, cin, cout, hw, k, padding
    ("resnet 32x64x56x56 3x3 p1", 32, 64, 64, 56, 3, 1),
    ("lenet1 64x1x28x28 5x5 ->6", 64, 1, 6, 28, 5, 0),
    ("lenet2 64x6x14x14 5x5 ->16", 64, 6, 16, 14, 5, 0),
]
VARIANTS = ["torch", "ember", "ember-im2col"]


def make(lib, shape, seed):
    arr = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    if lib is torch:
        return torch.from_numpy(arr)
    flat = arr.reshape(-1)
    step = 1 << 20
    parts = [ember.tensor(flat[i : i + step].tolist()) for i in range(0, flat.size, step)]
    return (parts[0] if len(parts) == 1 else ember.cat(parts)).reshape(list(arr.shape))


def case(lib, b, cin, cout, hw, k, pad):
    x = make(lib, (b, cin, hw, hw), 1).requires_grad_(True)
    w = make(lib, (cout, cin, k, k), 2).requires_grad_(True)
    bias = make(lib, (cout,), 3).requires_grad_(True)
    conv = lib.nn.functional.conv2d
    out_hw = hw + 2 * pad - k + 1
    g = make(lib, (b, cout, out_hw, out_hw), 4)

    def fwd():
        with lib.no_grad():
            conv(x, w, bias, padding=pad)

    def fwd_bwd():
        x.grad = w.grad = bias.grad = None
        conv(x, w, bias, padding=pad).backward(g)

    return fwd, fwd_bwd


def timeit(fn, clock, min_time=0.1):
    fn()
    n, t = 0, 0.0
    t0 = clock()
    while t < min_time:
        fn()
        n += 1
        t = clock() - t0
    return t / n


def set_variant(v, threads):
    if v == "ember-im2col":
        os.environ["EMBER_CONV_BACKEND"] = "im2col"
    else:
        os.environ.pop("EMBER_CONV_BACKEND", None)
    (torch if v == "torch" else ember).set_num_threads(threads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    args = ap.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    print(
        f"cpu capability {ember._C._cpu_capability()}, blas {ember._C._blas_info()}, clock {args.clock}"
    )
    print(
        f"{'case':28s} thr {'':5s}" + "".join(f"{v:>14s}" for v in VARIANTS) + "   ratios to torch"
    )
    for name, *shape in SHAPES:
        fns = {"torch": case(torch, *shape)}
        fns["ember"] = fns["ember-im2col"] = case(ember, *shape)
        for th in args.threads:
            for which, label in ((0, "fwd"), (1, "f+b")):
                ts = {v: [] for v in VARIANTS}
                for _ in range(args.repeat):
                    for v in VARIANTS:
                        set_variant(v, th)
                        ts[v].append(timeit(fns[v][which], clock))
                med = {v: statistics.median(ts[v]) for v in VARIANTS}
                ratios = "  ".join(f"{med[v] / med['torch']:.2f}" for v in VARIANTS[1:])
                print(
                    f"{name:28s} {th:3d} {label:5s}"
                    + "".join(f"{med[v] * 1e3:12.2f}ms" for v in VARIANTS)
                    + f"   {ratios}",
                    flush=True,
                )
    os.environ.pop("EMBER_CONV_BACKEND", None)


if __name__ == "__main__":
    main()
