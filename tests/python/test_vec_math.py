"""The vectorised float32 math functions (erf, erfc, log1p, expm1, log2, log10,
exp2, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh) against torch:
values within about 2 ulp, the positions of NaN, +-inf and signed zeros equal,
float16/bfloat16, strided inputs and lengths through the vector body and its
tail. The same checks run in subprocesses under the default (SSE2) and AVX2
builds (EMBER_CPU_CAPABILITY), so every compiled copy is covered."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import HAS_MKL, HAS_SLEEF, SLEEF_OPS, VML_OPS, run_under_capability, torch

import ember

OPS = [
    "erf",
    "erfc",
    "log1p",
    "expm1",
    "log2",
    "log10",
    "exp2",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
]

SPECIALS = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    1e-45,
    -1e-45,
    1e-40,
    -1e-40,
    1.1754944e-38,
    3e-38,
    1e-30,
    -1e-30,
    1e-8,
    -1e-8,
    0.9999999,
    -0.9999999,
    1.0000001,
    1.5707964,
    -1.5707964,
    3.1415927,
    8192.0,
    8193.0,
    -1e5,
    3.9,
    4.0,
    -4.0,
    9.0,
    10.0,
    10.06,
    10.1,
    -10.1,
    30.0,
    -30.0,
    88.0,
    88.72,
    88.73,
    89.5,
    -87.0,
    -103.0,
    -104.0,
    -126.0,
    -149.0,
    -149.5,
    -150.0,
    -151.0,
    127.9,
    128.0,
    3e38,
    -3e38,
]

# Where torch's float32 result is not within 2 ulp of the correctly rounded
# value, or differs from it in kind (NaN, inf, zero, sign of zero), Ember is
# compared with the correctly rounded value (the float64 result rounded): torch
# flushes some subnormal inputs and results to zero (log1p(1e-45) = 0, erfc(10.05)
# = 0 where the result is 1e-45) and overflows sinh/cosh early (inf for
# 88.72 < |x| <= 89.41, where the results are finite).


def _inputs(op, n=20000, seed=0):
    rng = np.random.default_rng(seed + len(op) * 7 + ord(op[-1]))
    k = n // 4
    parts = [rng.standard_normal(k) * 3, rng.standard_normal(k) * 30]
    if op in ("asin", "acos", "atanh"):
        parts.append(rng.uniform(-1.001, 1.001, k))
    elif op == "acosh":
        parts.append(rng.uniform(0.999, 30, k))
    elif op == "log1p":
        parts.append(rng.uniform(-1.001, 10, k))
    else:
        parts.append(rng.uniform(-12, 12, k))
    # Every binade from subnormals to the largest floats, both signs.
    mags = np.exp(rng.uniform(np.log(1e-45), np.log(3e38), n - 3 * k))
    parts.append(mags * rng.choice([-1.0, 1.0], n - 3 * k))
    x = np.concatenate(parts + [np.array(SPECIALS)]).astype(np.float32)
    return x


def _ulps(a, b):
    """Distance in float32 ulps between arrays of finite floats a and b."""
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


def _same_specials(got, want, where=""):
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"NaN positions differ {where}"
    inf = np.isinf(want)
    assert np.array_equal(np.isinf(got), inf) and np.array_equal(got[inf], want[inf]), f"inf differs {where}"
    zero = want == 0
    assert np.array_equal(got == 0, zero), f"zeros differ {where}"
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), f"sign of zero differs {where}"


def _check_float32(op, x):
    got = getattr(ember, op)(ember.from_numpy(x)).numpy()
    tx = torch.from_numpy(x)
    want = getattr(torch, op)(tx).numpy()
    if op in VML_OPS and HAS_MKL:
        # Both compute it with MKL's VML (Note [MKL for elementwise functions]): the same bits.
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32), err_msg=op)
        return np.zeros(got.shape, bool)
    if op in SLEEF_OPS and HAS_SLEEF:
        # Both compute it with SLEEF (Note [SLEEF for vector math]): torch's
        # results are the reference, where they are off the correctly rounded
        # ones too (Debian's SLEEF differs from PyTorch's in a few far lanes).
        _same_specials(got, want, f"for {op}")
        m = np.isfinite(want) & (want != 0)
        np.testing.assert_allclose(got[m], want[m], rtol=3e-7, atol=3e-45, err_msg=op)
        return np.zeros(got.shape, bool)
    exact = getattr(torch, op)(tx.double()).numpy()
    with np.errstate(over="ignore"):
        rounded = exact.astype(np.float32)
    # Where torch's float32 result is off the correctly rounded one by more than
    # 2 ulp (or in kind), take the correctly rounded result (see the note above).
    regular = np.isfinite(want) & np.isfinite(rounded) & (want != 0) & (rounded != 0)
    same = (np.isnan(want) & np.isnan(rounded)) | ((want == rounded) & (np.signbit(want) == np.signbit(rounded)))
    off = ~regular & ~same
    off |= regular & (_ulps(np.where(regular, want, 1), np.where(regular, rounded, 1)) > 2)
    ref = np.where(off, rounded, want)
    _same_specials(got, ref, f"for {op}")
    m = np.isfinite(ref) & (ref != 0)
    np.testing.assert_allclose(got[m], ref[m], rtol=3e-7, atol=3e-45, err_msg=op)
    # Against the correctly rounded result: within 2 ulp everywhere.
    fm = np.isfinite(rounded)
    assert _ulps(got[fm], rounded[fm]).max() <= 2, op
    return off


# With SLEEF, PyTorch's 16-bit erf and lgamma map every element through its
# float vectors (erf: its Abramowitz-Stegun form with SLEEF's exp), as Ember's.
SLEEF_16BIT_OPS = frozenset({"erf", "lgamma"})


def _check_16bit(op, x, name):
    td = getattr(torch, name)
    tx = torch.from_numpy(x).to(td)
    want = getattr(torch, op)(tx)
    e = ember.from_numpy(x).to(getattr(ember, name))
    got = getattr(ember, op)(e)
    assert str(got.dtype) == str(want.dtype)
    g = got.to(ember.float32).numpy()
    w = want.float().numpy()
    if op in SLEEF_16BIT_OPS and HAS_SLEEF:
        np.testing.assert_array_equal(g, w, err_msg=f"{op} {name}")
        return
    # Both round the float32 result, so they agree up to one 16-bit ulp (the
    # float32 results may straddle a rounding boundary). As for float32, where
    # torch is off the correctly rounded 16-bit value (it flushes float16
    # subnormal results: erf(6e-8) = 0), compare with that value.
    exact = getattr(torch, op)(tx.double()).to(td).float().numpy()
    tol = 2.0**-10 if name == "float16" else 2.0**-7
    regular = np.isfinite(w) & np.isfinite(exact) & (w != 0) & (exact != 0)
    same = (np.isnan(w) & np.isnan(exact)) | ((w == exact) & (np.signbit(w) == np.signbit(exact)))
    with np.errstate(invalid="ignore"):
        off = (~regular & ~same) | (regular & (np.abs(w - exact) > 2 * tol * np.abs(exact)))
    ref = np.where(off, exact, w)
    _same_specials(g, ref, f"for {op} {name}")
    # Within one 16-bit ulp of the correctly rounded value, and close to torch's
    # (whose 16-bit paths can be a few ulp off themselves, e.g. erf).
    m = np.isfinite(exact) & (exact != 0)
    np.testing.assert_allclose(g[m], exact[m], rtol=tol, atol=0, err_msg=f"{op} {name}")
    m = np.isfinite(ref) & (ref != 0)
    np.testing.assert_allclose(g[m], ref[m], rtol=3 * tol, atol=0, err_msg=f"{op} {name}")


def _check_layouts(op, x):
    if op in SLEEF_OPS and HAS_SLEEF:
        _check_layouts_as_torch(op, x)
        return
    f = getattr(ember, op)
    base = f(ember.from_numpy(x)).numpy()
    # Sizes through the vector body and the tail (and empty).
    for n in (0, 1, 15, 17, 1000, len(x)):
        r = f(ember.from_numpy(np.ascontiguousarray(x[:n]))).numpy()
        np.testing.assert_array_equal(r, base[:n], err_msg=f"{op} n={n}")
    # Strided and transposed views give the same values as the contiguous input.
    e = ember.from_numpy(x[:3600])
    r = f(e[::2]).numpy()
    np.testing.assert_array_equal(r, base[:3600:2], err_msg=f"{op} strided")
    r = f(e.reshape(60, 60).t()).numpy()
    np.testing.assert_array_equal(r, base[:3600].reshape(60, 60).T, err_msg=f"{op} transposed")
    # out= and in-place.
    out = ember.empty(len(x))
    f(ember.from_numpy(x), out=out)
    np.testing.assert_array_equal(out.numpy(), base, err_msg=f"{op} out=")
    y = ember.from_numpy(x.copy())
    getattr(y, op + "_")()
    np.testing.assert_array_equal(y.numpy(), base, err_msg=f"{op} in-place")


def _check_layouts_as_torch(op, x):
    # PyTorch's SLEEF loops compute some elements by libm (the leftovers, strided
    # rows): each layout is compared with torch's result for the same layout.
    def both(fn):
        got = fn(ember, ember.from_numpy(x.copy())).numpy()
        want = fn(torch, torch.from_numpy(x.copy())).numpy()
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=3e-45, err_msg=op)

    for n in (0, 1, 15, 17, 1000, len(x)):
        both(lambda lib, t, n=n: getattr(lib, op)(t[:n]))
    both(lambda lib, t: getattr(lib, op)(t[:3600:2]))
    both(lambda lib, t: getattr(lib, op)(t[:3600].reshape(60, 60).t()))
    both(lambda lib, t: getattr(t, op + "_")())


def _check_all():
    deviations = {}
    for op in OPS:
        x = _inputs(op)
        off = _check_float32(op, x)
        deviations[op] = int(off.sum())
        _check_layouts(op, x)
        for name in ("float16", "bfloat16"):
            _check_16bit(op, x[:4000], name)
    return deviations


@pytest.mark.parametrize("op", OPS)
def test_float32_against_torch(op):
    off = _check_float32(op, _inputs(op, 100003, seed=1))
    # torch's own float32 results are correctly rounded within 2 ulp except for a
    # few inputs (subnormal x, sinh/cosh near overflow); keep that list small.
    assert off.sum() < 200, (op, int(off.sum()))


@pytest.mark.parametrize("op", OPS)
def test_layouts_and_16bit(op):
    x = _inputs(op, 4000, seed=2)
    _check_layouts(op, x)
    for name in ("float16", "bfloat16"):
        _check_16bit(op, x, name)


def test_erf_is_not_gelus_erf():
    # Tensor.erf is accurate to about 1 ulp; GELU keeps its own erf (PyTorch's numerics).
    x = np.linspace(-4, 4, 10001, dtype=np.float32)
    got = ember.erf(ember.from_numpy(x)).numpy()
    exact = torch.erf(torch.from_numpy(x).double()).float().numpy()
    assert _ulps(got, exact).max() <= 1
    g = ember.nn.functional.gelu(ember.from_numpy(x)).numpy()
    t = torch.nn.functional.gelu(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(g, t, rtol=2e-6, atol=2e-6)  # APPROX_TOL of the elementwise tests


@pytest.mark.skipif(os.environ.get("EMBER_CPU_CAPABILITY") is not None, reason="already under a chosen build")
@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_other_cpu_capabilities(cap):
    run_under_capability(cap, "test_vec_math", "_check_all")
