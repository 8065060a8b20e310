"""Binary elementwise math against torch: arithmetic, powers, comparisons,
logical and bitwise ops over every pair of dtypes, broadcasting shapes,
strided inputs, Python numbers on either side, in-place and out= variants,
and the errors torch raises."""

from __future__ import annotations

import warnings

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, dtypes, torch
from elementwise_util import PY_SCALARS, broadcast_shapes, check, layouts, make_pair, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

warnings.filterwarnings("ignore", message="An output with one or more elements was resized")


def _mode(mode):
    return lambda lib, a, b, **kw: lib.div(a, b, rounding_mode=mode, **kw)


def _fn(name):
    return lambda lib, a, b, **kw: getattr(lib, name)(a, b, **kw)


# name -> (call(lib, a, b, **kw), exact, in-place method name or None)
BINARY = {
    "div": (_fn("div"), True, "div_"),
    "div_trunc": (_mode("trunc"), True, None),
    "div_floor": (_mode("floor"), True, None),
    "true_divide": (_fn("true_divide"), True, "true_divide_"),
    "floor_divide": (_fn("floor_divide"), True, "floor_divide_"),
    "remainder": (_fn("remainder"), True, "remainder_"),
    "fmod": (_fn("fmod"), True, "fmod_"),
    "pow": (_fn("pow"), False, "pow_"),
    "maximum": (_fn("maximum"), True, None),
    "minimum": (_fn("minimum"), True, None),
    "fmax": (_fn("fmax"), True, None),
    "fmin": (_fn("fmin"), True, None),
    "atan2": (_fn("atan2"), False, "atan2_"),
    "eq": (_fn("eq"), True, "eq_"),
    "ne": (_fn("ne"), True, "ne_"),
    "lt": (_fn("lt"), True, "lt_"),
    "le": (_fn("le"), True, "le_"),
    "gt": (_fn("gt"), True, "gt_"),
    "ge": (_fn("ge"), True, "ge_"),
    "logical_and": (_fn("logical_and"), True, "logical_and_"),
    "logical_or": (_fn("logical_or"), True, "logical_or_"),
    "logical_xor": (_fn("logical_xor"), True, "logical_xor_"),
    "bitwise_and": (_fn("bitwise_and"), True, "bitwise_and_"),
    "bitwise_or": (_fn("bitwise_or"), True, "bitwise_or_"),
    "bitwise_xor": (_fn("bitwise_xor"), True, "bitwise_xor_"),
    "bitwise_left_shift": (_fn("bitwise_left_shift"), True, "bitwise_left_shift_"),
    "bitwise_right_shift": (_fn("bitwise_right_shift"), True, "bitwise_right_shift_"),
    "clamp_min": (_fn("clamp_min"), True, "clamp_min_"),
    "clamp_max": (_fn("clamp_max"), True, "clamp_max_"),
}
SHIFTS = {"bitwise_left_shift", "bitwise_right_shift"}
TIE_SIGN = {"maximum", "minimum", "fmax", "fmin", "clamp_min", "clamp_max"}
# Ops with a Scalar overload for a Python number on the right (others take
# it as a weak 0-dim tensor or refuse it, as torch does).
DTYPE_CHOICES = st.sampled_from(DTYPE_NAMES)


def draw_operand(data, op, dname, shape, layout, second):
    kw = {}
    if op in SHIFTS and second:
        kw = {"lo": -3, "hi": 70}
    elif op == "pow" and second:
        kw = {"lo": -2, "hi": 6}
    return make_pair(data.draw, dname, shape, layout, **kw)


def exact(op, *dnames):
    # torch computes float16/bfloat16 powers in float32 like Ember; results of
    # transcendental functions may still differ in the last bit.
    # atan2 of integers is computed in float32 too (by a vector routine
    # within 1 ulp, where torch's small tensors call libm).
    if not BINARY[op][1]:
        return op != "atan2" and not any(d in FLOAT_NAMES for d in dnames)
    return True


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("da", DTYPE_NAMES)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_binary_matches_torch(op, da, data):
    db = data.draw(DTYPE_CHOICES)
    sa, sb = data.draw(broadcast_shapes())
    ea, ta = draw_operand(data, op, da, sa, data.draw(layouts), False)
    eb, tb = draw_operand(data, op, db, sb, data.draw(layouts), True)
    call = BINARY[op][0]
    got, want = run_both(
        lambda: call(ember, ea, eb), lambda: call(torch, ta, tb), match_message=True
    )
    if want is not None:
        check(got, want, exact(op, da, db), zero_signs=op not in TIE_SIGN)


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("da", DTYPE_NAMES)
def test_binary_python_scalars(op, da):
    vals = [True, False, True] if da == "bool" else ([3, 0, 7] if da == "uint8" else [3, -2, 0])
    if da in FLOAT_NAMES:
        vals = [1.5, -2.0, 0.0]
    ed, td = dtypes(da)
    e, t = ember.tensor(vals, dtype=ed), torch.tensor(vals, dtype=td)
    call = BINARY[op][0]
    for scalar in PY_SCALARS:
        for fe, ft in (
            (
                lambda scalar=scalar: call(ember, e, scalar),
                lambda scalar=scalar: call(torch, t, scalar),
            ),
            (
                lambda scalar=scalar: call(ember, scalar, e),
                lambda scalar=scalar: call(torch, scalar, t),
            ),
            # a 0-dim tensor is weaker than a dimensioned one, stronger than a number
            (
                lambda scalar=scalar: call(ember, e, ember.tensor(scalar)),
                lambda scalar=scalar: call(torch, t, torch.tensor(scalar)),
            ),
        ):
            got, want = run_both(fe, ft, match_message=True)
            if want is not None:
                check(
                    got,
                    want,
                    exact(op, da, str(want.dtype).split(".")[1]),
                    zero_signs=op not in TIE_SIGN,
                )


# ---- specific rules --------------------------------------------------------------------


@pytest.mark.parametrize("dname", DTYPE_NAMES)
def test_integer_division_by_zero_and_overflow(dname):
    ed, td = dtypes(dname)
    if dname in ("bool", "uint8") or dname in FLOAT_NAMES:
        vals, divs = [5, 0, 1, 7], [0, 0, 2, 3]
    else:
        lo = torch.iinfo(td).min
        # torch itself traps on INT_MIN / -1 in some kernels; see below for Ember.
        vals, divs = [lo + 1, lo, 7, -7], [-1, 1, -1, 2]
        m = ember.tensor([lo], dtype=ed)
        for got in (
            m // -1,
            ember.div(m, -1, rounding_mode="trunc"),
            ember.div(m, -1, rounding_mode="floor"),
        ):
            assert got.tolist() == [lo]  # wraps, as two's complement negation does
        assert (m % -1).tolist() == [0] and ember.fmod(m, -1).tolist() == [0]
    e, t = ember.tensor(vals, dtype=ed), torch.tensor(vals, dtype=td)
    de, dt = ember.tensor(divs, dtype=ed), torch.tensor(divs, dtype=td)
    for call in (
        _mode("trunc"),
        _mode("floor"),
        _fn("floor_divide"),
        _fn("remainder"),
        _fn("fmod"),
        _fn("div"),
    ):
        got, want = run_both(
            lambda call=call: call(ember, e, de),
            lambda call=call: call(torch, t, dt),
            match_message=True,
        )
        if want is not None:
            check(got, want)
    if dname not in ("bool",) and dname not in FLOAT_NAMES:
        z_e, z_t = ember.zeros(4, dtype=ed), torch.zeros(4, dtype=td)
        for call in (_mode("trunc"), _mode("floor"), _fn("remainder"), _fn("fmod")):
            run_both(
                lambda call=call: call(ember, e, z_e),
                lambda call=call: call(torch, t, z_t),
                match_message=True,
            )
            run_both(
                lambda call=call: call(ember, e, 0),
                lambda call=call: call(torch, t, 0),
                match_message=True,
            )


@pytest.mark.parametrize("dname", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["div_trunc", "div_floor", "floor_divide", "remainder", "fmod"])
def test_16bit_division_rounds_like_torch(dname, name):
    # torch rounds the quotient (and each floor-division step) to the 16-bit
    # type; many wide-range values make a half-way case near certain.
    gen = torch.Generator().manual_seed(7)
    ed, td = dtypes(dname)
    a = (torch.randn(20000, generator=gen) * torch.exp(torch.randn(20000, generator=gen) * 3)).to(td)
    b = (torch.randn(20000, generator=gen) * torch.exp(torch.randn(20000, generator=gen) * 3)).to(td)
    ea = ember.tensor(a.float().tolist(), dtype=ed)
    eb = ember.tensor(b.float().tolist(), dtype=ed)
    got = BINARY[name][0](ember, ea, eb)
    want = BINARY[name][0](torch, a, b)
    check(got, want, True)
    # a one-element divisor is computed in float, without the rounding
    for i in range(0, 2000, 7):
        for shape in ((), (1,)):
            got = BINARY[name][0](ember, ea[i : i + 9], eb[i].reshape(shape))
            want = BINARY[name][0](torch, a[i : i + 9], b[i].reshape(shape))
            check(got, want, True)


@pytest.mark.parametrize("dname", FLOAT_NAMES)
def test_float_division_special_values(dname):
    inf, nan = float("inf"), float("nan")
    a = [5.0, -5.0, 0.0, 1.0, -1.0, inf, -inf, nan, 7.5, -7.5, 0.0, -0.0]
    b = [0.0, 0.0, 0.0, inf, inf, 2.0, 3.0, 1.0, -2.0, 2.0, -3.0, 3.0]
    ed, td = dtypes(dname)
    e, t = ember.tensor(a, dtype=ed), torch.tensor(a, dtype=td)
    de, dt = ember.tensor(b, dtype=ed), torch.tensor(b, dtype=td)
    for name in (
        "div",
        "div_trunc",
        "div_floor",
        "floor_divide",
        "remainder",
        "fmod",
        "maximum",
        "minimum",
        "fmax",
        "fmin",
        "eq",
        "lt",
        "ge",
        "logical_and",
        "logical_xor",
        "clamp_min",
        "clamp_max",
    ):
        call = BINARY[name][0]
        check(
            call(ember, e, de),
            call(torch, t, dt),
            exact(name, dname),
            zero_signs=name not in TIE_SIGN,
        )
        check(
            call(ember, de, e),
            call(torch, dt, t),
            exact(name, dname),
            zero_signs=name not in TIE_SIGN,
        )


def test_rounding_mode_errors():
    e, t = ember.tensor([1.0]), torch.tensor([1.0])
    run_both(
        lambda: ember.div(e, e, rounding_mode="round"),
        lambda: torch.div(t, t, rounding_mode="round"),
        match_message=True,
    )
    check(ember.div(e, 2, rounding_mode=None), torch.div(t, 2, rounding_mode=None))


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@pytest.mark.parametrize(
    "exponent", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, 1.0 / 3, True, False, 300, -3.0]
)
def test_pow_tensor_scalar(dname, exponent):
    vals = [True, False] if dname == "bool" else [0, 1, 2, 3, 5]
    if dname in FLOAT_NAMES:
        vals = [0.0, 1.0, 2.0, 3.5, -1.5, -0.0, 0.25, float("inf"), float("nan")]
    if dname in ("int8", "int16", "int32", "int64"):
        vals += [-1, -2, -3]
    ed, td = dtypes(dname)
    e, t = ember.tensor(vals, dtype=ed), torch.tensor(vals, dtype=td)
    got, want = run_both(lambda: e**exponent, lambda: t**exponent, match_message=True)
    if want is not None:
        check(got, want, exact("pow", str(want.dtype).split(".")[1]))
    got, want = run_both(lambda: exponent**e, lambda: exponent**t, match_message=True)
    if want is not None:
        check(got, want, exact("pow", str(want.dtype).split(".")[1]))
    got, want = run_both(
        lambda: e.clone().pow_(exponent), lambda: t.clone().pow_(exponent), match_message=True
    )
    if want is not None:
        check(got, want, exact("pow", dname))


def test_integer_pow_negative_exponents():
    base = [1, -1, 2, -2, 0, 3]
    exps = [-1, -3, -2, -1, 2, 0]
    for dname in ("int8", "int16", "int32", "int64"):
        ed, td = dtypes(dname)
        check(
            ember.pow(ember.tensor(base, dtype=ed), ember.tensor(exps, dtype=ed)),
            torch.pow(torch.tensor(base, dtype=td), torch.tensor(exps, dtype=td)),
        )
    check(ember.pow(2, ember.tensor([-1, 3])), torch.pow(2, torch.tensor([-1, 3])))


@pytest.mark.parametrize("da", DTYPE_NAMES)
@pytest.mark.parametrize("db", DTYPE_NAMES)
def test_comparison_promotion(da, db):
    # Values that differ only after promotion (uint8 vs negative, float vs int).
    ea = ember.tensor(
        [1, 0, 1] if da == "bool" else [1, 2, 255 if da == "uint8" else 3], dtype=dtypes(da)[0]
    )
    ta = torch.tensor(ea.tolist(), dtype=dtypes(da)[1])
    for other in (-1, 255, 2.5, 1.0, True, -255):
        for name in ("eq", "ne", "lt", "ge"):
            check(getattr(ember, name)(ea, other), getattr(torch, name)(ta, other))
    eb = ember.tensor([1, 1, 0] if db == "bool" else [1, 2, 1], dtype=dtypes(db)[0])
    tb = torch.tensor(eb.tolist(), dtype=dtypes(db)[1])
    for name in ("eq", "lt", "gt", "le"):
        check(getattr(ember, name)(ea, eb), getattr(torch, name)(ta, tb))


# Note [Scalar operand of 16-bit products]: mul, div and the floor and trunc
# divisions keep the number in float; add and sub round it to the tensor's
# dtype, as PyTorch.
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("s", [0.01745, 0.1, 1 / 3, 7.7, 57.29577951308232, 1e-5, 4097, -0.0, float("inf"), True])
@pytest.mark.parametrize("op", ["mul", "rmul", "div", "add", "sub", "rsub", "imul", "idiv", "mul_0d_f64",
                                "mul_0d_first", "div_out_f32", "floor_divide", "div_floor", "div_trunc",
                                "ifloor_divide", "floor_0d_f32", "mul_0d_self", "div_floor_0d_self"])
def test_16bit_products_with_a_number(op, s, dtype):
    import numpy as np

    if s is True and op in ("sub", "rsub"):
        return  # bool subtraction is an error, tested elsewhere
    x = (np.random.default_rng(1).standard_normal(3000) * 100).astype("float32")
    results = []
    for lib in (ember, torch):
        t = lib.from_numpy(x.copy()).to(getattr(lib, dtype))[::2]
        if op == "mul":
            r = t * s
        elif op == "rmul":
            r = s * t
        elif op == "div":
            r = t / s
        elif op == "add":
            r = t + s
        elif op == "sub":
            r = t - s
        elif op == "rsub":
            r = s - t
        elif op == "imul":
            r = t.clone().mul_(s)
        elif op == "idiv":
            r = t.clone().div_(s)
        elif op == "mul_0d_f64":
            r = t * lib.tensor(float(s), dtype=lib.float64)
        elif op == "mul_0d_first":
            r = lib.mul(lib.tensor(float(s), dtype=lib.float64), t)
        elif op == "floor_divide":
            r = t // s
        elif op == "div_floor":
            r = lib.div(t, s, rounding_mode="floor")
        elif op == "div_trunc":
            r = lib.div(t, s, rounding_mode="trunc")
        elif op == "ifloor_divide":
            r = t.clone().floor_divide_(s)
        elif op == "floor_0d_f32":
            r = lib.floor_divide(t, lib.tensor(float(s), dtype=lib.float32))
        elif op == "mul_0d_self":
            r = lib.stack([t[k] * s for k in range(5)])
        elif op == "div_floor_0d_self":
            r = lib.stack([lib.div(t[k], s, rounding_mode="floor") for k in range(5)])
        else:
            r = lib.empty(0)
            lib.div(t, s, out=r)
        results.append(r)
    assert str(results[0].dtype) == str(results[1].dtype)
    e, t = results[0].float().numpy(), results[1].float().numpy()
    np.testing.assert_array_equal(e, t)
