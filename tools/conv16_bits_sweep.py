"""Counts the 16-bit convolutions where Ember's output or gradients differ
from PyTorch's in any bit (docs/decisions/0092-bf16-convolution-onednn.md).

188 problems: conv2d over batch 1/8/64, channels 1/3/16/32/64 in and
1/16/32/64 out, kernels 1/3/5, each with a geometry, groups, bias and memory
format drawn from a fixed generator; plus a few conv1d and conv_transpose2d.
Each runs forward and backward (a random output gradient) in both libraries
on the same inputs; the output and the input, weight and bias gradients are
compared bit for bit. Prints the counts and one line per differing case.

    python tools/conv16_bits_sweep.py [bfloat16|float16] [threads]
"""

from __future__ import annotations

import itertools
import sys

import numpy as np
import torch

import ember

GEOMETRIES = [(1, None, 1), (2, 1, 1), (1, 0, 1), (1, 2, 2), (2, 0, 1)]  # stride, padding (None: k // 2), dilation


def cases():
    rng = np.random.default_rng(0)
    out = []
    for n, c, o, k in itertools.product((1, 8, 64), (1, 3, 16, 32, 64), (1, 16, 32, 64), (1, 3, 5)):
        s, p, d = GEOMETRIES[rng.integers(len(GEOMETRIES))]
        p = k // 2 if p is None else p
        g = 1
        if c == o and c > 1 and rng.integers(3) == 0:
            g = c
        elif c % 2 == 0 and o % 2 == 0 and rng.integers(4) == 0:
            g = 2
        size = 14 if n < 64 else 8
        if size + 2 * p - d * (k - 1) - 1 < 0:
            continue
        bias, cl = bool(rng.integers(2)), bool(rng.integers(2))
        out.append(dict(fn="conv2d", n=n, c=c, o=o, k=k, s=s, p=p, d=d, g=g, size=size, bias=bias, cl=cl))
    for n, c, o, k in [(8, 16, 32, 3), (1, 3, 16, 5), (64, 32, 32, 3), (8, 64, 64, 1)]:
        out.append(dict(fn="conv1d", n=n, c=c, o=o, k=k, s=1, p=1, d=1, g=1, size=20, bias=True, cl=False))
    for n, c, o, k, s in [(8, 16, 32, 3, 2), (1, 3, 16, 3, 1), (8, 32, 16, 4, 2), (8, 16, 16, 3, 1)]:
        out.append(dict(fn="conv_transpose2d", n=n, c=c, o=o, k=k, s=s, p=1, d=1, g=1, size=7, bias=True, cl=False))
    return out


def shapes(c):
    spatial = (c["size"],) if c["fn"] == "conv1d" else (c["size"], c["size"])
    kernel = (c["k"],) * len(spatial)
    if c["fn"] == "conv_transpose2d":
        return (c["n"], c["c"], *spatial), (c["c"], c["o"] // c["g"], *kernel)
    return (c["n"], c["c"], *spatial), (c["o"], c["c"] // c["g"], *kernel)


def keywords(c):
    return dict(stride=c["s"], padding=c["p"], dilation=c["d"], groups=c["g"])


def run(lib, c, arrays, dtype):
    x, w, b, gy = (lib.from_numpy(a.copy()).to(getattr(lib, dtype)) for a in arrays)
    if c["cl"]:
        x = x.contiguous(memory_format=lib.channels_last)
    for t in (x, w, b):
        t.requires_grad_()
    y = getattr(lib.nn.functional, c["fn"])(x, w, b if c["bias"] else None, **keywords(c))
    y.backward(gy)
    results = [y, x.grad, w.grad] + ([b.grad] if c["bias"] else [])
    return [np.ascontiguousarray(t.detach().float().numpy()).view(np.uint32) for t in results]


def main():
    dtype = sys.argv[1] if len(sys.argv) > 1 else "bfloat16"
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    names = ["out", "dx", "dw", "db"]
    exact, same_parts, parts, diffs = 0, np.zeros(4, int), np.zeros(4, int), []
    all_cases = cases()
    for i, c in enumerate(all_cases):
        rng = np.random.default_rng(i)
        xs, ws = shapes(c)
        x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
        b = rng.standard_normal(c["o"]).astype(np.float32)
        with torch.no_grad():
            fn = getattr(torch.nn.functional, c["fn"])
            yshape = fn(torch.from_numpy(x), torch.from_numpy(w), **keywords(c)).shape
        gy = rng.standard_normal(tuple(yshape)).astype(np.float32)
        got, want = run(ember, c, [x, w, b, gy], dtype), run(torch, c, [x, w, b, gy], dtype)
        same = [np.array_equal(g, e) for g, e in zip(got, want)]
        for j, s in enumerate(same):
            same_parts[j] += s
            parts[j] += 1
        exact += all(same)
        if not all(same):
            bad = [f"{names[j]}: {int((got[j] != want[j]).sum())}/{got[j].size}" for j, s in enumerate(same) if not s]
            diffs.append(f"{c} -> {', '.join(bad)}")
    print(
        f"{dtype}, {threads} thread(s): {exact}/{len(all_cases)} cases exact; exact parts (out, dx, dw, db): "
        f"{same_parts.tolist()} of {parts.tolist()}"
    )
    for d in diffs:
        print("  differs:", d)


if __name__ == "__main__":
    main()
