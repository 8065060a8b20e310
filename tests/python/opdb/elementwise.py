"""Rows of the pointwise operators: unary, binary, comparison, bitwise, ternary."""

from __future__ import annotations

from . import samples as S
from .core import (
    ALL_BUT_BOOL,
    ALL_DTYPES,
    COMPLEX,
    FLOATS,
    INTS_AND_BOOL,
    LOG_ADD_EXP,
    ULP,
    ULP2,
    WIDE_UINTS,
    SampleInput,
    Tol,
    make,
    ulps,
)
from .families import binary, bitwise, comparison, unary_float, unary_predicate, unary_same

F = "nn.functional."

# std::complex's functions against PyTorch's: both faithful to a few ulps of |result|.
_COMPLEX_FN = {"complex64": (2e-6, 2e-6), "complex128": (4e-15, 4e-15)}
_COMPLEX_WHY = "complex functions: std::complex's against PyTorch's, a few ulps of |result| apart"
CTOL = Tol(_COMPLEX_FN, _COMPLEX_WHY)
CULP = Tol({**ULP, **_COMPLEX_FN}, ULP.reason + "; " + _COMPLEX_WHY)
# PyTorch's vector complex product rounds its partial sums in another order (fused add-subtract).
CMUL = Tol(
    {"complex64": (2.0**-22, 2.0**-22), "complex128": (2.0**-51, 2.0**-51)},
    "complex products: ac - bd rounded in another order",
)

# Known differences from PyTorch, each a strict xfail of the cases it breaks.
# Below x = 2 PyTorch's build fuses the log(x/2) i0(x) (i1) term of the K
# functions differently (ops/SpecialMath.h): up to 3 ulps apart.
K_ULPS = ulps(3, "K functions: PyTorch fuses log(x/2) i0(x) differently, up to 3 ulps apart")
OUT_SCALAR_FIRST = "{}(2, t, out=o): torch raises TypeError (no out= form with a Python scalar first), ember accepts"
THRESHOLD_UINT8 = (
    "threshold(uint8, 0.5, -2.0): torch raises RuntimeError 'value cannot be converted to type "
    "uint8_t without overflow', ember wraps -2 to 254"
)


# torch.special functions whose PyTorch kernels run on float32/float64 only.
NO_16BIT = tuple(d for d in ALL_DTYPES if d not in ("float16", "bfloat16"))
# i0e, entr: 16-bit results rounded once from float; PyTorch's vector loops round some steps.
ONE_16BIT_ULP = Tol({"float16": (2.0**-9, 0.0), "bfloat16": (2.0**-5, 0.0)}, "16-bit results a few ulps apart")
# erfcx, ndtri: Ember's double evaluation against PyTorch's fits (decision 0037), within 9 ulps.
OWN_DOUBLE = Tol(
    {**{d: (1e-6, 1e-7) for d in ALL_DTYPES if d != "float64"}, "float64": (2e-15, 1e-16)},
    "erfcx/ndtri evaluated in double",
)
# igamma: series or continued fraction against PyTorch's igam, whose asymptotic series is off by up to 4e-10.
IGAMMA_TOL = Tol({"float32": (0.0, 2e-6), "float64": (0.0, 1e-9)}, "incomplete gamma: another algorithm")


UNARY_FLOAT = [
    unary_float("exp", tol=CULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("exp2", tol=ULP),
    unary_float("expm1", tol=ULP),
    unary_float("log", tol=CTOL, dtypes=ALL_DTYPES + COMPLEX, low=0.1),
    unary_float("log2", tol=ULP, low=0.1),
    unary_float("log10", tol=ULP, low=0.1),
    unary_float("log1p", tol=ULP, dtypes=ALL_DTYPES + COMPLEX, low=-0.9),
    unary_float("sqrt", tol=CULP, dtypes=ALL_DTYPES + COMPLEX, low=0.1),
    unary_float("rsqrt", tol=ULP, dtypes=ALL_DTYPES + COMPLEX, low=0.1),
    unary_float("sin", tol=CULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("cos", tol=CULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("tan", tol=CULP, dtypes=ALL_DTYPES + COMPLEX, low=-1.2, high=1.2),
    unary_float("tanh", tol=CULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("sigmoid", tol=ULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("reciprocal", dtypes=ALL_DTYPES + COMPLEX, low=0.5),
    unary_float("asin", tol=CULP, dtypes=ALL_DTYPES + COMPLEX, low=-0.9, high=0.9),
    unary_float("acos", tol=CULP, dtypes=ALL_DTYPES + COMPLEX, low=-0.9, high=0.9),
    unary_float("atan", tol=CULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("sinh", tol=CULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("cosh", tol=CULP, dtypes=ALL_DTYPES + COMPLEX),
    unary_float("asinh", tol=ULP),
    unary_float("acosh", tol=ULP, low=1.1, high=4.0),
    unary_float("atanh", tol=ULP, low=-0.9, high=0.9),
    unary_float("erf", tol=ULP),
    unary_float("erfc", tol=ULP),
    unary_float("erfinv", tol=ULP, low=-0.9, high=0.9),
    unary_float("lgamma", tol=ULP, low=0.1, high=4.0),
    unary_float("digamma", low=0.1, high=4.0),
    unary_float("i0"),
    unary_float("special_i1", method=False, supports_inplace=False),
    unary_float("sinc", dtypes=ALL_DTYPES + COMPLEX),
    unary_float("special_i0e", tol=ONE_16BIT_ULP, method=False, supports_inplace=False),
    unary_float("special_i1e", method=False, supports_inplace=False),
    unary_float("special_entr", tol=ONE_16BIT_ULP, method=False, supports_inplace=False, low=0.1),
    unary_float("special_erfcx", tol=OWN_DOUBLE, dtypes=NO_16BIT, method=False, supports_inplace=False),
    unary_float("special_log_ndtr", tol=ULP, dtypes=NO_16BIT, method=False, supports_inplace=False),
    unary_float("special_ndtri", tol=OWN_DOUBLE, dtypes=NO_16BIT, method=False, supports_inplace=False, low=0.05,
                high=0.95, edge=False),
    *[
        unary_float(f"special_{name}", dtypes=NO_16BIT, method=False, supports_inplace=False, supports_grad=False,
                    supports_gradgrad=False)
        for name in ("modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0", "airy_ai", "bessel_j0",
                     "bessel_j1", "bessel_y0", "bessel_y1")
    ],
    *[
        unary_float(f"special_{name}", tol=K_ULPS, dtypes=NO_16BIT, method=False, supports_inplace=False,
                    supports_grad=False, supports_gradgrad=False)
        for name in ("modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                     "scaled_modified_bessel_k1")
    ],
    unary_float("deg2rad"),
    unary_float("rad2deg"),
    unary_float("logit", tol=ULP, low=0.05, high=0.95),
    unary_float(
        "logit",
        tol=ULP,
        variant="eps",
        low=0.05,
        high=0.95,
        call=lambda m, x, **kw: m.logit(x, eps=0.1, **kw),
        supports_inplace=False,
    ),
]

UNARY_SAME = [
    unary_same("abs"),
    unary_same("neg", dtypes=ALL_BUT_BOOL + COMPLEX),
    unary_same("sign", dtypes=ALL_DTYPES),
    unary_same("floor", dtypes=ALL_DTYPES),
    unary_same("ceil", dtypes=ALL_DTYPES),
    unary_same("round", dtypes=ALL_DTYPES),
    unary_same(
        "round",
        variant="decimals",
        supports_out=False,
        supports_inplace=False,
        call=lambda m, x: m.round(x, decimals=1),
        dtypes=FLOATS,
    ),
    unary_same("trunc", dtypes=ALL_DTYPES),
    unary_same("frac", dtypes=FLOATS),
    unary_same("square", dtypes=ALL_DTYPES),
    unary_same("relu"),
    unary_same("nan_to_num", dtypes=ALL_DTYPES),
    unary_same(
        "nan_to_num",
        variant="values",
        dtypes=ALL_DTYPES,
        supports_out=False,
        supports_inplace=False,
        call=lambda m, x: m.nan_to_num(x, nan=1.5, posinf=100.0, neginf=-50.0),
    ),
    unary_same(
        "bitwise_not",
        dtypes=("bool", "uint8", "int8", "int16", "int32", "int64"),
        supports_grad=False,
        supports_gradgrad=False,
    ),
]

PREDICATES = [
    unary_predicate("isnan", dtypes=ALL_DTYPES + COMPLEX, supports_out=False, supports_inplace=False),
    unary_predicate("isinf", dtypes=ALL_DTYPES + COMPLEX, supports_out=False, supports_inplace=False),
    unary_predicate("isfinite", dtypes=ALL_DTYPES + COMPLEX, supports_out=False, supports_inplace=False),
    unary_predicate("signbit", supports_inplace=False),
    unary_predicate("logical_not"),
]

BINARY = [
    binary("add", dtypes=ALL_DTYPES + COMPLEX),
    binary(
        "add",
        variant="alpha",
        dtypes=ALL_DTYPES,
        call=lambda m, x, y: m.add(x, y, alpha=2),
        supports_out=False,
        supports_inplace=False,
    ),
    binary("sub", dtypes=ALL_BUT_BOOL + COMPLEX),
    binary(
        "sub",
        variant="alpha",
        call=lambda m, x, y: m.sub(x, y, alpha=2),
        supports_out=False,
        supports_inplace=False,
    ),
    binary("mul", dtypes=ALL_DTYPES + COMPLEX + WIDE_UINTS + ("complex32",), tol=CMUL),
    binary("div", dtypes=ALL_DTYPES + COMPLEX, rhs_low=0.5, tol=CTOL),
    binary(
        "div",
        variant="trunc",
        rhs_low=1.0,
        call=lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
        supports_out=False,
        supports_inplace=False,
    ),
    binary(
        "div",
        variant="floor",
        rhs_low=1.0,
        call=lambda m, x, y: m.div(x, y, rounding_mode="floor"),
        supports_out=False,
        supports_inplace=False,
    ),
    binary("true_divide", dtypes=ALL_DTYPES, rhs_low=0.5),
    binary("floor_divide", rhs_low=1.0, supports_grad=False, supports_gradgrad=False),
    binary(
        "remainder",
        xfail={"out:scalar-first": OUT_SCALAR_FIRST.format("remainder")},
        rhs_low=1.0,
        scalar_first=True,
    ),
    binary("fmod", rhs_low=1.0),
    binary("pow", low=0.5, high=2.0, rhs_low=0.0, rhs_high=3.0, scalar_first=True),
    binary("maximum", dtypes=ALL_DTYPES),
    binary("minimum", dtypes=ALL_DTYPES),
    binary("fmax", dtypes=ALL_DTYPES, supports_inplace=False),
    binary("fmin", dtypes=ALL_DTYPES, supports_inplace=False),
    binary("atan2", dtypes=ALL_DTYPES, tol=ULP),
    binary("hypot", dtypes=FLOATS),
    binary("logaddexp", dtypes=ALL_DTYPES + COMPLEX, tol=LOG_ADD_EXP, supports_inplace=False),
    binary("logaddexp2", dtypes=ALL_DTYPES, tol=LOG_ADD_EXP, supports_inplace=False),
    binary("copysign", dtypes=ALL_DTYPES),
    binary("xlogy", dtypes=ALL_DTYPES, low=0.0, rhs_low=0.1, scalar_first=True),
    binary(
        "special_xlog1py",
        dtypes=ALL_DTYPES,
        low=0.0,
        rhs_low=-0.5,
        scalar_first=True,
        method=False,
        supports_inplace=False,
    ),
]

# torch.special's two-argument functions: igamma, igammac and zeta (a
# gradient in their second argument only: PyTorch has none for the first)
# and the orthogonal polynomials of degree n (none).
SPECIAL_BINARY = [
    *[
        binary(name, low=0.5, high=4.0, rhs_low=0.1, rhs_high=5.0, tol=IGAMMA_TOL, dtypes=FLOATS, no_grad_args=(0,))
        for name in ("igamma", "igammac")
    ],
    binary("special_zeta", low=1.5, high=4.0, rhs_low=0.5, rhs_high=3.0, scalar_first=True, dtypes=NO_16BIT,
           method=False, supports_inplace=False, no_grad_args=(0,)),
    unary_float("special_zeta", variant="scalar_self", low=0.5, high=3.0, edge=False, dtypes=NO_16BIT, method=False,
                supports_inplace=False, supports_out=False, call=lambda m, q: m.special.zeta(2.5, q)),
    *[
        binary(f"special_{name}", low=-1.0, high=1.0, rhs_low=0.0, rhs_high=6.0, scalar_first=True, dtypes=NO_16BIT,
               method=False,
               supports_inplace=False, supports_grad=False, supports_gradgrad=False)
        for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                     "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                     "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                     "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")
    ],
]

BITWISE = [
    bitwise(
        "bitwise_and",
        xfail={"out:scalar-first": OUT_SCALAR_FIRST.format("bitwise_and")},
        dtypes=INTS_AND_BOOL + WIDE_UINTS,
        scalar_first=True,
    ),
    bitwise(
        "bitwise_or",
        xfail={"out:scalar-first": OUT_SCALAR_FIRST.format("bitwise_or")},
        dtypes=INTS_AND_BOOL + WIDE_UINTS,
        scalar_first=True,
    ),
    bitwise(
        "bitwise_xor",
        xfail={"out:scalar-first": OUT_SCALAR_FIRST.format("bitwise_xor")},
        dtypes=INTS_AND_BOOL + WIDE_UINTS,
        scalar_first=True,
    ),
    bitwise(
        "bitwise_left_shift",
        xfail={"out:scalar-first": OUT_SCALAR_FIRST.format("bitwise_left_shift")},
        dtypes=("uint8", "int8", "int16", "int32", "int64"),
        scalar_first=True,
    ),
    bitwise(
        "bitwise_right_shift",
        xfail={"out:scalar-first": OUT_SCALAR_FIRST.format("bitwise_right_shift")},
        dtypes=("uint8", "int8", "int16", "int32", "int64"),
        scalar_first=True,
    ),
]

COMPARISON = [
    # (float8 rows would need samples torch can build for them: its flip refuses float8)
    comparison("eq", dtypes=ALL_DTYPES + COMPLEX + WIDE_UINTS + ("complex32",)),
    comparison("ne", dtypes=ALL_DTYPES + COMPLEX + WIDE_UINTS + ("complex32",)),
    comparison("lt"),
    comparison("le"),
    comparison("gt"),
    comparison("ge"),
    comparison("logical_and"),
    comparison("logical_or"),
    comparison("logical_xor"),
    comparison(
        "isclose",
        scalar=None,
        mixed=False,
        supports_out=False,
        supports_inplace=False,
        supports_meta=True,
    ),
]


def _clamp_samples(dtype):
    a = lambda shape, seed, lo=-3.0, hi=3.0: make(shape, dtype, lo, hi, seed=seed)
    return [
        SampleInput((a((2, 3), 1), -1, 2), name="scalars"),
        SampleInput((a((2, 3), 2), None, 1), name="max-only"),
        SampleInput((a((2, 3), 3), -1), name="min-only"),
        SampleInput((a((2, 3), 4), a((3,), 5, -3, 0), a((2, 1), 6, 0, 3)), name="tensors"),
        SampleInput((a((), 7), a((), 8, -3, 0), None), name="0-dim"),
        SampleInput((a((0, 3), 9), -1, 1), name="empty"),
        SampleInput((make((3, 4), dtype, -3.0, 3.0, seed=10).t(), -1, 1), name="transposed"),
    ]


def _clamp_bound_samples(dtype):
    a = lambda shape, seed: make(shape, dtype, -3.0, 3.0, seed=seed)
    return [
        SampleInput((a((2, 3), 1), 1), name="scalar"),
        SampleInput((a((2, 3), 2), a((3,), 3)), name="tensor"),
        SampleInput((a((0, 3), 4), 0), name="empty"),
        SampleInput((make((3, 4), dtype, -3.0, 3.0, seed=5).t(), 0), name="transposed"),
    ]


def _where(m, x, y):
    cond = (x > 0) if not isinstance(x, (int, float)) else (y > 0)
    return m.where(cond, x, y)


TERNARY = [
    binary(
        "lerp",
        dtypes=FLOATS + COMPLEX,
        samples=S.ternary(third=0.3, third_low=0.0, third_high=1.0),
        error_inputs=None,
    ),
    # A strided complex64 addcmul_ fuses its remainder products in other places.
    binary("addcmul", dtypes=ALL_BUT_BOOL + COMPLEX, tol=CMUL, samples=S.ternary(), error_inputs=None),
    binary(
        "addcmul",
        variant="value",
        samples=S.ternary(),
        error_inputs=None,
        dtypes=ALL_BUT_BOOL,
        call=lambda m, x, a, b: m.addcmul(x, a, b, value=0.5),
        supports_out=False,
        supports_inplace=False,
    ),
    binary("addcdiv", dtypes=FLOATS + COMPLEX, samples=S.ternary(third_low=0.5), error_inputs=None),
    binary(
        "where",
        dtypes=ALL_DTYPES,
        call=_where,
        scalar_first=True,
        edge=False,
        method=False,
        supports_inplace=False,
        supports_out=False,
    ),
    binary("clamp", dtypes=ALL_DTYPES, samples=_clamp_samples, error_inputs=None),
    binary(
        "clip",
        dtypes=ALL_DTYPES,
        samples=_clamp_samples,
        error_inputs=None,
    ),
    binary("clamp_min", dtypes=ALL_DTYPES, samples=_clamp_bound_samples, error_inputs=None),
    binary("clamp_max", dtypes=ALL_DTYPES, samples=_clamp_bound_samples, error_inputs=None),
]

ACTIVATIONS = [
    unary_same(
        "gelu",
        tol=ULP,
        call=F + "gelu",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "gelu",
        tol=ULP,
        variant="tanh",
        call=lambda m, x: m.nn.functional.gelu(x, approximate="tanh"),
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "silu",
        tol=ULP,
        call=F + "silu",
        dtypes=FLOATS + COMPLEX,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "elu",
        tol=ULP,
        call=F + "elu",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "elu",
        tol=ULP,
        variant="alpha",
        call=lambda m, x: m.nn.functional.elu(x, alpha=0.5),
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "selu",
        tol=ULP,
        call=F + "selu",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "celu",
        tol=ULP,
        call=F + "celu",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "softplus",
        tol=ULP,
        call=F + "softplus",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "softplus",
        tol=ULP,
        variant="beta",
        call=lambda m, x: m.nn.functional.softplus(x, beta=2.0, threshold=1.0),
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "hardtanh",
        call=F + "hardtanh",
        dtypes=ALL_BUT_BOOL,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "hardsigmoid",
        call=F + "hardsigmoid",
        dtypes=FLOATS,
        supports_gradgrad=False,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "hardswish",
        call=F + "hardswish",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "mish",
        tol=ULP2,
        call=F + "mish",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "log_sigmoid",
        tol=ULP,
        call=F + "logsigmoid",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "leaky_relu",
        call=F + "leaky_relu",
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
    unary_same(
        "threshold",
        xfail={"values/uint8": THRESHOLD_UINT8},
        call=lambda m, x: m.nn.functional.threshold(x, 0.5, -2.0),
        method=False,
        supports_out=False,
        supports_inplace=False,
    ),
]

# The in-place activations as functional calls: the result is the mutated input.
# The gradient tests call them on a copy of the input (mutates_input).
INPLACE_ACTIVATIONS = [
    unary_same(
        name,
        call=F + name,
        dtypes=FLOATS,
        method=False,
        tol=ULP if name != "leaky_relu_" else {},
        supports_out=False,
        supports_inplace=False,
        mutates_input=True,
        check_strides=False,
    )
    for name in ("elu_", "selu_", "celu_", "leaky_relu_")
] + [
    # relu_ and hardtanh_ are in-place variants of their operators, not operators of their own.
    unary_same(
        name,
        variant="inplace",
        call=F + name + "_",
        method=False,
        supports_out=False,
        supports_inplace=False,
        mutates_input=True,
        check_strides=False,
    )
    for name in ("relu", "hardtanh")
] + [
    unary_same(
        "rrelu_",
        call=lambda m, x: m.nn.functional.rrelu_(x, training=False),
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
        mutates_input=True,
        check_strides=False,
    ),
    unary_same(
        "threshold_",
        xfail={"values/uint8": THRESHOLD_UINT8},
        call=lambda m, x: m.nn.functional.threshold_(x, 0.5, -2.0),
        method=False,
        supports_out=False,
        supports_inplace=False,
        mutates_input=True,
        check_strides=False,
    ),
    unary_same(
        "square_",
        call=".square_",
        dtypes=ALL_BUT_BOOL,
        method=False,
        supports_out=False,
        supports_inplace=False,
        mutates_input=True,
        check_strides=False,
    ),
    unary_same(
        "clip_",
        call=lambda m, x: x.clip_(-1, 1),
        method=False,
        supports_out=False,
        supports_inplace=False,
        mutates_input=True,
        check_strides=False,
    ),
    unary_same(
        "true_divide_",
        call=lambda m, x: x.true_divide_(2.0),
        dtypes=FLOATS,
        method=False,
        supports_out=False,
        supports_inplace=False,
        mutates_input=True,
        check_strides=False,
    ),
]

ROWS = (
    UNARY_FLOAT
    + UNARY_SAME
    + PREDICATES
    + BINARY
    + SPECIAL_BINARY
    + BITWISE
    + COMPARISON
    + TERNARY
    + ACTIVATIONS
    + INPLACE_ACTIVATIONS
)
