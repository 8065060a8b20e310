"""Views and indexing: Ember against PyTorch in one process, same inputs,
interleaved runs, median of repeats. Prints one line per case with both
times and the ratio (Ember / PyTorch; below 1 is faster).

    python benchmarks/bench_indexing.py [--threads N] [--repeats R]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch

import ember


def timeit(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def bench(name, make, number, repeats):
    fe, ft = make(ember), make(torch)
    fe(), ft()  # warm up
    te, tt = [], []
    for _ in range(repeats):
        te.append(timeit(fe, number))
        tt.append(timeit(ft, number))
    me, mt = statistics.median(te), statistics.median(tt)
    print(f"{name:<44} ember {me * 1e6:10.2f} us   torch {mt * 1e6:10.2f} us   ratio {me / mt:5.2f}")


def data(lib, *shape):
    n = 1
    for s in shape:
        n *= s
    return lib.tensor([float(i % 97) for i in range(n)]).reshape(shape)


def cases():
    big = (2048, 512)
    yield "x[3] (select, overhead)", lambda lib: (lambda x=data(lib, 64, 64): x[3]), 20000
    yield "x[1:10:2, 3] (slice+select)", lambda lib: (lambda x=data(lib, 64, 64): x[1:10:2, 3]), 20000
    yield "x[None, ..., 0] (basic mix)", lambda lib: (lambda x=data(lib, 8, 8, 8): x[None, ..., 0]), 20000
    yield "x.transpose(0, 1) (view op)", lambda lib: (lambda x=data(lib, 64, 64): x.transpose(0, 1)), 20000
    yield "x.split(16) (64 rows)", lambda lib: (lambda x=data(lib, 64, 64): x.split(16)), 10000

    def rows(lib):
        x = data(lib, *big)
        idx = lib.tensor([(i * 7919) % big[0] for i in range(1024)])
        return lambda: x[idx]

    yield "x[idx] 1024 rows of 2048x512", rows, 200

    def cols(lib):
        x = data(lib, *big)
        idx = lib.tensor([(i * 31) % big[1] for i in range(256)])
        return lambda: x[:, idx]

    yield "x[:, idx] 256 cols of 2048x512", cols, 100

    def mask(lib):
        x = data(lib, 1 << 20)
        m = lib.tensor([i % 3 == 0 for i in range(1 << 20)])
        return lambda: x[m]

    yield "x[mask] 1M elements, 1/3 true", mask, 50

    def small_idx(lib):
        x = data(lib, 100)
        idx = lib.tensor([1, 5, 7])
        return lambda: x[idx]

    yield "x[idx] 3 of 100 (overhead)", small_idx, 20000

    def put(lib):
        x = data(lib, *big)
        idx = lib.tensor([(i * 7919) % big[0] for i in range(1024)])
        v = data(lib, 1024, big[1])
        return lambda: x.index_put_((idx,), v)

    yield "x.index_put_((idx,), v) 1024 rows", put, 200

    def put_acc(lib):
        x = data(lib, 1 << 16)
        idx = lib.tensor([(i * 7919) % (1 << 16) for i in range(1 << 18)])
        v = data(lib, 1 << 18)
        return lambda: x.index_put_((idx,), v, True)

    yield "x.index_put_(acc=True) 256K into 64K", put_acc, 20

    def setitem_mask(lib):
        x = data(lib, 1 << 20)
        m = lib.tensor([i % 3 == 0 for i in range(1 << 20)])

        def f():
            x[m] = 0.0

        return f

    yield "x[mask] = 0.0 1M elements", setitem_mask, 50

    def sel(lib):
        x = data(lib, *big)
        idx = lib.tensor([(i * 7919) % big[0] for i in range(1024)])
        return lambda: x.index_select(0, idx)

    yield "x.index_select(0, idx) 1024 rows", sel, 200

    def sel1(lib):
        x = data(lib, *big)
        idx = lib.tensor([(i * 31) % big[1] for i in range(256)])
        return lambda: x.index_select(1, idx)

    yield "x.index_select(1, idx) 256 cols", sel1, 100

    def mfill(lib):
        x = data(lib, 1 << 20)
        m = lib.tensor([i % 3 == 0 for i in range(1 << 20)])
        return lambda: x.masked_fill_(m, 1.0)

    yield "x.masked_fill_(mask, 1.0) 1M", mfill, 100

    def grad_rows(lib):
        x = data(lib, 512, 256).requires_grad_(True)
        idx = lib.tensor([(i * 7919) % 512 for i in range(512)])

        def f():
            x[idx].sum().backward()

        return f

    yield "x[idx].sum().backward() 512x256", grad_rows, 50

    def inplace_view(lib):
        x = data(lib, 256, 256).requires_grad_(True)

        def f():
            y = x * 1
            y[0] = 5.0
            y[:, 1].mul_(2)
            y.sum().backward()

        return f

    yield "y[0]=5; y[:,1].mul_(2); backward 256x256", inplace_view, 200


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    print(f"# {platform.machine()} {platform.processor() or ''}, threads={args.threads}, "
          f"torch {torch.__version__}, ember {ember.__version__}")
    for name, make, number in cases():
        bench(name, make, number, args.repeats)


if __name__ == "__main__":
    main()
