"""Special functions (lgamma, digamma, polygamma, mvlgamma, i0, special.i1,
sinc, frac, logit, signbit, deg2rad, rad2deg, hypot, copysign, xlogy,
special.xlog1py), median/nanmedian and gradgradcheck against PyTorch: values
to the ulp over every dtype, special values, out= and in-place forms,
gradients and exception types."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, assert_same, pair, to_torch, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

# Per-test settings: loading a profile here would change every module's.
FEW = settings(max_examples=25, deadline=None, derandomize=True)

NAN, INF = float("nan"), float("inf")
SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1.0, 2.0, -1.0, -2.0, -3.0, 0.5, -0.5, -2.5, 1e-8, -1e-8, 1e-30, 3.0,
           7.99, 8.0, 8.01, 10.0, 9.999, 30.5, -30.5, 100.0, 1e3, -1e3, 1e17, 1e20, 0.25, 0.75, 0.999, 1.001]


def grid(dtype_name):
    """Special values plus a spread of ordinary ones, representable in dtype_name."""
    rng = np.random.default_rng(0)
    vals = SPECIAL + list(rng.uniform(-12, 12, 64)) + list(rng.uniform(0, 1, 16)) + list(rng.uniform(-60, 60, 16))
    if dtype_name in FLOAT_NAMES:
        return vals
    if dtype_name == "bool":
        return [True, False, True]
    lo = 0 if dtype_name == "uint8" else -20
    return [int(v) for v in np.clip(np.array([v for v in vals if math.isfinite(v)]), lo, 100)]


def ulps(e, t):
    """Largest distance in units of the last place between Ember's and torch's floats."""
    a = to_torch(e).double().numpy()
    b = t.double().numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"NaN positions differ:\n{a}\n{b}"
    finite = np.isfinite(b)
    assert np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)]), "infinities differ"
    assert np.array_equal(np.isfinite(a), finite), "finite positions differ"
    if not finite.any():
        return 0.0
    np_dtype = {torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.float16}.get(t.dtype)
    if np_dtype is None:  # bfloat16: 8 bits of mantissa
        spacing = np.maximum(np.abs(b[finite]), 1e-38) * 2.0**-7
    else:
        spacing = np.spacing(np.abs(b[finite]).astype(np_dtype)).astype(np.float64)
    return float(np.max(np.abs(a[finite] - b[finite]) / spacing))


def check_close(e, t, max_ulps):
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape)
    if t.dtype.is_floating_point:
        d = ulps(e, t)
        assert d <= max_ulps, f"{d} ulps apart"
    else:
        assert torch.equal(to_torch(e), t)


def run_both(fe, ft):
    """Runs both; if torch raises, Ember must raise the same exception type (and message)."""
    try:
        expected = ft()
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)) as info:
            fe()
        first = str(err).split("\n")[0]
        if "not implemented for" in first or "can't be cast" in first:
            assert str(info.value).split("\n")[0] == first
        return None, None
    return fe(), expected


# (name, fn, max ulps in float32, in float64). lgamma: see Note [lgamma precision]
# (PyTorch's is SLEEF's); the others evaluate PyTorch's formulas bit for bit.
UNARY = [
    ("lgamma", lambda m, x: m.lgamma(x), (1, 4)),
    ("digamma", lambda m, x: m.digamma(x), (0, 0)),
    ("polygamma0", lambda m, x: m.polygamma(0, x), (0, 0)),
    ("polygamma1", lambda m, x: m.polygamma(1, x), (0, 0)),
    ("polygamma2", lambda m, x: m.polygamma(2, x), (0, 0)),
    ("polygamma3", lambda m, x: m.special.polygamma(3, x), (0, 0)),
    ("i0", lambda m, x: m.i0(x), (0, 0)),
    ("special_i0", lambda m, x: m.special.i0(x), (0, 0)),
    ("special_i1", lambda m, x: m.special.i1(x), (0, 0)),
    ("sinc", lambda m, x: m.sinc(x), (0, 0)),
    ("frac", lambda m, x: m.frac(x), (0, 0)),
    ("logit", lambda m, x: m.logit(x), (2, 0)),
    ("logit_eps", lambda m, x: m.logit(x, eps=0.1), (2, 0)),
    ("special_logit", lambda m, x: m.special.logit(x, 1e-3), (2, 0)),
    ("signbit", lambda m, x: m.signbit(x), (0, 0)),
    ("deg2rad", lambda m, x: m.deg2rad(x), (0, 0)),
    ("rad2deg", lambda m, x: m.rad2deg(x), (0, 0)),
    ("mvlgamma1", lambda m, x: m.mvlgamma(x, 1), (1, 4)),
    ("mvlgamma3", lambda m, x: m.mvlgamma(x, p=3), (2, 4)),
    ("special_gammaln", lambda m, x: m.special.gammaln(x), (1, 4)),
    ("special_psi", lambda m, x: m.special.psi(x), (0, 0)),
    ("special_multigammaln", lambda m, x: m.special.multigammaln(x, 2), (2, 4)),
]


@pytest.mark.parametrize("name,fn,max_ulps", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_unary_values(name, fn, max_ulps, dtype):
    e, t = pair(grid(dtype), dtype)
    re, rt = run_both(lambda: fn(ember, e), lambda: fn(torch, t))
    if rt is None:
        return
    # float16/bfloat16 compute in float and round once.
    tol = {torch.float32: max_ulps[0], torch.float64: max_ulps[1]}.get(rt.dtype, 0 if max_ulps[0] == 0 else 1)
    check_close(re, rt, tol)


def test_lgamma_overflow_and_16bit_exhaustive():
    e, t = pair([4.03e36, 4.0371103e36, 4.1e36, 1e38, -4e36, 2.55e305], "float32")
    check_close(ember.lgamma(e), torch.lgamma(t), 1)
    e, t = pair([2.5e305, 2.56e305, 1e306, -1e306], "float64")
    check_close(ember.lgamma(e), torch.lgamma(t), 4)
    # Every float16 and bfloat16 value.
    bits = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
    for td, ed in ((torch.float16, ember.float16), (torch.bfloat16, ember.bfloat16)):
        t = bits.view(td)
        e = ember.tensor(t.float().tolist(), dtype=ed)
        for op in ("digamma", "i0", "sinc", "frac", "logit", "deg2rad"):
            check_close(getattr(ember, op)(e), getattr(torch, op)(t), 0)
        check_close(ember.polygamma(2, e), torch.polygamma(2, t), 0)
        check_close(ember.lgamma(e), torch.lgamma(t), 1)


def test_digamma_lgamma_poles_and_signed_zero():
    for dt in ("float32", "float64"):
        e, t = pair([0.0, -0.0, -1.0, -2.0, -100.0, -INF, INF, NAN], dt)
        for op in ("digamma", "lgamma", "i0", "sinc"):
            re, rt = getattr(ember, op)(e), getattr(torch, op)(t)
            assert to_torch(re).numpy().tobytes() == rt.numpy().tobytes() or ulps(re, rt) == 0
        # digamma(+-0) = -+inf, and polygamma(1, 0) = inf.
        assert ember.digamma(e).tolist()[:2] == [-INF, INF]
        check_close(ember.polygamma(1, e), torch.polygamma(1, t), 0)


UNARY_NAMES = ["lgamma", "digamma", "i0", "sinc", "frac", "logit", "signbit", "deg2rad", "rad2deg"]


@st.composite
def shaped(draw, dtype):
    n = draw(st.integers(0, 3))
    shape = [draw(st.integers(0, 4)) for _ in range(n)]
    numel = int(np.prod(shape)) if shape else 1
    vals = [draw(st.floats(-20, 20, width=32)) for _ in range(numel)]
    if dtype not in FLOAT_NAMES:
        vals = [int(v) for v in vals]
    e, t = pair(vals, dtype, tuple(shape))
    view = draw(st.sampled_from(["plain", "transpose", "step"]))
    if view == "transpose" and len(shape) >= 2:
        e, t = e.transpose(0, 1), t.transpose(0, 1)
    elif view == "step" and len(shape) >= 1:
        e, t = e[::2], t[::2]
    return e, t


@pytest.mark.parametrize("op", UNARY_NAMES)
@FEW
@given(data=st.data())
def test_unary_layouts(op, data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32", "float16"]))
    e, t = data.draw(shaped(dtype))
    re, rt = run_both(lambda: getattr(ember, op)(e), lambda: getattr(torch, op)(t))
    if rt is not None:
        check_close(re, rt, 2 if rt.dtype in (torch.float32, torch.float64) else 1)


BINARY = ["hypot", "copysign", "xlogy", "special_xlog1py", "special_xlogy"]


def binary(m, op):
    if op.startswith("special_"):
        return getattr(m.special, op[len("special_"):])
    return getattr(m, op)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("da", DTYPE_NAMES)
@pytest.mark.parametrize("db", ["bool", "int64", "float16", "float32", "float64"])
def test_binary_dtypes(op, da, db):
    va = grid(da)[:20]
    vb = grid(db)[5:25] if db != "bool" else [True, False] * 10
    if da == "bool":
        va = [True, False] * 10
    ea, ta = pair(va, da)
    eb, tb = pair(vb[: len(va)], db)
    re, rt = run_both(lambda: binary(ember, op)(ea, eb), lambda: binary(torch, op)(ta, tb))
    if rt is not None:
        check_close(re, rt, 0)


@pytest.mark.parametrize("op", BINARY)
def test_binary_special_values(op):
    for dt in ("float32", "float64"):
        a = [x for x in SPECIAL for _ in SPECIAL]
        b = [y for _ in SPECIAL for y in SPECIAL]
        ea, ta = pair(a, dt)
        eb, tb = pair(b, dt)
        check_close(binary(ember, op)(ea, eb), binary(torch, op)(ta, tb), 1)


@pytest.mark.parametrize("op", BINARY)
@FEW
@given(data=st.data())
def test_binary_broadcast_layouts(op, data):
    e1, t1 = data.draw(shaped("float32"))
    shape = tuple(t1.shape)
    tail = shape[data.draw(st.integers(0, len(shape))):]
    vals = [data.draw(st.floats(-5, 5, width=32)) for _ in range(int(np.prod(tail)) if tail else 1)]
    e2, t2 = pair(vals, data.draw(st.sampled_from(["float32", "float64"])), tail)
    check_close(binary(ember, op)(e1, e2), binary(torch, op)(t1, t2), 1)
    check_close(binary(ember, op)(e2, e1), binary(torch, op)(t2, t1), 1)


def test_scalar_overloads():
    e, t = pair([0.0, 1.5, -2.0, NAN, INF, -0.0], "float32")
    ei, ti = pair([0, 1, -2, 3], "int64")
    cases = [
        (lambda m, x, xi: m.copysign(x, -1)), (lambda m, x, xi: m.copysign(xi, -0.0)),
        (lambda m, x, xi: x.copysign(2)), (lambda m, x, xi: m.xlogy(x, 3)),
        (lambda m, x, xi: m.xlogy(2.5, x)), (lambda m, x, xi: m.xlogy(xi, 2)), (lambda m, x, xi: m.xlogy(3, xi)),
        (lambda m, x, xi: x.xlogy(0.5)), (lambda m, x, xi: m.special.xlogy(2, x)),
        (lambda m, x, xi: m.special.xlog1py(x, 0.5)), (lambda m, x, xi: m.special.xlog1py(2, x)),
        (lambda m, x, xi: m.xlogy(x.double(), 2)),
    ]
    for fn in cases:
        re, rt = run_both(lambda: fn(ember, e, ei), lambda: fn(torch, t, ti))
        assert rt is not None
        check_close(re, rt, 1)


def test_out_and_inplace():
    e, t = pair([0.3, 1.7, -2.2, 4.0], "float32")
    ei, ti = pair([1, -2, 3, 4], "int64")
    e2, t2 = pair([1.5, -0.5, 2.0, 3.0], "float32")
    for name, call in [
        ("lgamma", lambda m, x, o: m.lgamma(x, out=o)),
        ("digamma", lambda m, x, o: m.digamma(x, out=o)),
        ("polygamma", lambda m, x, o: m.polygamma(2, x, out=o)),
        ("i0", lambda m, x, o: m.i0(x, out=o)),
        ("sinc", lambda m, x, o: m.sinc(x, out=o)),
        ("frac", lambda m, x, o: m.frac(x, out=o)),
        ("logit", lambda m, x, o: m.logit(x, 0.2, out=o)),
        ("deg2rad", lambda m, x, o: m.deg2rad(x, out=o)),
        ("rad2deg", lambda m, x, o: m.rad2deg(x, out=o)),
        ("mvlgamma", lambda m, x, o: m.mvlgamma(x.abs() + 2, 2, out=o)),
        ("special.i1", lambda m, x, o: m.special.i1(x, out=o)),
        ("special.polygamma", lambda m, x, o: m.special.polygamma(1, x, out=o)),
        ("special.xlog1py", lambda m, x, o: m.special.xlog1py(x, 2.0, out=o)),
        ("hypot", lambda m, x, o: m.hypot(x, x, out=o)),
        ("copysign", lambda m, x, o: m.copysign(x, -1, out=o)),
        ("xlogy", lambda m, x, o: m.xlogy(x, x.abs(), out=o)),
        ("xlogy_s", lambda m, x, o: m.xlogy(2, x, out=o)),
    ]:
        for od in ("float32", "float64", "int64", "float16"):
            eo, to = pair([0.0] * 4, od)
            re, rt = run_both(lambda: call(ember, e, eo), lambda: call(torch, t, to))
            if rt is not None:
                assert re is eo or re.data_ptr() == eo.data_ptr(), name
                check_close(eo, to, 2)
    # signbit: out must be bool.
    eo, to = pair([False] * 4, "bool")
    check_close(ember.signbit(e, out=eo), torch.signbit(t, out=to), 0)
    for od in ("float32", "int64"):
        with pytest.raises(RuntimeError, match="signbit does not support non-boolean outputs"):
            ember.signbit(e, out=pair([0], od)[0])
    # in-place
    for call in [lambda x: x.lgamma_(), lambda x: x.digamma_(), lambda x: x.polygamma_(2), lambda x: x.i0_(),
                 lambda x: x.sinc_(), lambda x: x.frac_(), lambda x: x.logit_(0.25), lambda x: x.deg2rad_(),
                 lambda x: x.rad2deg_(), lambda x: x.hypot_(x), lambda x: x.copysign_(-2.0),
                 lambda x: x.xlogy_(3.0), lambda x: x.mvlgamma_(1)]:
        for base in ((e, t), (ei, ti)):
            xe, xt = base[0].clone(), base[1].clone()
            re, rt = run_both(lambda: call(xe), lambda: call(xt))
            if rt is not None:
                assert re is xe
                check_close(xe, xt, 2)
    # copysign_ with a tensor and xlogy_ with a tensor
    xe, xt = e.clone(), t.clone()
    xe.copysign_(e2 * -1)
    xt.copysign_(t2 * -1)
    check_close(xe, xt, 0)


def test_errors():
    ei, ti = pair([1, -2, 3], "int64")
    eb, tb = pair([True, False], "bool")
    e, t = pair([0.5, -1.5], "float32")
    cases = [
        (lambda m: m.frac(ei if m is ember else ti), NotImplementedError, "\"frac_cpu\" not implemented for 'Long'"),
        (lambda m: m.frac(eb if m is ember else tb), NotImplementedError, None),
        (
            lambda m: m.hypot(ei if m is ember else ti, ei if m is ember else ti),
            NotImplementedError,
            "\"hypot_cpu\" not implemented for 'Long'",
        ),
        (
            lambda m: m.polygamma(-1, e if m is ember else t),
            RuntimeError,
            "polygamma\\(n, x\\) does not support negative n.",
        ),
        (lambda m: m.mvlgamma(e if m is ember else t, 0), RuntimeError, "p has to be greater than or equal to 1"),
        (
            lambda m: m.lgamma(ei if m is ember else ti, out=pair([0], "int64")[0 if m is ember else 1]),
            RuntimeError,
            "result type Float can't be cast to the desired output type Long",
        ),
        (lambda m: (ei if m is ember else ti).clone().digamma_(), RuntimeError, "can't be cast"),
        (lambda m: (ei if m is ember else ti).clone().deg2rad_(), RuntimeError, "can't be cast"),
        (
            lambda m: m.frac(e if m is ember else t, out=pair([0.0], "float64")[0 if m is ember else 1]),
            RuntimeError,
            "Found dtype Double but expected Float",
        ),
        (
            lambda m: m.median(eb if m is ember else tb),
            NotImplementedError,
            "\"median_cpu\" not implemented for 'Bool'",
        ),
        (lambda m: m.nanmedian(eb if m is ember else tb, 0), NotImplementedError, '"median_out" not implemented'),
        (
            lambda m: m.median(m.empty(0, 3), 0),
            IndexError,
            "median\\(\\): Expected reduction dim 0 to have non-zero size.",
        ),
        (lambda m: m.median(m.ones(2), 1), IndexError, None),
        (lambda m: m.hypot(e if m is ember else t, 2.0), TypeError, None),
        (lambda m: m.xlogy(2, 3), TypeError, None),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc):
            fn(torch)
        with pytest.raises(exc, match=msg):
            fn(ember)


# ---- median / nanmedian ------------------------------------------------------------------------

MEDIAN_DTYPES = [d for d in DTYPE_NAMES if d != "bool"]


@pytest.mark.parametrize("dtype", MEDIAN_DTYPES)
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_values(dtype, op):
    rng = np.random.default_rng(1)
    for shape in [(7,), (4, 6), (3, 4, 5), (1,), (2, 1, 3)]:
        vals = rng.integers(0, 5, size=int(np.prod(shape))).astype(float)  # many ties
        if dtype in FLOAT_NAMES:
            vals[rng.random(vals.size) < 0.2] = NAN
        e, t = pair(vals.tolist(), dtype, shape)
        check_close(getattr(ember, op)(e), getattr(torch, op)(t), 0)
        check_close(getattr(e, op)(), getattr(t, op)(), 0)
        for dim in range(-len(shape), len(shape)):
            for keepdim in (False, True):
                re = getattr(ember, op)(e, dim, keepdim=keepdim)
                rt = getattr(torch, op)(t, dim, keepdim)
                assert type(re).__name__ == type(rt).__name__ == f"{op}"
                check_close(re.values, rt.values, 0)
                check_close(re.indices, rt.indices, 0)
                check_close(re[1], rt[1], 0)
        # non-contiguous
        if len(shape) >= 2:
            re, rt = getattr(ember, op)(e.transpose(0, 1), 1), getattr(torch, op)(t.transpose(0, 1), 1)
            check_close(re.values, rt.values, 0)
            check_close(re.indices, rt.indices, 0)


def test_median_special_cases():
    for op in ("median", "nanmedian"):
        for vals in ([NAN] * 5, [1.0, NAN, 2.0, NAN], [NAN, 3.0], [2.0, 1.0], [5.0], [INF, -INF, NAN, 0.0]):
            e, t = pair(vals, "float32")
            check_close(getattr(ember, op)(e), getattr(torch, op)(t), 0)
            re, rt = getattr(ember, op)(e, 0), getattr(torch, op)(t, 0)
            check_close(re.values, rt.values, 0)
            check_close(re.indices, rt.indices, 0)
        # 0-dim and empty
        e, t = pair(5.0, "float64")
        re, rt = getattr(ember, op)(e, 0), getattr(torch, op)(t, -1)
        check_close(re.values, rt.values, 0)
        check_close(re.indices, rt.indices, 0)
        check_close(getattr(ember, op)(ember.empty(0)), getattr(torch, op)(torch.empty(0)), 0)
        re, rt = getattr(ember, op)(ember.empty(0, 3), 1), getattr(torch, op)(torch.empty(0, 3), 1)
        assert tuple(re.values.shape) == tuple(rt.values.shape) == (0,)


@FEW
@given(data=st.data())
def test_median_hypothesis(data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int64", "float16"]))
    e, t = data.draw(shaped(dtype))
    op = data.draw(st.sampled_from(["median", "nanmedian"]))
    if t.numel() > 0:
        check_close(getattr(ember, op)(e), getattr(torch, op)(t), 0)
    if t.dim() > 0:
        dim = data.draw(st.integers(-t.dim(), t.dim() - 1))
        keep = data.draw(st.booleans())
        re, rt = run_both(lambda: getattr(ember, op)(e, dim, keep), lambda: getattr(torch, op)(t, dim, keep))
        if rt is not None:
            check_close(re.values, rt.values, 0)
            check_close(re.indices, rt.indices, 0)


# ---- gradients -----------------------------------------------------------------------------------

GRAD_UNARY = [
    ("lgamma", lambda m, x: m.lgamma(x), "LgammaBackward0"),
    ("digamma", lambda m, x: m.digamma(x), "DigammaBackward0"),
    ("polygamma", lambda m, x: m.polygamma(2, x), "PolygammaBackward0"),
    ("i0", lambda m, x: m.i0(x), "I0Backward0"),
    ("i1", lambda m, x: m.special.i1(x), "SpecialI1Backward0"),
    ("sinc", lambda m, x: m.sinc(x), "SincBackward0"),
    ("frac", lambda m, x: m.frac(x), "FracBackward0"),
    ("logit", lambda m, x: m.logit(x), "LogitBackward0"),
    ("logit_eps", lambda m, x: m.logit(x, 0.25), "LogitBackward0"),
    ("deg2rad", lambda m, x: m.deg2rad(x), "Deg2RadBackward0"),
    ("rad2deg", lambda m, x: m.rad2deg(x), "Rad2DegBackward0"),
    ("mvlgamma", lambda m, x: m.mvlgamma(x + 3, 2), "MvlgammaBackward0"),
    ("median", lambda m, x: m.median(x), "MedianBackward0"),
    ("nanmedian", lambda m, x: m.nanmedian(x), "NanmedianBackward0"),
    ("median_dim", lambda m, x: m.median(x, 0)[0], "MedianBackward1"),
    ("nanmedian_dim", lambda m, x: m.nanmedian(x, 1, True)[0], "NanmedianBackward1"),
]
GRAD_VALUES = [[0.3, 0.7, 0.55], [0.2, 0.9, 0.45], [0.6, 0.35, 0.8]]


@pytest.mark.parametrize("name,fn,node", GRAD_UNARY, ids=[g[0] for g in GRAD_UNARY])
def test_unary_gradients(name, fn, node):
    e, t = pair(GRAD_VALUES, "float64", requires_grad=True)
    re, rt = fn(ember, e), fn(torch, t)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == node
    ge, gt = pair(np.linspace(-1, 1, rt.numel()).reshape(tuple(rt.shape)).tolist(), "float64")
    (de,) = ember.autograd.grad(re, e, ge)
    (dt,) = torch.autograd.grad(rt, t, gt)
    assert_same(de, dt, rtol=1e-12, atol=1e-12)
    assert ember.autograd.gradcheck(lambda x: fn(ember, x), (e,))


GRAD_BINARY = [
    ("hypot", lambda m, a, b: m.hypot(a, b), "HypotBackward0"),
    ("copysign", lambda m, a, b: m.copysign(a, b), "CopysignBackward0"),
    ("copysign_s", lambda m, a, b: m.copysign(a, -1.0), "CopysignBackward1"),
    ("xlogy", lambda m, a, b: m.xlogy(a, b), "XlogyBackward0"),
    ("xlogy_self", lambda m, a, b: m.xlogy(2.5, b), "XlogyBackward1"),
    ("xlogy_other", lambda m, a, b: m.xlogy(a, 3.0), "XlogyBackward2"),
    ("xlogy_other_neg", lambda m, a, b: m.xlogy(a, -3.0), "XlogyBackward2"),
    ("xlog1py", lambda m, a, b: m.special.xlog1py(a, b), "SpecialXlog1PyBackward0"),
    ("xlog1py_self", lambda m, a, b: m.special.xlog1py(1.5, b), "SpecialXlog1PyBackward1"),
    ("xlog1py_other", lambda m, a, b: m.special.xlog1py(a, 0.5), "SpecialXlog1PyBackward2"),
]


@pytest.mark.parametrize("name,fn,node", GRAD_BINARY, ids=[g[0] for g in GRAD_BINARY])
def test_binary_gradients(name, fn, node):
    ea, ta = pair([[0.3, -0.7, 0.0], [1.2, -2.0, 0.5]], "float64", requires_grad=True)
    eb, tb = pair([0.4, 1.5, 2.5], "float64", requires_grad=True)
    re, rt = fn(ember, ea, eb), fn(torch, ta, tb)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == node
    ins_e = [ea, eb]
    ins_t = [ta, tb]
    ge = ember.ones_like(re)
    gt = torch.ones_like(rt)
    de = ember.autograd.grad(re, ins_e, ge, allow_unused=True)
    dt = torch.autograd.grad(rt, ins_t, gt, allow_unused=True)
    for a, b in zip(de, dt):
        assert (a is None) == (b is None)
        if b is not None:
            assert_same(a, b, rtol=1e-12, atol=1e-12)
    if name != "copysign":  # kink at 0 in the first input
        ea2, eb2 = ea.detach().abs().add(0.25).requires_grad_(True), eb
        assert ember.autograd.gradcheck(lambda a, b: fn(ember, a, b), (ea2, eb2))


def test_gradgradcheck():
    x = ember.tensor([0.3, 1.7, 2.4], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([0.8, 1.1, 3.0], dtype=ember.float64, requires_grad=True)
    for fn in (ember.lgamma, ember.digamma, ember.sinc, ember.i0, lambda a: ember.polygamma(1, a),
               lambda a: ember.logit(a * 0.25), ember.frac):
        assert ember.autograd.gradgradcheck(fn, (x,))
    for fn in (ember.hypot, ember.xlogy, ember.special.xlog1py, ember.copysign):
        assert ember.autograd.gradgradcheck(fn, (x, y))
    go = ember.tensor([1.0, -0.5, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a: a.pow(3), (x,), (go,))
    # A first derivative that ignores part of its dependence on x is caught.
    def wrong(a):
        return a * a.detach() * a

    assert not ember.autograd.gradgradcheck(wrong, (x,), raise_exception=False)
    with pytest.raises(RuntimeError):
        ember.autograd.gradgradcheck(wrong, (x,))


def test_special_namespace():
    e, t = pair([0.2, 0.5, 1.5, -0.5], "float32")
    for name in ("digamma", "psi", "gammaln", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "i0",
                 "i1", "sinc"):
        x_e, x_t = (e * 0.5, t * 0.5) if name == "erfinv" else (e, t)
        check_close(getattr(ember.special, name)(x_e), getattr(torch.special, name)(x_t), 2)
    check_close(ember.special.softmax(e, 0), torch.special.softmax(t, 0), 2)
    check_close(ember.special.log_softmax(e, 0), torch.special.log_softmax(t, 0), 2)
    check_close(ember.special.logsumexp(e, 0), torch.special.logsumexp(t, 0), 2)
    check_close(ember.special.round(e), torch.special.round(t), 0)
    check_close(e.polygamma(1), t.polygamma(1), 2)
    assert ember.special_i1 is not None and ember.special_xlog1py is not None


def test_median_gradients_ties_and_nan():
    for vals in ([1.0, 2.0, 2.0, 2.0, 3.0], [2.0, 1.0, NAN, 2.0], [NAN, NAN, 1.0], [5.0, 5.0]):
        for op in ("median", "nanmedian"):
            e, t = pair(vals, "float64", requires_grad=True)
            (ge,) = ember.autograd.grad(getattr(ember, op)(e), e)
            (gt,) = torch.autograd.grad(getattr(torch, op)(t), t)
            assert_same(ge, gt)
            e2, t2 = pair([vals, vals[::-1]], "float64", requires_grad=True)
            re, rt = getattr(ember, op)(e2, 1, keepdim=True), getattr(torch, op)(t2, 1, keepdim=True)
            (ge,) = ember.autograd.grad(re.values.sum(), e2)
            (gt,) = torch.autograd.grad(rt.values.sum(), t2)
            assert_same(ge, gt)
            assert not re.indices.requires_grad


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_inplace_and_out_angle_conversions_keep_autograd(name):
    results = []
    for lib in (ember, torch):
        x = lib.tensor([10.0, -45.0, 90.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        getattr(y, name + "_")()
        (g,) = lib.autograd.grad(y.sum(), x)
        results.append((y.detach().numpy(), g.numpy(), type(y.grad_fn).__name__))
        leaf = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError):
            getattr(leaf, name + "_")()
        with pytest.raises(RuntimeError):
            getattr(lib, name)(leaf, out=lib.empty(1))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-15)
    assert results[0][2] == results[1][2]


def test_logit_gradient_at_signed_zeros():
    results = []
    for lib in (ember, torch):
        x = lib.tensor([0.0, -0.0, 1.0, 0.5], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.logit(x).sum(), x)
        results.append(g.numpy())
    np.testing.assert_array_equal(results[0], results[1])


def test_i1_gradient_near_zero_and_dtypes():
    """The i1 gradient is 1/2 for |x| up to the dtype's epsilon; float16 and
    bfloat16 have none (PyTorch raises NotImplementedError)."""
    for dt in ("float32", "float64"):
        results = []
        for lib in (ember, torch):
            tiny = 1e-45 if dt == "float32" else 5e-324
            x = lib.tensor([tiny, -1e-40, 1e-8, 0.0, -0.0, 1e-7, 3.0, -2.5], dtype=getattr(lib, dt), requires_grad=True)
            (g,) = lib.autograd.grad(lib.special.i1(x).sum(), x)
            results.append(g.detach().numpy())
        np.testing.assert_array_equal(results[0], results[1])
    for dt in ("float16", "bfloat16"):
        messages = []
        for lib in (ember, torch):
            x = lib.ones(3, dtype=getattr(lib, dt), requires_grad=True)
            with pytest.raises(NotImplementedError) as info:
                lib.special.i1(x).sum().backward()
            messages.append(str(info.value))
        assert messages[0] == messages[1]


def test_mvlgamma_out_refuses_inputs_requiring_grad():
    messages = []
    for lib in (ember, torch):
        x = (lib.rand(3, dtype=lib.float64) + 2).requires_grad_()
        with pytest.raises(RuntimeError) as info:
            lib.mvlgamma(x, 2, out=lib.empty(3, dtype=lib.float64))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frac_vector_loop(dtype):
    """frac on the vector rounding instructions: bit for bit with PyTorch on
    random bit patterns (NaN, inf, subnormals, huge integers) and layouts."""
    rng = np.random.default_rng(11)
    if dtype == "float32":
        x = rng.integers(-(2**31), 2**31, 70001).astype(np.int32).view(np.float32)
    else:
        x = rng.integers(-(2**63), 2**63 - 1, 70001, dtype=np.int64).view(np.float64)
    x = np.concatenate([x, rng.standard_normal(5003) * 1e3]).astype(dtype)
    t = torch.from_numpy(x.copy())
    e = ember.from_numpy(x.copy())
    for ev, tv in ((e, t), (e[::3], t[::3]), (e[:13], t[:13])):
        got, want = ember.frac(ev).numpy(), torch.frac(tv).numpy()
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_dim_many_rows(op, threads):
    """Rows selected in parallel (above 32K elements): values and indices as
    PyTorch's, ties and NaN included."""
    rng = np.random.default_rng(3)
    vals = rng.integers(0, 7, size=(600, 129)).astype(np.float32)
    vals[rng.random(vals.shape) < 0.05] = np.nan
    old = ember.get_num_threads()
    try:
        ember.set_num_threads(threads)
        for dim in (0, 1):
            ev, ei = getattr(ember, op)(ember.from_numpy(vals.copy()), dim)
            tv, ti = getattr(torch, op)(torch.from_numpy(vals.copy()), dim)
            np.testing.assert_array_equal(ev.numpy(), tv.numpy())
            np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    finally:
        ember.set_num_threads(old)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_sinc_gradient_bits_match_pytorch(dtype):
    # PyTorch's form (pi x cos(pi x) - sin(pi x)) / (pi x^2) rounds differently near 0 than other forms
    values = [-3.0, -1.5, -0.5, 0.0, 1e-8, 3e-5, 0.3, 1.0, 2.5, 10.0, 1e-170]
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        if dtype.startswith("complex"):
            x = x * (1 + 0.5j)
        x.requires_grad_()
        y = lib.special.sinc(x)
        (y.real if dtype.startswith("complex") else y).sum().backward()
        grads.append(lib.view_as_real(x.grad).tolist() if dtype.startswith("complex") else x.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["atanh", "erfinv", "exp2", "log10", "special.ndtri", "special.log_ndtr"])
def test_gradient_formulas_round_as_pytorch(name, dtype):
    # each derivative evaluated in PyTorch's order and with its constants (log10 divides by
    # 2.3025850929940456, not the closest double to ln 10)
    unit = name in ("atanh", "erfinv", "special.ndtri")
    values = [1e-9, 0.01, 0.3, 0.5, 0.7, 0.99] if unit else [-3.0, -0.7, 1e-8, 0.3, 0.9, 2.5, 10.0]
    if name == "special.log_ndtr":
        values = [v for v in values if v > 0]  # (its values for negative x differ in the last bit)
    grads = []
    for lib in (ember, torch):
        fn = lib
        for part in name.split("."):
            fn = getattr(fn, part)
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        fn(x).backward(lib.linspace(0.5, 1.5, len(values), dtype=getattr(lib, dtype)))
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
