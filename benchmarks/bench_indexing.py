"""Views and indexing: Ember against PyTorch in one process, same inputs,
interleaved runs, median (or minimum) of repeats. Prints one line per case
with both times and the ratio (Ember / PyTorch; below 1 is faster).

    python benchmarks/bench_indexing.py [--threads N] [--repeats R] [--min] [-k SUBSTR ...]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import torch

import ember


def timeit(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def bench(name, make, number, repeats, stat=statistics.median):
    fe, ft = make(ember), make(torch)
    fe(), ft()  # warm up
    te, tt = [], []
    for _ in range(repeats):
        te.append(timeit(fe, number))
        tt.append(timeit(ft, number))
    me, mt = stat(te), stat(tt)
    print(f"{name:<44} ember {me * 1e6:10.2f} us   torch {mt * 1e6:10.2f} us   ratio {me / mt:5.2f}")


def data(lib, *shape):
    n = 1
    for s in shape:
        n *= s
    return lib.tensor([float(i % 97) for i in range(n)]).reshape(shape)


def rand(lib, *shape, dtype="float32", seed=0):
    """The same random values in both libraries (uniform in [-1, 1))."""
    x = np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)
    return lib.from_numpy(x)


def randint(lib, high, n, seed=1):
    return lib.from_numpy(np.random.default_rng(seed).integers(0, high, n))


def scatter_gather_cases():
    n = 1024

    def index_add(dim, dtype="float32"):
        def make(lib):
            a, b, idx = rand(lib, n, n, dtype=dtype), rand(lib, n, n, dtype=dtype, seed=2), randint(lib, n, n)
            return lambda: a.clone().index_add_(dim, idx, b)

        return make

    yield "a.clone().index_add_(0, idx, b) 1024^2", index_add(0), 50
    yield "a.clone().index_add_(1, idx, b) 1024^2", index_add(1), 50
    yield "a.clone().index_add_(0, idx, b) float64", index_add(0, "float64"), 50

    def index_add_bf16(lib):
        a, b, idx = rand(lib, n, n).to(lib.bfloat16), rand(lib, n, n, seed=2).to(lib.bfloat16), randint(lib, n, n)
        return lambda: a.clone().index_add_(0, idx, b)

    yield "a.clone().index_add_(0, idx, b) bfloat16", index_add_bf16, 50

    def gather(dim, expanded, dtype="float32"):
        def make(lib):
            a = rand(lib, n, n, dtype=dtype)
            if expanded:
                idx = randint(lib, n, n)
                idx = idx.view(1, -1).expand(n, n) if dim == 1 else idx.view(-1, 1).expand(n, n)
            else:
                idx = randint(lib, n, n * n).view(n, n)
            return lambda: a.gather(dim, idx)

        return make

    yield "a.gather(1, idx expanded) 1024^2", gather(1, True), 50
    yield "a.gather(1, idx expanded) int64", gather(1, True, "int64"), 50
    yield "a.gather(0, idx expanded) 1024^2", gather(0, True), 50
    yield "a.gather(1, idx full) 1024^2", gather(1, False), 50
    yield "a.gather(0, idx full) 1024^2", gather(0, False), 50

    def scatter_add(dim, expanded):
        def make(lib):
            b = rand(lib, n, n, seed=2)
            if expanded:
                idx = randint(lib, n, n)
                idx = idx.view(1, -1).expand(n, n) if dim == 1 else idx.view(-1, 1).expand(n, n)
            else:
                idx = randint(lib, n, n * n).view(n, n)
            return lambda: lib.zeros(n, n).scatter_add_(dim, idx, b)

        return make

    yield "zeros.scatter_add_(1, idx expanded, b)", scatter_add(1, True), 50
    yield "zeros.scatter_add_(0, idx expanded, b)", scatter_add(0, True), 50
    yield "zeros.scatter_add_(1, idx full, b)", scatter_add(1, False), 50
    yield "zeros.scatter_add_(0, idx full, b)", scatter_add(0, False), 50

    def scatter_src(lib):
        b, idx = rand(lib, n, n, seed=2), randint(lib, n, n * n).view(n, n)
        return lambda: lib.zeros(n, n).scatter_(1, idx, b)

    yield "zeros.scatter_(1, idx full, b)", scatter_src, 50

    def one_hot(lib):
        labels = randint(lib, n, n)
        return lambda: lib.nn.functional.one_hot(labels, n)

    yield "F.one_hot(labels 1024, 1024)", one_hot, 100

    def nonzero(lib):
        a = rand(lib, n, n)
        return lambda: (a > 0).nonzero()

    yield "(a > 0).nonzero() 1024^2", nonzero, 20

    def emb_bwd(lib):
        w = rand(lib, n, n).requires_grad_(True)
        ids = lib.arange(0, n, 3)

        def f():
            lib.nn.functional.embedding(ids, w).sum().backward()

        return f

    yield "embedding(arange(0,1024,3), w) backward", emb_bwd, 50

    def put_acc2d(lib):
        a, b, idx = rand(lib, n, n), rand(lib, n, n, seed=2), randint(lib, n, n)
        return lambda: a.clone().index_put_((idx,), b, accumulate=True)

    yield "a.clone().index_put_((idx,), b, acc=True)", put_acc2d, 50

    def index_copy(lib):
        a, b, idx = rand(lib, n, n), rand(lib, n, n, seed=2), lib.from_numpy(np.random.default_rng(3).permutation(n))
        return lambda: a.index_copy_(0, idx, b)

    yield "a.index_copy_(0, perm, b) 1024^2", index_copy, 100

    def index_copy1(lib):
        a, b, idx = rand(lib, n, n), rand(lib, n, n, seed=2), lib.from_numpy(np.random.default_rng(3).permutation(n))
        return lambda: a.index_copy_(1, idx, b)

    yield "a.index_copy_(1, perm, b) 1024^2", index_copy1, 50

    def index_fill(dim):
        def make(lib):
            a, idx = rand(lib, n, n), randint(lib, n, n // 2)
            return lambda: a.index_fill_(dim, idx, 1.5)

        return make

    yield "a.index_fill_(0, idx 512, 1.5) 1024^2", index_fill(0), 100
    yield "a.index_fill_(1, idx 512, 1.5) 1024^2", index_fill(1), 100

    def masked_scatter(lib):
        a, b = rand(lib, n, n), rand(lib, n, n, seed=2)
        m = a > 0
        return lambda: a.masked_scatter_(m, b)

    yield "a.masked_scatter_(a > 0, b) 1024^2", masked_scatter, 50

    def take(lib):
        a, idx = rand(lib, n, n), randint(lib, n * n, n * n).view(n, n)
        return lambda: lib.take(a, idx)

    yield "torch.take(a, idx 1M) 1024^2", take, 50

    def put(lib):
        a, b, idx = rand(lib, n, n), rand(lib, n * n, seed=2), randint(lib, n * n, n * n)
        return lambda: a.put_(idx, b, accumulate=True)

    yield "a.put_(idx 1M, b, accumulate=True)", put, 50


def cases():
    big = (2048, 512)
    yield "x[3] (select, overhead)", lambda lib: (lambda x=data(lib, 64, 64): x[3]), 20000  # noqa: B008
    yield "x[1:10:2, 3] (slice+select)", lambda lib: (lambda x=data(lib, 64, 64): x[1:10:2, 3]), 20000  # noqa: B008
    yield "x[None, ..., 0] (basic mix)", lambda lib: (lambda x=data(lib, 8, 8, 8): x[None, ..., 0]), 20000  # noqa: B008
    yield "x.transpose(0, 1) (view op)", lambda lib: (lambda x=data(lib, 64, 64): x.transpose(0, 1)), 20000  # noqa: B008
    yield "x.split(16) (64 rows)", lambda lib: (lambda x=data(lib, 64, 64): x.split(16)), 10000  # noqa: B008

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
    ap.add_argument("--min", action="store_true", help="minimum of the repeats instead of the median")
    ap.add_argument("-k", action="append", default=[], help="only cases whose name contains this (repeatable)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    print(f"# {platform.machine()} {platform.processor() or ''}, threads={args.threads}, "
          f"torch {torch.__version__}, ember {ember.__version__}")
    stat = min if args.min else statistics.median
    for name, make, number in [*cases(), *scatter_gather_cases()]:
        if not args.k or any(k in name for k in args.k):
            try:
                bench(name, make, number, args.repeats, stat)
            except (AttributeError, RuntimeError) as e:  # an op one library lacks
                print(f"{name:<44} skipped: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
