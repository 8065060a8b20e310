"""complex64 and complex128 against PyTorch: dtypes and promotion, creation,
conversions, printing, serialization, views between real and complex,
elementwise math, reductions, matmul and gradients."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import to_torch, torch

import ember

CDTYPES = ["complex64", "complex128"]
ALL_NAMES = [
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
] + CDTYPES  # fmt: skip


def same(e, t, rtol=None, atol=None):
    """Values, dtype and shape equal torch's (complex values within tolerance)."""
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    got = to_torch(e)
    if t.dtype.is_complex or t.dtype.is_floating_point:
        real = t.dtype in (torch.complex128, torch.float64)
        rtol = rtol if rtol is not None else (1e-12 if real else 1e-5)
        atol = atol if atol is not None else rtol
        torch.testing.assert_close(got, t, rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert torch.equal(got, t), f"{got} != {t}"


def raises_same(fn_e, fn_t):
    """Ember raises what torch raises, with the same message."""
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)) as ee:
        fn_e()
    assert str(ee.value).split("\n")[0] == str(et.value).split("\n")[0]


VALUES = [1 + 2j, -0.5 + 0.25j, 3.0 - 4.0j, 0j, -2j, 1.5]


def pair(values=VALUES, dname="complex64", shape=None):
    e = ember.tensor(values, dtype=getattr(ember, dname))
    t = torch.tensor(values, dtype=getattr(torch, dname))
    if shape is not None:
        e, t = e.reshape(shape), t.reshape(shape)
    return e, t


# ---- dtypes and promotion ----------------------------------------------------------------------


def test_dtype_objects():
    for name in CDTYPES:
        e, t = getattr(ember, name), getattr(torch, name)
        assert repr(e) == repr(t)
        assert e.is_complex and not e.is_floating_point and e.is_signed
        assert e.itemsize == t.itemsize
        assert pickle.loads(pickle.dumps(e)) is e
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert not ember.float32.is_complex


@pytest.mark.parametrize("a", ALL_NAMES)
def test_promote_types(a):
    for b in ALL_NAMES:
        if a not in CDTYPES and b not in CDTYPES:
            continue
        got = ember.promote_types(getattr(ember, a), getattr(ember, b))
        assert str(got) == str(torch.promote_types(getattr(torch, a), getattr(torch, b))), (a, b)


@pytest.mark.parametrize("dname", ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"])
def test_result_type_with_python_complex(dname):
    e = ember.ones(2, dtype=getattr(ember, dname))
    t = torch.ones(2, dtype=getattr(torch, dname))
    assert str(ember.result_type(e, 1j)) == str(torch.result_type(t, 1j))
    assert str((e + 1j).dtype) == str((t + 1j).dtype)
    assert str((e * (2 - 1j)).dtype) == str((t * (2 - 1j)).dtype)
    same(e + 1j, t + 1j)


def test_result_type_zero_dim_complex():
    for a, b in [("float32", "complex128"), ("int64", "complex128"), ("float64", "complex64")]:
        e = ember.ones(2, dtype=getattr(ember, a)) + ember.tensor(1j, dtype=getattr(ember, b))
        t = torch.ones(2, dtype=getattr(torch, a)) + torch.tensor(1j, dtype=getattr(torch, b))
        same(e, t)


def test_default_dtype_sets_complex_default():
    try:
        for d in ("float64", "float32"):
            ember.set_default_dtype(getattr(ember, d))
            torch.set_default_dtype(getattr(torch, d))
            for data in (1j, [1, 2.5, 1j], [[1j, 2]]):
                same(ember.tensor(data), torch.tensor(data))
            same(ember.ones(2) + 1j, torch.ones(2) + 1j)
            same(ember.full((2,), 1 + 1j), torch.full((2,), 1 + 1j))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


# ---- creation and conversion -------------------------------------------------------------------


@pytest.mark.parametrize("dname", CDTYPES)
def test_factories(dname):
    ed, td = getattr(ember, dname), getattr(torch, dname)
    same(ember.zeros(2, 3, dtype=ed), torch.zeros(2, 3, dtype=td))
    same(ember.ones(4, dtype=ed), torch.ones(4, dtype=td))
    same(ember.full((2, 2), 1.5 - 2j, dtype=ed), torch.full((2, 2), 1.5 - 2j, dtype=td))
    same(ember.full((3,), 7, dtype=ed), torch.full((3,), 7, dtype=td))
    assert ember.empty(3, dtype=ed).dtype == ed
    same(ember.zeros_like(ember.ones(2, dtype=ed)), torch.zeros_like(torch.ones(2, dtype=td)))
    same(ember.tensor([1, True, 2.5, 1j], dtype=ed), torch.tensor([1, True, 2.5, 1j], dtype=td))
    same(ember.tensor([[1 + 1j, 2], [3, 4j]], dtype=ed), torch.tensor([[1 + 1j, 2], [3, 4j]], dtype=td))


def test_tensor_inference():
    for data in [1 + 2j, [1 + 2j], [1, 2.5, 1j], [[1j, 2], [3, 4]], [np.complex128(1 + 1j)], [np.complex64(2j), 1]]:
        same(ember.tensor(data), torch.tensor(data))
    same(ember.tensor([ember.tensor(1 + 2j)]), torch.tensor([torch.tensor(1 + 2j)]))


def test_creation_errors():
    raises_same(lambda: ember.tensor([1j], dtype=ember.float32), lambda: torch.tensor([1j], dtype=torch.float32))
    raises_same(lambda: ember.tensor([1j], dtype=ember.int64), lambda: torch.tensor([1j], dtype=torch.int64))
    same(ember.tensor([1j, 0j], dtype=ember.bool), torch.tensor([1j, 0j], dtype=torch.bool))
    raises_same(lambda: ember.full((2,), 1j, dtype=ember.float32), lambda: torch.full((2,), 1j, dtype=torch.float32))
    raises_same(lambda: ember.zeros(2).fill_(1j), lambda: torch.zeros(2).fill_(1j))
    raises_same(
        lambda: ember.zeros(2, dtype=ember.int64).fill_(1j), lambda: torch.zeros(2, dtype=torch.int64).fill_(1j)
    )
    raises_same(lambda: ember.arange(5, dtype=ember.complex64), lambda: torch.arange(5, dtype=torch.complex64))


@pytest.mark.parametrize("dname", CDTYPES)
def test_randn_rand_match_torch_stream(dname):
    ed, td = getattr(ember, dname), getattr(torch, dname)
    for n in (3, 40):
        ember.manual_seed(7)
        torch.manual_seed(7)
        same(ember.randn(n, dtype=ed), torch.randn(n, dtype=td))
        same(ember.rand(2, n, dtype=ed), torch.rand(2, n, dtype=td))
    g_e, g_t = ember.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    same(ember.randn(5, 2, dtype=ed, generator=g_e), torch.randn(5, 2, dtype=td, generator=g_t))


@pytest.mark.parametrize("dname", CDTYPES)
def test_item_tolist_and_python_numbers(dname):
    e, t = pair(dname=dname, shape=(2, 3))
    assert e.tolist() == t.tolist()
    assert e[0, 0].item() == t[0, 0].item()
    assert type(e[0, 0].item()) is complex
    assert complex(e[1, 1]) == complex(t[1, 1])
    assert bool(ember.tensor(1j)) is bool(torch.tensor(1j)) is True
    raises_same(lambda: float(ember.tensor(1 + 2j)), lambda: float(torch.tensor(1 + 2j)))
    raises_same(lambda: int(ember.tensor(1 + 2j)), lambda: int(torch.tensor(1 + 2j)))
    assert float(ember.tensor(2 + 0j)) == float(torch.tensor(2 + 0j))


@pytest.mark.parametrize("dname", CDTYPES)
def test_numpy_both_ways(dname):
    e, t = pair(dname=dname, shape=(3, 2))
    a = e.numpy()
    assert a.dtype == t.numpy().dtype
    np.testing.assert_array_equal(a, t.numpy())
    arr = np.array([[1 + 2j, -3j], [0.5, 2 - 1j]], dtype=dname)
    same(ember.from_numpy(arr), torch.from_numpy(arr))
    same(ember.tensor(arr), torch.tensor(arr))
    same(ember.from_numpy(arr[:, 1]), torch.from_numpy(arr[:, 1]))


@pytest.mark.parametrize("src", ALL_NAMES)
def test_casts(src):
    e, t = pair([1.5 + 2j, -3 - 0.5j, 0j, 2.0], "complex128")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(e.to(getattr(ember, src)), t.to(getattr(torch, src)))
        r_e, r_t = e.real.to(getattr(ember, src)), t.real.to(getattr(torch, src))
    for dst in CDTYPES:
        same(r_e.to(getattr(ember, dst)), r_t.to(getattr(torch, dst)))


def test_cast_to_real_warns_once():
    # Once per process, as PyTorch: a fresh interpreter for each library.
    code = (
        "import warnings, sys\n"
        "warnings.simplefilter('always')\n"
        "import {m} as lib\n"
        "x = lib.tensor([1 + 1j])\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    r = x.float(); x.double(); lib.zeros(1).copy_(x)\n"
        "print(r.tolist(), [(c.category.__name__, str(c.message).split(' (Triggered')[0]) for c in w])\n"
    )
    out = [
        subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True, text=True, check=True).stdout
        for m in ("ember", "torch")
    ]
    assert out[0] == out[1]
    assert "Casting complex values to real discards the imaginary part" in out[0]


# ---- printing ----------------------------------------------------------------------------------

PRINT_CASES = [
    [1 + 2j, 3 - 4j],
    [0.5 + 0.25j, -1.125 - 3j, 2j],
    [1e-5 + 1j, 1e5 - 2j],
    [1 + 1e-6j, 2 + 1e8j],
    [0j, 0j],
    [complex(float("inf"), 1), complex(1, float("nan")), complex(float("-inf"), float("-inf"))],
    [-0.0 - 0.0j, 1 - 0.0j],
    [123456.789 + 0.001j],
    [x / 7 + 1j * (x % 3) for x in range(30)],
    [complex(x, -x) for x in range(2000)],
]


@pytest.mark.parametrize("values", PRINT_CASES, ids=range(len(PRINT_CASES)))
@pytest.mark.parametrize("dname", CDTYPES)
def test_printing(values, dname):
    e, t = pair(values, dname)
    assert repr(e) == repr(t)
    if len(values) % 2 == 0:
        e2, t2 = e.reshape(2, -1), t.reshape(2, -1)
        assert repr(e2) == repr(t2)
        assert str(e2.t()) == str(t2.t())


@pytest.mark.parametrize("dname", CDTYPES)
def test_printing_shapes_and_suffixes(dname):
    ed, td = getattr(ember, dname), getattr(torch, dname)
    assert repr(ember.tensor(1 - 2.5j, dtype=ed)) == repr(torch.tensor(1 - 2.5j, dtype=td))
    assert repr(ember.zeros(0, dtype=ed)) == repr(torch.zeros(0, dtype=td))
    assert repr(ember.zeros(2, 0, dtype=ed)) == repr(torch.zeros(2, 0, dtype=td))
    ember.manual_seed(0)
    torch.manual_seed(0)
    for shape in [(3, 4), (2, 3, 4), (40, 40)]:
        assert repr(ember.randn(*shape, dtype=ed)) == repr(torch.randn(*shape, dtype=td))
    e = ember.ones(2, dtype=ed, requires_grad=True)
    t = torch.ones(2, dtype=td, requires_grad=True)
    assert repr(e) == repr(t)
    try:
        ember.set_printoptions(precision=2, sci_mode=True)
        torch.set_printoptions(precision=2, sci_mode=True)
        e, t = pair(PRINT_CASES[1], dname)
        assert repr(e) == repr(t)
    finally:
        ember.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


# ---- serialization -----------------------------------------------------------------------------


@pytest.mark.parametrize("dname", CDTYPES)
def test_save_load_both_ways(dname, tmp_path):
    e, t = pair(dname=dname, shape=(2, 3))
    path = tmp_path / "e.pt"
    ember.save({"x": e, "v": e[:, 1]}, path)
    loaded = torch.load(path)
    same(ember.tensor(loaded["x"].numpy()), t)
    assert loaded["v"].tolist() == t[:, 1].tolist()
    buf = io.BytesIO()
    torch.save({"x": t}, buf)
    buf.seek(0)
    same(ember.load(buf)["x"], t)


# ---- views between real and complex -------------------------------------------------------------


@pytest.mark.parametrize("dname", CDTYPES)
def test_real_imag_views(dname):
    e, t = pair(dname=dname, shape=(2, 3))
    same(e.real, t.real)
    same(e.imag, t.imag)
    same(ember.real(e), torch.real(t))
    assert e.real.stride() == t.real.stride() and e.imag.storage_offset() == t.imag.storage_offset()
    e.real[0, 0] = 9
    t.real[0, 0] = 9
    e.imag = ember.full((2, 3), -1.0)
    t.imag = torch.full((2, 3), -1.0)
    same(e, t)
    r_e, r_t = ember.ones(3), torch.ones(3)
    same(r_e.real, r_t.real)
    raises_same(lambda: r_e.imag, lambda: r_t.imag)


@pytest.mark.parametrize("dname", CDTYPES)
def test_view_as_real_and_complex(dname):
    e, t = pair(dname=dname, shape=(3, 2))
    vr_e, vr_t = ember.view_as_real(e), torch.view_as_real(t)
    same(vr_e, vr_t)
    assert vr_e.stride() == vr_t.stride()
    vr_e[1, 0, 1] = 5
    vr_t[1, 0, 1] = 5
    same(e, t)
    c_e, c_t = ember.view_as_complex(vr_e), torch.view_as_complex(vr_t)
    same(c_e, c_t)
    assert c_e.data_ptr() == e.data_ptr()
    tr_e, tr_t = ember.view_as_real(e.t()), torch.view_as_real(t.t())
    same(tr_e, tr_t)
    assert tr_e.stride() == tr_t.stride()
    real = "float32" if dname == "complex64" else "float64"
    x_e, x_t = ember.arange(12.0, dtype=getattr(ember, real)), torch.arange(12.0, dtype=getattr(torch, real))
    same(ember.view_as_complex(x_e.view(3, 2, 2)), torch.view_as_complex(x_t.view(3, 2, 2)))
    same(ember.view_as_complex(x_e.view(6, 2)[2:]), torch.view_as_complex(x_t.view(6, 2)[2:]))
    same(ember.view_as_complex(x_e[:2]), torch.view_as_complex(x_t[:2]))


def test_view_errors():
    cases = [
        lambda m: m.view_as_real(m.ones(2)),
        lambda m: m.view_as_complex(m.ones(2, 3)),
        lambda m: m.view_as_complex(m.ones(3, 2).t().contiguous().t()),
        lambda m: m.view_as_complex(m.ones(2, 4)[:, ::2]),
        lambda m: m.view_as_complex(m.ones(7)[1:].view(3, 2)),
        lambda m: m.view_as_complex(m.ones(2, dtype=m.int64)),
        lambda m: m.view_as_complex(m.ones(3, 4)[:, 1:3]),
        lambda m: m.ones(2, dtype=m.cfloat).abs_(),
        lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
        lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
        lambda m: m.polar(m.ones(2), m.ones(2, dtype=m.float64)),
    ]
    for c in cases:
        raises_same(lambda: c(ember), lambda: c(torch))


@pytest.mark.parametrize("dname", ["float32", "float64"])
def test_complex_polar(dname):
    re = [1.0, -2.0, 0.5, 0.0]
    im = [0.5, 3.0, -1.0, 0.0]
    ed, td = getattr(ember, dname), getattr(torch, dname)
    same(
        ember.complex(ember.tensor(re, dtype=ed), ember.tensor(im, dtype=ed)),
        torch.complex(torch.tensor(re, dtype=td), torch.tensor(im, dtype=td)),
    )
    same(
        ember.polar(ember.tensor(re, dtype=ed).abs(), ember.tensor(im, dtype=ed)),
        torch.polar(torch.tensor(re, dtype=td).abs(), torch.tensor(im, dtype=td)),
    )
    same(
        ember.complex(ember.ones(2, 1, dtype=ed), ember.zeros(3, dtype=ed)),
        torch.complex(torch.ones(2, 1, dtype=td), torch.zeros(3, dtype=td)),
    )


@pytest.mark.parametrize("dname", CDTYPES)
def test_abs_angle_sgn_conj(dname):
    vals = VALUES + [complex(float("inf"), 1), complex(float("nan"), 0)]
    e, t = pair(vals, dname)
    same(e.abs(), t.abs())
    same(ember.abs(e), torch.abs(t))
    same(e.angle(), t.angle())
    same(e.sgn(), t.sgn())
    same(e.conj(), t.conj())
    same(e.conj_physical(), t.conj_physical())
    same(e.resolve_conj(), t.resolve_conj())
    assert ember.is_conj(e.conj()) is True and e.conj().is_neg() is False
    f_e, f_t = ember.tensor([-1.5, 0.0, 2.0, float("nan")]), torch.tensor([-1.5, 0.0, 2.0, float("nan")])
    same(f_e.angle(), f_t.angle())
    same(ember.tensor([-2, 0, 3]).angle(), torch.tensor([-2, 0, 3]).angle())
    same(f_e.sgn(), f_t.sgn())
    same(f_e.conj(), f_t.conj())
    x = e.clone()
    x.conj_physical_()
    same(x, t.conj_physical())


# ---- elementwise math --------------------------------------------------------------------------

UNARY = [
    "neg",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "asin",
    "acos",
    "atan",
    "sigmoid",
    "reciprocal",
    "square",
    "isnan",
    "isinf",
    "isfinite",
]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dname", CDTYPES)
def test_unary(op, dname):
    vals = [0.5 + 0.25j, -1.25 + 2j, 3 - 0.5j, -0.75 - 1.5j, 2j, 1.5]
    e, t = pair(vals, dname)
    same(getattr(e, op)(), getattr(t, op)(), rtol=1e-5 if dname == "complex64" else 1e-11)
    same(
        getattr(ember, op)(e.t() if e.dim() > 1 else e),
        getattr(torch, op)(t),
        rtol=1e-5 if dname == "complex64" else 1e-11,
    )


def test_special_values_tests():
    vals = [complex(float("nan"), 1), complex(1, float("inf")), 1 + 1j, complex(float("-inf"), float("nan"))]
    e, t = pair(vals, "complex64")
    for op in ("isnan", "isinf", "isfinite"):
        same(getattr(e, op)(), getattr(t, op)())


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "eq", "ne"])
@pytest.mark.parametrize("dname", CDTYPES)
def test_binary(op, dname):
    a_e, a_t = pair(dname=dname, shape=(2, 3))
    b_e, b_t = pair([2 - 1j, 0.5j, 1 + 1j, -3, 1j, 4], dname, shape=(2, 3))
    same(getattr(ember, op)(a_e, b_e), getattr(torch, op)(a_t, b_t))
    same(getattr(ember, op)(a_e, b_e[0]), getattr(torch, op)(a_t, b_t[0]))
    same(getattr(ember, op)(a_e, 2 - 1j), getattr(torch, op)(a_t, 2 - 1j))
    same(getattr(ember, op)(a_e, 2.5), getattr(torch, op)(a_t, 2.5))
    same(getattr(ember, op)(a_e.real, b_e), getattr(torch, op)(a_t.real, b_t))


def test_operators_and_alpha():
    a_e, a_t = pair(shape=(2, 3))
    b_e, b_t = pair([2 - 1j, 0.5j, 1 + 1j, -3, 1j, 4], shape=(2, 3))
    same(a_e + b_e, a_t + b_t)
    same(a_e - b_e, a_t - b_t)
    same(a_e * b_e, a_t * b_t)
    same(a_e / b_e, a_t / b_t)
    same(-a_e, -a_t)
    same(1j * a_e, 1j * a_t)
    same(2 / b_e, 2 / b_t)
    same(a_e == b_e, a_t == b_t)
    same(ember.add(a_e, b_e, alpha=2 - 1j), torch.add(a_t, b_t, alpha=2 - 1j))
    same(ember.sub(a_e, b_e, alpha=0.5), torch.sub(a_t, b_t, alpha=0.5))
    x_e, x_t = a_e.clone(), a_t.clone()
    x_e *= b_e
    x_t *= b_t
    x_e += 1j
    x_t += 1j
    same(x_e, x_t)
    raises_same(
        lambda: ember.add(ember.ones(2), ember.ones(2), alpha=1j),
        lambda: torch.add(torch.ones(2), torch.ones(2), alpha=1j),
    )
    raises_same(lambda: ember.ones(2).add_(1j), lambda: torch.ones(2).add_(1j))


def test_unsupported_raise_like_torch():
    e, t = pair()
    for fn in [
        lambda m, x: x < x,
        lambda m, x: x.floor(),
        lambda m, x: x.max(),
        lambda m, x: m.maximum(x, x),
        lambda m, x: x.clamp(0, 1),
        lambda m, x: x.relu(),
    ]:
        with pytest.raises(Exception) as et:
            fn(torch, t)
        with pytest.raises(type(et.value)):
            fn(ember, e)


_CHECKED = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "neg": lambda x, y: -x, "sum": lambda x, y: x.sum(0),
    "mean": lambda x, y: x.mean(), "abs": lambda x, y: x.abs(), "angle": lambda x, y: x.angle(),
    "sgn": lambda x, y: x.sgn(), "t": lambda x, y: x.t(), "slice": lambda x, y: x[1:], "clone": lambda x, y: x.clone(),
    "prod": lambda x, y: x.prod(), "prod_dim": lambda x, y: x.prod(1), "tril": lambda x, y: x.tril(),
    "diagonal": lambda x, y: x.diagonal(), "flip": lambda x, y: x.flip(0),
    "norm1": lambda x, y: x.norm(1, 1), "norm3": lambda x, y: x.norm(3), "norm_inf": lambda x, y: x.norm(float("inf")),
}


@pytest.mark.parametrize("name", sorted(_CHECKED))
def test_complex_gradients_of_checked_formulas_match_pytorch(name):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))).astype(np.complex64)
    b = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))).astype(np.complex64)
    grads = []
    for L in (ember, torch):
        x, y = L.tensor(a).requires_grad_(), L.tensor(b).requires_grad_()
        out = _CHECKED[name](x, y)
        out = L.view_as_real(out) if out.is_complex() else out
        (out * L.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        grads.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)


# (PyTorch refuses these two at the forward call: no complex gradients at all.)
@pytest.mark.parametrize(
    "fn", [lambda x: x.nan_to_num(), lambda x: ember.nn.functional.embedding(ember.tensor([0, 1]), x)]
)
def test_complex_gradients_not_yet_checked_raise_instead_of_answering_wrongly(fn):
    x = ember.ones(2, 2, dtype=ember.complex64).requires_grad_()
    with pytest.raises(NotImplementedError, match="not implemented for complex tensors"):
        ember.view_as_real(fn(x)).sum().backward()


# Note [Complex gradients]: functions of complex (and mixed real/complex)
# inputs whose gradients follow PyTorch's conjugate Wirtinger convention.
_WIRTINGER = {
    "abs": (lambda x, y, r: x.abs(), "c"),
    "angle": (lambda x, y, r: x.angle(), "c"),
    "real": (lambda x, y, r: x.real * 2, "c"),
    "imag": (lambda x, y, r: x.imag * 3, "c"),
    "mul": (lambda x, y, r: x * y, "cc"),
    "mul_real": (lambda x, y, r: r * x, "cr"),
    "div": (lambda x, y, r: x / y, "cc"),
    "div_real": (lambda x, y, r: r / x, "cr"),
    "exp": (lambda x, y, r: x.exp(), "c"),
    "log": (lambda x, y, r: x.log(), "c"),
    "sqrt": (lambda x, y, r: x.sqrt(), "c"),
    "rsqrt": (lambda x, y, r: x.rsqrt(), "c"),
    "sin": (lambda x, y, r: x.sin(), "c"),
    "cos": (lambda x, y, r: x.cos(), "c"),
    "tan": (lambda x, y, r: x.tan(), "c"),
    "sinh": (lambda x, y, r: x.sinh(), "c"),
    "cosh": (lambda x, y, r: x.cosh(), "c"),
    "asin": (lambda x, y, r: x.asin(), "c"),
    "acos": (lambda x, y, r: x.acos(), "c"),
    "atan": (lambda x, y, r: x.atan(), "c"),
    "reciprocal": (lambda x, y, r: x.reciprocal(), "c"),
    "pow": (lambda x, y, r: x.pow(3), "c"),
    "sum_mean": (lambda x, y, r: x.sum(0) + x.mean(), "c"),
    "mm": (lambda x, y, r: x @ y, "cc"),
    "mv": (lambda x, y, r: x @ y[0], "cc"),
    "vm": (lambda x, y, r: x[0] @ y, "cc"),
    "dot": (lambda x, y, r: x[0] @ y[1], "cc"),
    "vdot": (lambda x, y, r: x[0].vdot(y[1]), "cc"),
    "bmm": (lambda x, y, r: x.expand(2, 3, 3) @ y.expand(2, 3, 3), "cc"),
    "view_as_real": (lambda x, y, r: _lib(x).view_as_real(x) * 2, "c"),
    "view_as_complex": (lambda x, y, r: _lib(x).view_as_complex(_lib(x).view_as_real(x) * r[..., None]), "cr"),
    "polar": (lambda x, y, r: _lib(r).polar(r.abs() + 0.5, r), "r"),
    "fft": (lambda x, y, r: _lib(x).fft.fft(x, dim=0), "c"),
    "rfft_irfft": (lambda x, y, r: _lib(r).fft.irfft(_lib(r).fft.rfft(r) * 2, n=3), "r"),
    "fft2_of_real": (lambda x, y, r: _lib(r).fft.fft2(r * r), "r"),
}  # fmt: skip


def _lib(t):
    return ember if isinstance(t, ember.Tensor) else torch


def _wirtinger_inputs(lib, kinds, seed=7):
    rng = np.random.default_rng(seed)
    c1 = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    c2 = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    r = rng.standard_normal((3, 3))
    x = lib.tensor(c1, dtype=lib.complex128).requires_grad_("c" in kinds[:1])
    y = lib.tensor(c2, dtype=lib.complex128).requires_grad_(kinds[1:2] == "c")
    rr = lib.tensor(r, dtype=lib.float64).requires_grad_("r" in kinds)
    return x, y, rr


@pytest.mark.parametrize("name", sorted(_WIRTINGER))
def test_complex_gradients_match_pytorch(name):
    fn, kinds = _WIRTINGER[name]
    grads = []
    for lib in (ember, torch):
        x, y, r = _wirtinger_inputs(lib, kinds)
        out = fn(x, y, r)
        weights = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) + 1
        if out.is_complex():
            weights = weights * (1 - 0.5j)
        out.backward(weights.to(out.dtype))
        grads.append([None if t.grad is None else to_torch(t.grad) if lib is ember else t.grad for t in (x, y, r)])
    for g_e, g_t in zip(*grads):
        assert (g_e is None) == (g_t is None)
        if g_t is not None:
            assert g_e.dtype == g_t.dtype
            torch.testing.assert_close(g_e, g_t, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["mul", "div_real", "exp", "log", "abs", "mm", "view_as_complex", "fft", "polar"])
def test_complex_gradcheck_backward_and_forward(name):
    fn, kinds = _WIRTINGER[name]
    x, y, r = _wirtinger_inputs(ember, kinds, seed=3)
    args = [t for t in (x, y, r) if t.requires_grad]

    def f(*diff):
        it = iter(diff)
        return fn(*(next(it) if t.requires_grad else t for t in (x, y, r)))

    assert ember.autograd.gradcheck(f, args, check_forward_ad=name != "fft")
    assert ember.autograd.gradcheck(f, args, fast_mode=True)
    # torch's gradcheck agrees on the same function
    xt, yt, rt = _wirtinger_inputs(torch, kinds, seed=3)
    args_t = [t for t in (xt, yt, rt) if t.requires_grad]

    def f_t(*diff):
        it = iter(diff)
        return fn(*(next(it) if t.requires_grad else t for t in (xt, yt, rt)))

    assert torch.autograd.gradcheck(f_t, args_t)


def test_complex_gradcheck_catches_a_wrong_convention():
    class NoConj(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x  # PyTorch's convention wants the conjugate of 2x

    x = ember.tensor([1 + 2j, -0.5 + 1j], dtype=ember.complex128, requires_grad=True)
    assert not ember.autograd.gradcheck(NoConj.apply, (x,), raise_exception=False)
    with pytest.raises(ember.autograd.GradcheckError, match="While considering the real part of complex outputs"):
        ember.autograd.gradcheck(NoConj.apply, (x,))


def test_complex_forward_ad_matches_pytorch():
    fe, ft = ember.autograd.forward_ad, torch.autograd.forward_ad

    got = []
    for lib, fwd in ((ember, fe), (torch, ft)):
        x, y, _ = _wirtinger_inputs(lib, "cc")
        with fwd.dual_level():
            d = fwd.make_dual(x.detach(), y.detach())
            out = (d * d).exp() / (d + 2) @ d
            got.append(fwd.unpack_dual(out).tangent)
    torch.testing.assert_close(to_torch(got[0]), got[1], rtol=1e-10, atol=1e-10)
