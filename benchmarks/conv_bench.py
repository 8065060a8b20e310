"""Convolution timings, Ember against PyTorch in one process (the numbers of
docs/decisions/0004-convolution.md).

    python benchmarks/conv_bench.py [--threads 1 2] [--repeat 7]

Each case times the forward alone and forward+backward (gradients for input,
weight and bias), alternating between the libraries, and reports medians.
"""

from __future__ import annotations

import argparse
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


def make(lib, shape, seed):
    arr = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    if lib is torch:
        return torch.from_numpy(arr)
    return ember.tensor(arr.tolist()) if arr.size < 1 << 16 else _big(arr)


def _big(arr):
    # Fill in slices to keep the Python list small.
    flat = arr.reshape(-1)
    parts = [ember.tensor(flat[i : i + (1 << 20)].tolist()) for i in range(0, flat.size, 1 << 20)]
    return ember.cat(parts).reshape(list(arr.shape))


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


def timeit(fn, min_time=0.2):
    fn()
    n, t = 0, 0.0
    t0 = time.perf_counter()
    while t < min_time:
        fn()
        n += 1
        t = time.perf_counter() - t0
    return t / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"cpu capability {ember._C._cpu_capability()}, blas {ember._C._blas_info()}")
    print(f"{'case':30s} thr  {'ember fwd':>10s} {'torch fwd':>10s} {'ratio':>6s}  "
          f"{'ember f+b':>10s} {'torch f+b':>10s} {'ratio':>6s}")
    for name, *shape in SHAPES:
        fns = {lib.__name__: case(lib, *shape) for lib in (ember, torch)}
        for th in args.threads:
            res = {}
            for which in (0, 1):
                ts = {"ember": [], "torch": []}
                for _ in range(args.repeat):
                    for lib in (ember, torch):
                        lib.set_num_threads(th)
                        ts[lib.__name__].append(timeit(fns[lib.__name__][which]))
                res[which] = {k: statistics.median(v) for k, v in ts.items()}
            f, fb = res[0], res[1]
            print(f"{name:30s} {th:3d}  {f['ember'] * 1e3:8.2f}ms {f['torch'] * 1e3:8.2f}ms {f['ember'] / f['torch']:6.2f}"
                  f"  {fb['ember'] * 1e3:8.2f}ms {fb['torch'] * 1e3:8.2f}ms {fb['ember'] / fb['torch']:6.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
