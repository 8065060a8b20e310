"""Reductions, softmax and matmul: Ember against PyTorch in one process.

Both libraries get the same float32 data (copied byte for byte), run
interleaved, and the median of several repeats is reported with the ratio
ember/torch (below 1: Ember is faster).

    python benchmarks/bench_reductions.py [--threads N] [--repeat R]
"""

from __future__ import annotations

import argparse
import ctypes
import platform
import statistics
import time

import torch

import ember


def same_data(t):
    """An Ember tensor holding the bytes of the contiguous torch tensor t."""
    dtype = getattr(ember, str(t.dtype).split(".")[1])
    e = ember.empty(tuple(t.shape), dtype=dtype)
    ctypes.memmove(e.data_ptr(), t.data_ptr(), t.numel() * t.element_size())
    return e


def median_time(fn, repeat, inner):
    times = []
    fn()  # warm up
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)

    g = torch.Generator().manual_seed(0)
    big = torch.randn(4096, 4096, generator=g)
    sm = torch.randn(1024, 4096, generator=g)
    a = torch.randn(1024, 1024, generator=g)
    b = torch.randn(1024, 1024, generator=g)
    e_big, e_sm, e_a, e_b = same_data(big), same_data(sm), same_data(a), same_data(b)

    cases = [
        ("sum, all elements, 4096x4096 f32", lambda: e_big.sum(), lambda: big.sum(), 5),
        ("sum(dim=-1), 4096x4096 f32", lambda: e_big.sum(-1), lambda: big.sum(-1), 5),
        ("sum(dim=0), 4096x4096 f32", lambda: e_big.sum(0), lambda: big.sum(0), 5),
        ("softmax(dim=-1), 1024x4096 f32", lambda: e_sm.softmax(-1), lambda: sm.softmax(-1), 5),
        ("log_softmax(dim=-1), 1024x4096 f32", lambda: e_sm.log_softmax(-1), lambda: sm.log_softmax(-1), 5),
        ("mean(dim=-1), 4096x4096 f32", lambda: e_big.mean(-1), lambda: big.mean(-1), 5),
        ("amax(dim=0), 4096x4096 f32", lambda: e_big.amax(0), lambda: big.amax(0), 5),
        ("var(dim=-1), 4096x4096 f32", lambda: e_big.var(-1), lambda: big.var(-1), 2),
        ("argmax(dim=-1), 4096x4096 f32", lambda: e_big.argmax(-1), lambda: big.argmax(-1), 3),
        ("mm 1024x1024 f32", lambda: e_a @ e_b, lambda: a @ b, 3),
        ("mm 1024x1024 f32, A transposed", lambda: e_a.permute(1, 0) @ e_b, lambda: a.t() @ b, 3),
    ]
    print(f"machine: {platform.processor() or platform.machine()}, threads: {args.threads}, "
          f"torch {torch.__version__}, ember {ember.__version__}")
    print(f"{'case':40s} {'ember ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    for name, fe, ft, inner in cases:
        # Interleave the two libraries' repeats.
        te, tt = [], []
        for _ in range(args.repeat):
            te.append(median_time(fe, 1, inner))
            tt.append(median_time(ft, 1, inner))
        me, mt = statistics.median(te), statistics.median(tt)
        print(f"{name:40s} {me * 1e3:10.3f} {mt * 1e3:10.3f} {me / mt:7.2f}")
    # The results agree.
    assert abs(e_big.sum().item() - big.sum().item()) <= 1e-3 * abs(big.abs().sum().item())
    diff = max(abs(x - y) for x, y in zip(e_sm.softmax(-1).narrow(0, 0, 1).tolist()[0], sm.softmax(-1)[0].tolist()))
    assert diff < 1e-6, diff


if __name__ == "__main__":
    main()
