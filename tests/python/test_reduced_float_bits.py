"""float16/bfloat16 erf, lgamma and last-dim softmax give PyTorch's bits:
PyTorch computes them in float through its float vectors (Note [16-bit
softmax]; erf: its Abramowitz-Stegun form with SLEEF's exp; lgamma: SLEEF's)."""

import numpy as np
import pytest
from conftest import machine_has_avx512, run_under_capability, torch

import ember

DTYPES = ["float16", "bfloat16"]
N = 100003


def _same_bits(fn, values, dname):
    t = fn(torch, torch.from_numpy(values).to(getattr(torch, dname))).float().numpy()
    e = fn(ember, ember.from_numpy(values).to(getattr(ember, dname))).float().numpy()
    assert t.shape == e.shape
    differ = (t.view(np.uint32) != e.view(np.uint32)) & ~(np.isnan(t) & np.isnan(e))
    assert not differ.any(), int(np.count_nonzero(differ))


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-8, -1e-8, 1e-5, 0.5, -4.1, 65504.0], dtype=np.float32)


@pytest.mark.parametrize("dname", DTYPES)
@pytest.mark.parametrize("name", ["erf", "lgamma"])
def test_16bit_erf_lgamma_bits(name, dname):
    rng = np.random.default_rng(0)
    values = (rng.uniform(0.01, 20, N) if name == "lgamma" else rng.normal(0, 3, N)).astype(np.float32)
    values = np.concatenate([values, SPECIAL])
    f = getattr(torch, name), getattr(ember, name)
    for lay in (slice(None), slice(None, None, 3), slice(0, 77)):
        _same_bits(lambda L, x, lay=lay: (f[0] if L is torch else f[1])(x[lay]), values, dname)


@pytest.mark.parametrize("dname", DTYPES)
def test_16bit_softmax_lastdim_bits(dname):
    rng = np.random.default_rng(1)
    values = rng.normal(0, 3, N).astype(np.float32)
    _same_bits(lambda L, x: L.softmax(x, 0), values, dname)
    _same_bits(lambda L, x: L.softmax(x[::3], 0), values, dname)
    _same_bits(lambda L, x: L.softmax(x[:77], 0), values, dname)
    for rows, n in ((50, 1000), (13, 7), (3, 40), (4, 33)):
        _same_bits(lambda L, x, rows=rows, n=n: x[: rows * n].reshape(rows, n).softmax(-1), values, dname)


def _check_all():
    for dname in DTYPES:
        for name in ("erf", "lgamma"):
            test_16bit_erf_lgamma_bits(name, dname)
        test_16bit_softmax_lastdim_bits(dname)
    return ember._C._cpu_capability()


@pytest.mark.parametrize("cap", ["avx2", "default"])
def test_16bit_bits_other_capabilities(cap):
    run_under_capability(cap, "test_reduced_float_bits", "_check_all")


def test_16bit_bits_avx512():
    if not machine_has_avx512():
        pytest.skip("this CPU has no AVX-512")
    run_under_capability("avx512", "test_reduced_float_bits", "_check_all")
