"""Counts, per CPU capability, the elements where Ember's results differ from
PyTorch's in any bit.

For each capability (default, avx2, avx512) Ember and PyTorch each run in a
fresh process with the capability forced (EMBER_CPU_CAPABILITY and
ATEN_CPU_CAPABILITY), over the same inputs: elementwise functions,
reductions, normalizations and complex operations, on contiguous, strided
and odd-length tensors of float32, float64, bfloat16, float16, complex64 and
complex128. The parent compares the saved results and prints one table row
per case that differs somewhere (or every row with --all).

    python tools/capability_bits_probe.py [--caps avx512,avx2,default] [--all] [--markdown]

A capability the CPU lacks runs the best one it has (both libraries fall
back the same way); the header line says what each process reported.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

UNARY = "exp log tanh sin erf expm1 log1p sinh cosh exp2 lgamma atanh sigmoid sqrt".split()
REDUCTIONS = "sum mean norm var prod cumsum softmax log_softmax logsumexp".split()
NORMS = "layer_norm batch_norm group_norm rms_norm".split()
COMPLEX = "abs sgn mul div exp".split()
REAL_DTYPES = ["float32", "float64", "bfloat16", "float16"]
COMPLEX_DTYPES = ["complex64", "complex128"]
N = 100003


def _values(name, n, seed):
    rng = np.random.default_rng(seed)
    if name in ("log", "sqrt", "lgamma"):
        return rng.uniform(0.01, 20, n)
    if name == "log1p":
        return rng.uniform(-0.99, 20, n)
    if name == "atanh":
        return rng.uniform(-1, 1, n)
    if name in ("expm1", "sinh", "cosh", "exp2", "exp"):
        return rng.uniform(-20, 20, n)
    if name == "prod":
        return rng.uniform(0.99, 1.01, n)
    return rng.normal(0, 3, n)


def _layouts(lib, x):
    """contiguous, every third element, and a 77-element prefix."""
    return {"contig": x, "strided": x[::3], "odd77": x[:77]}


def _to_numpy(lib, y):
    if y.dtype in (lib.bfloat16, lib.float16):
        y = y.float()
    return y.detach().contiguous().numpy().copy()


def _cases(lib):
    """(key, thunk) pairs: each thunk returns a tensor of the library."""
    cases = []
    F = lib.nn.functional

    def tensor(values, dname):
        if dname in ("bfloat16", "float16"):
            return lib.from_numpy(values.astype(np.float32)).to(getattr(lib, dname))
        return lib.from_numpy(values.astype(dname))

    for dname in REAL_DTYPES:
        for name in UNARY:
            base = tensor(_values(name, N, 0), dname)
            for lay, x in _layouts(lib, base).items():
                cases.append((f"{name} {dname} {lay}", lambda x=x, name=name: getattr(lib, name)(x)))
        for name in REDUCTIONS:
            base = tensor(_values(name, N, 1), dname)
            for lay, x in _layouts(lib, base).items():
                if name in ("sum", "mean", "var", "prod"):
                    f = lambda x=x, name=name: getattr(x, name)()  # noqa: E731
                elif name == "norm":
                    f = lambda x=x: x.norm()  # noqa: E731
                elif name == "cumsum":
                    f = lambda x=x: x.cumsum(0)  # noqa: E731
                elif name == "logsumexp":
                    f = lambda x=x: x.logsumexp(0)  # noqa: E731
                else:
                    f = lambda x=x, name=name: getattr(lib, name)(x, 0)  # noqa: E731
                cases.append((f"{name} {dname} {lay}", f))
            rows = tensor(_values(name, 50 * 1000, 2), dname).reshape(50, 1000)
            if name in ("softmax", "log_softmax", "logsumexp", "cumsum"):
                cases.append((f"{name} {dname} rows50x1000", lambda r=rows, name=name: getattr(r, name)(1)))
            elif name in ("sum", "mean", "var", "prod"):
                cases.append((f"{name} {dname} rows50x1000", lambda r=rows, name=name: getattr(r, name)(1)))
            else:
                cases.append((f"{name} {dname} rows50x1000", lambda r=rows: r.norm(dim=1)))
        for rows, feat in ((64, 1000), (7, 77)):
            x = tensor(_values("norm", rows * feat, 3), dname).reshape(rows, feat)
            xs = tensor(_values("norm", rows * feat * 2, 3), dname).reshape(rows, feat * 2)[:, ::2]
            w = tensor(_values("w", feat, 4), dname)
            b = tensor(_values("b", feat, 5), dname)
            for lay, inp in (("contig", x), ("strided", xs)):
                key = f"{dname} {lay}{rows}x{feat}"
                cases.append((f"layer_norm {key}", lambda i=inp, w=w, b=b: F.layer_norm(i, (i.shape[-1],), w, b)))
                cases.append((f"rms_norm {key}", lambda i=inp, w=w: F.rms_norm(i, (i.shape[-1],), w)))
                cases.append(
                    (f"batch_norm {key}", lambda i=inp: F.batch_norm(i.t().unsqueeze(0), None, None, training=True))
                )
                if feat % 7 == 0:
                    cases.append((f"group_norm {key}", lambda i=inp: F.group_norm(i.unsqueeze(0), 7)))
    for dname in COMPLEX_DTYPES:
        real = "float32" if dname == "complex64" else "float64"
        rng = np.random.default_rng(6)
        z = lib.from_numpy((rng.normal(0, 3, (2, 4000)) * np.exp(rng.uniform(-5, 5, (2, 4000)))).astype(real))
        z = lib.complex(z[0], z[1])
        w = lib.from_numpy(rng.normal(0, 3, (2, 4000)).astype(real))
        w = lib.complex(w[0], w[1])
        for lay, (a, c) in {"contig": (z, w), "strided": (z[::3], w[::3]), "odd77": (z[:77], w[:77])}.items():
            cases.append((f"abs {dname} {lay}", lambda a=a: a.abs()))
            cases.append((f"sgn {dname} {lay}", lambda a=a: a.sgn()))
            cases.append((f"mul {dname} {lay}", lambda a=a, c=c: a * c))
            cases.append((f"div {dname} {lay}", lambda a=a, c=c: a / c))
            cases.append((f"exp {dname} {lay}", lambda a=a: (a * 1e-2).exp()))
    return cases


def child(lib_name, out):
    if lib_name == "torch":
        import torch as lib

        cap = lib.backends.cpu.get_cpu_capability()
    else:
        import ember as lib

        cap = lib._C._cpu_capability()
    lib.set_num_threads(1)
    results = {"__capability__": np.array(cap)}
    for key, f in _cases(lib):
        try:
            results[key] = _to_numpy(lib, f())
        except Exception as e:  # noqa: BLE001 - a failing case is reported, not fatal
            results[key] = np.array(f"error: {type(e).__name__}: {e}"[:200])
    np.savez(out, **results)


def _differ(a, b):
    if a.dtype.kind == "U" or b.dtype.kind == "U":
        return -1
    if a.shape != b.shape or a.dtype != b.dtype:
        return -2
    if a.dtype.kind == "c":
        return int(np.count_nonzero(_differ_mask(a.real, b.real) | _differ_mask(a.imag, b.imag)))
    return int(np.count_nonzero(_differ_mask(a, b)))


def _differ_mask(a, b):
    a, b = np.ascontiguousarray(np.atleast_1d(a)), np.ascontiguousarray(np.atleast_1d(b))
    return ~((a.view(np.uint8).reshape(a.shape + (-1,)) == b.view(np.uint8).reshape(b.shape + (-1,))).all(-1)) & ~(
        np.isnan(a) & np.isnan(b)
    )


def run(caps, python):
    here = os.path.abspath(__file__)
    table = {}
    reported = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cap in caps:
            files = {}
            for lib_name in ("torch", "ember"):
                out = os.path.join(tmp, f"{lib_name}-{cap}.npz")
                env = dict(os.environ, EMBER_CPU_CAPABILITY=cap, ATEN_CPU_CAPABILITY=cap, OMP_NUM_THREADS="1")
                subprocess.run([python, here, "--child", lib_name, "--out", out], env=env, check=True)
                files[lib_name] = np.load(out)
            reported[cap] = (str(files["torch"]["__capability__"]), str(files["ember"]["__capability__"]))
            for key in files["torch"].files:
                if key == "__capability__":
                    continue
                t, e = files["torch"][key], files["ember"][key]
                table.setdefault(key, {})[cap] = (_differ(e, t), t.size)
    return table, reported


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--caps", default="avx512,avx2,default")
    p.add_argument("--all", action="store_true", help="print cases that match everywhere too")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child, args.out)
        return
    caps = args.caps.split(",")
    table, reported = run(caps, sys.executable)
    print("capability (torch/ember): " + ", ".join(f"{c}: {t}/{e}" for c, (t, e) in reported.items()))
    sep = " | " if args.markdown else "  "
    head = ["case"] + caps
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(sep.join(f"{h:<34}" if i == 0 else f"{h:>14}" for i, h in enumerate(head)))
    totals = {c: 0 for c in caps}
    for key, per in table.items():
        cells = []
        for c in caps:
            d, n = per.get(c, (0, 0))
            cells.append("error" if d == -1 else "shape" if d == -2 else f"{d}/{n}")
            totals[c] += d > 0 or d < 0
        if not args.all and all(per.get(c, (0, 0))[0] == 0 for c in caps):
            continue
        row = [key] + cells
        if args.markdown:
            print("| " + " | ".join(row) + " |")
        else:
            print(sep.join(f"{r:<34}" if i == 0 else f"{r:>14}" for i, r in enumerate(row)))
    print("cases differing: " + ", ".join(f"{c}: {totals[c]} of {len(table)}" for c in caps))


if __name__ == "__main__":
    main()
