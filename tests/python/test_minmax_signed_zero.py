"""min() and max() of a whole tensor whose extreme is a zero of either sign
give the zero PyTorch gives (Note [Signed zero of min() and max()]), for
every floating dtype, length, thread count and CPU capability."""

import numpy as np
import pytest
from conftest import run_under_capability, torch

import ember

DTYPES = ["float32", "float64", "bfloat16", "float16"]
LENGTHS = [*range(1, 41), 63, 64, 65, 100, 1000, 32768, 32769, 40000, 70001]


def _cases(seed):
    rng = np.random.default_rng(seed)
    for n in LENGTHS:
        for is_max in (False, True):
            for _ in range(3):
                base = rng.uniform(0.5, 2, n) * (-1 if is_max else 1)
                k = int(rng.integers(1, min(n, 6) + 1))
                pos = rng.choice(n, k, replace=False)
                base[pos] = np.where(rng.random(k) < 0.5, -0.0, 0.0)
                yield n, is_max, base


def _check(dname, threads):
    torch.set_num_threads(threads)
    ember.set_num_threads(threads)
    bad = []
    for n, is_max, base in _cases(hash((dname, threads)) % 1000):
        t = torch.tensor(base, dtype=getattr(torch, dname))
        e = ember.tensor(base, dtype=getattr(ember, dname))
        tr, er = (t.max(), e.max()) if is_max else (t.min(), e.min())
        if bool(torch.signbit(tr)) != bool(ember.signbit(er)) or float(tr) != float(er):
            bad.append((n, is_max))
    assert not bad, bad[:10]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dname", DTYPES)
def test_signed_zero_of_min_max(dname, threads):
    before = torch.get_num_threads(), ember.get_num_threads()
    try:
        _check(dname, threads)
    finally:
        torch.set_num_threads(before[0])
        ember.set_num_threads(before[1])


def test_strided_and_out_forms():
    x = np.array([1.0, 0.0, 2.0, -0.0, 3.0, 0.0, -0.0, 5.0] * 5)
    for lib_view in (lambda m: m.tensor(x)[::3], lambda m: m.tensor(x).reshape(5, 8).t()):
        t, e = lib_view(torch), lib_view(ember)
        assert str(t.min()) == str(e.min()) and str(t.max()) == str(e.max())
        ot, oe = torch.empty((), dtype=torch.float64), ember.empty((), dtype=ember.float64)
        torch.min(t, out=ot)
        ember.min(e, out=oe)
        assert str(ot) == str(oe)


def _all_capability_checks():
    for dname in DTYPES:
        _check(dname, 1)
    return ember._C._cpu_capability()


@pytest.mark.parametrize("cap", ["avx2", "default"])
def test_signed_zero_other_capabilities(cap):
    run_under_capability(cap, "test_minmax_signed_zero", "_all_capability_checks")
