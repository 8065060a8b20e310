"""Norms, var/std, prod and logsumexp give PyTorch's bits: the same
summation order (serial folds, the contiguous two-norm's vector accumulator
and fused tail, the two-pass variance of everything, the product's vector
blocks, logsumexp's step-by-step composition), on one thread and several, and
on every CPU capability (Notes [Serial reductions], [Two-norm of contiguous
rows], [Variance order], [Product order])."""

import os

import numpy as np
import pytest
from conftest import machine_has_avx512, run_under_capability, torch

import ember

DTYPES = ["float32", "float64", "bfloat16", "float16"]
SHAPES = [(7,), (24,), (100,), (1000,), (11, 8), (33, 17), (3, 5, 7), (50, 1000)]


def _pair(values, dname):
    t = torch.from_numpy(values.copy())
    e = ember.from_numpy(values.copy())
    if dname in ("bfloat16", "float16"):
        return t.float().to(getattr(torch, dname)), e.float().to(getattr(ember, dname))
    return t.to(getattr(torch, dname)), e.to(getattr(ember, dname))


def _bits(x):
    x = x.detach()
    if x.dtype in (torch.bfloat16, torch.float16, ember.bfloat16, ember.float16):
        x = x.float()
    return x.contiguous().numpy()


def _same(f, values, dname):
    t, e = _pair(values, dname)
    want, got = f(torch, t), f(ember, e)
    if not isinstance(want, (tuple, list)):
        want, got = (want,), (got,)
    for w, g in zip(want, got):
        w, g = _bits(w), _bits(g)
        assert w.shape == g.shape
        # Every bit but NaN payloads: the same NaNs, values and signs (of zeros too).
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan)
        w, g = w[~nan], g[~nan]
        assert np.array_equal(w, g) and np.array_equal(np.signbit(w), np.signbit(g)), f"{int(np.sum(w != g))} differ"


def _views(L, a):
    """The tensor, every other element (strided) and, for 2-D, its transpose."""
    out = [a, a.reshape(-1)[::2]]
    if a.dim() == 2:
        out.append(a.t())
    return out


NORMS = {
    "norm": lambda L, a: a.norm(),
    "ord1": lambda L, a: L.linalg.vector_norm(a, 1),
    "ord2": lambda L, a: L.linalg.vector_norm(a, 2.0),
    "ord3": lambda L, a: L.linalg.vector_norm(a, 3),
    "ord0": lambda L, a: L.linalg.vector_norm(a, 0),
}


def _check_norms(threads=1):
    g = np.random.default_rng(1)
    for shape in SHAPES:
        values = g.standard_normal(shape)
        for dname in DTYPES:
            for name, f in NORMS.items():
                if name in ("ord3", "ord0") and dname in ("bfloat16", "float16"):
                    continue
                for k in range(3 if len(shape) == 2 else 2):
                    _same(lambda L, a, f=f, k=k: f(L, _views(L, a)[k]), values, dname)
            if len(shape) >= 2:
                _same(lambda L, a: (a.norm(dim=-1), a.norm(dim=0), L.linalg.vector_norm(a, 1, dim=-1)), values, dname)


def _check_var(threads=1):
    g = np.random.default_rng(2)
    for shape in SHAPES + [(40000,), (300, 300)]:
        values = g.standard_normal(shape) * 3 + 1
        for dname in DTYPES:
            _same(lambda L, a: (a.var(), a.std(), a.var(correction=0), a.reshape(-1)[::3].var()), values, dname)
            _same(lambda L, a: tuple(L.var_mean(a)) + tuple(L.std_mean(a)), values, dname)
            if len(shape) >= 2:
                _same(lambda L, a: (a.var(-1), a.std(0), a.transpose(0, -1).var(), *L.var_mean(a, 1)), values, dname)


def _check_prod(threads=1):
    g = np.random.default_rng(3)
    for shape in SHAPES + [(40000,), (4, 70000), (300, 300)]:
        values = g.uniform(0.99, 1.01, shape)
        for dname in DTYPES:
            _same(lambda L, a: (a.prod(), a.reshape(-1)[::3].prod(), a.reshape(-1)[:77].prod()), values, dname)
            if len(shape) >= 2:
                _same(lambda L, a: (a.prod(-1), a.prod(0), a.transpose(0, -1).prod()), values, dname)


def _check_logsumexp(threads=1):
    g = np.random.default_rng(4)
    for shape in SHAPES:
        values = g.standard_normal(shape) * 4
        for dname in DTYPES:
            _same(lambda L, a: (L.logsumexp(a.reshape(-1), 0), L.logsumexp(a, -1, keepdim=True)), values, dname)
            if len(shape) >= 2:
                _same(lambda L, a: (L.logsumexp(a, 0), L.logsumexp(a, (0, 1))), values, dname)
    special = np.array([[1.0, np.inf, 2.0], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 0.0]])
    _same(lambda L, a: L.logsumexp(a, 1), special, "float32")


CHECKS = {"norm": _check_norms, "var": _check_var, "prod": _check_prod, "logsumexp": _check_logsumexp}


@pytest.fixture(params=[1, 2, 3])
def threads(request):
    old = (torch.get_num_threads(), ember.get_num_threads())
    torch.set_num_threads(request.param)
    ember.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(old[0])
    ember.set_num_threads(old[1])


@pytest.mark.parametrize("name", list(CHECKS))
def test_reduction_bits_are_pytorchs(name, threads):
    CHECKS[name](threads)


def test_long_reductions_split_as_pytorch(threads):
    # More than 32768 elements into one result: PyTorch's pieces per thread.
    g = np.random.default_rng(5)
    values = g.standard_normal(100003) * 2
    for dname in ("float32", "float64", "bfloat16"):
        _same(lambda L, a: (a.norm(), a[::2].norm(), L.linalg.vector_norm(a, 1)), values, dname)
        _same(lambda L, a: (a.var(), a[::3].std(), *L.var_mean(a)), values, dname)
    _same(lambda L, a: (a.prod(), a[::3].prod()), g.uniform(0.999, 1.001, 100003), "float32")
    # Several outputs split over threads by columns: each summed once.
    _same(lambda L, a: (a.sum(-1), a.prod(-1)), g.uniform(0.999, 1.001, (4, 70000)), "float32")


@pytest.mark.parametrize(
    "shapes", [[(96, 8)], [(1000,)], [(33, 17), (7,)], [(64, 32), (64,), (11, 8), (96, 8), (7, 3, 5), (1000,)]]
)
def test_clip_grad_norm_is_pytorchs(shapes):
    # Each gradient's 2-norm (contiguous: the vector accumulator), then theirs.
    g = np.random.default_rng(6)
    grads = [g.standard_normal(s).astype(np.float32) for s in shapes]
    results = []
    for L in (torch, ember):
        params = [L.nn.Parameter(L.zeros(s)) for s in shapes]
        for p, v in zip(params, grads):
            p.grad = L.from_numpy(v.copy())
        total = L.nn.utils.clip_grad_norm_(params, 0.5)
        results.append([total.numpy()] + [p.grad.numpy() for p in params])
    for w, e in zip(*results):
        assert np.array_equal(w, e)


def _check_all():
    for check in CHECKS.values():
        check()
    return ember._C._cpu_capability()


@pytest.mark.skipif(os.environ.get("EMBER_CPU_CAPABILITY") is not None, reason="already under a chosen build")
@pytest.mark.parametrize("cap", ["default", "avx2", "avx512"])
def test_each_capability_is_pytorchs(cap):
    if cap == "avx512" and not machine_has_avx512():
        pytest.skip("this CPU has no AVX-512")
    run_under_capability(cap, "test_reduce_bits", "_check_all")
