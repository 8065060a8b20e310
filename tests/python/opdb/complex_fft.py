"""Rows of the complex-number operators and of the FFTs (_fft_r2c, _fft_c2c,
_fft_c2r). The gradient tests differentiate float64 inputs with real
results, so a complex operand is made from a real (..., 2) tensor with
view_as_complex and a complex result is returned through view_as_real."""

from __future__ import annotations

from .core import ALL_DTYPES, COMPLEX, INTS_AND_BOOL, SampleInput, Tol, make
from .elementwise import CULP
from .families import DIFFERENTIABLE, row, unary_float

F32_F64 = ("float32", "float64")
HALF_UP = ("float16", "float32", "float64")  # float16 pairs make complex32
COMPLEX_ROW = {"supports_meta": True, "check_strides": True, **DIFFERENTIABLE}
# Ember's own FFT against PyTorch's pocketfft/MKL: sums of n terms in another order.
FFT_TOL = Tol({"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}, "FFT butterflies: sums in another order")


def _real(m, y):
    return m.view_as_real(y.resolve_conj()) if y.is_complex() else y


def via_complex(fn):
    """fn applied to view_as_complex(x), its result seen as real numbers."""
    return lambda m, x, *a, **k: _real(m, fn(m, m.view_as_complex(x), *a, **k))


def _pairs(d):
    """Real (..., 2) tensors: complex numbers as (real, imaginary) pairs."""
    return [
        SampleInput((make((2, 3, 2), d, seed=1),), name="2x3"),
        SampleInput((make((4, 2), d, seed=2),), name="4"),
        SampleInput((make((2,), d, seed=3),), name="0-dim"),
        SampleInput((make((4, 3, 2), d, seed=4).transpose(0, 1),), name="transposed"),
    ]


def _two(d):
    return [
        SampleInput((make((2, 3), d, 0.5, 3.0, seed=1), make((2, 3), d, seed=2)), name="same"),
        SampleInput((make((2, 3), d, 0.5, 3.0, seed=3), make((3,), d, seed=4)), name="broadcast"),
        SampleInput((make((), d, 0.5, 3.0, seed=5), make((), d, seed=6)), name="0-dim"),
    ]


COMPLEX_ROWS = [
    unary_float("angle", dtypes=ALL_DTYPES + COMPLEX, tol=CULP, supports_inplace=False, edge=False),
    unary_float("sgn", dtypes=ALL_DTYPES + COMPLEX, edge=False),
    unary_float("conj_physical", dtypes=ALL_DTYPES + COMPLEX, edge=False),
    *[
        row(name, "complex", _pairs, variant="complex", call=via_complex(lambda m, z, n=name: getattr(m, n)(z)),
            dtypes=dts, tol=tol, **COMPLEX_ROW)
        for name, dts, tol in (("angle", F32_F64, CULP), ("sgn", HALF_UP, {}), ("conj_physical", HALF_UP, {}))
    ],
    row("polar", "complex", _two, call=lambda m, a, b: m.view_as_real(m.polar(a, b)), dtypes=F32_F64,
        **COMPLEX_ROW),
    row("complex", "complex", _two, call=lambda m, a, b: m.view_as_real(m.complex(a, b)), dtypes=HALF_UP,
        **COMPLEX_ROW),
    row("view_as_real", "complex", _pairs, call=lambda m, x: m.view_as_real(m.view_as_complex(x)),
        dtypes=HALF_UP, **COMPLEX_ROW),
    row("view_as_complex", "complex", _pairs, call=lambda m, x: m.view_as_complex(x).abs(), dtypes=HALF_UP,
        **COMPLEX_ROW),
]


def _fft_real(*shapes_kw):
    def gen(d):
        return [
            SampleInput((make(shape, d, seed=i + 1),), kw, name=name) for i, (name, shape, kw) in enumerate(shapes_kw)
        ]

    return gen


def fft_row(name, fn, samples, variant, complex_input, dtypes=F32_F64):
    call = via_complex(fn) if complex_input else (lambda m, x, *a, **k: _real(m, fn(m, x, *a, **k)))
    return row(name, "fft", samples, variant=variant, call=call, dtypes=dtypes, tol=FFT_TOL, **COMPLEX_ROW)


_1D = _fft_real(("8", (8,), {}), ("rows", (3, 7), {"n": 6, "norm": "ortho"}))
_1D_PAIRS = _fft_real(("8", (8, 2), {}), ("rows", (3, 5, 2), {"n": 8, "norm": "forward"}))
_2D = _fft_real(("4x6", (2, 4, 6), {}), ("sized", (4, 5), {"s": (3, 6), "norm": "ortho"}))
_2D_PAIRS = _fft_real(("4x6", (2, 4, 6, 2), {}), ("sized", (4, 5, 2), {"s": (3, 6), "norm": "ortho"}))

FFT_ROWS = [
    fft_row("_fft_r2c", lambda m, x, **k: m.fft.rfft(x, **k), _1D, "rfft", False, INTS_AND_BOOL + F32_F64),
    fft_row("_fft_r2c", lambda m, x, **k: m.fft.fft(x, **k), _1D, "fft_real", False, INTS_AND_BOOL + F32_F64 + COMPLEX),
    fft_row("_fft_r2c", lambda m, x, **k: m.fft.rfft2(x, **k), _2D, "rfft2", False, INTS_AND_BOOL + F32_F64),
    fft_row("_fft_r2c", lambda m, x, **k: m.fft.ihfft(x, **k), _1D, "ihfft", False, INTS_AND_BOOL + F32_F64),
    fft_row("_fft_c2c", lambda m, z, **k: m.fft.fft(z, **k), _1D_PAIRS, "fft", True),
    fft_row("_fft_c2c", lambda m, z, **k: m.fft.ifft(z, **k), _1D_PAIRS, "ifft", True),
    fft_row("_fft_c2c", lambda m, z, **k: m.fft.fft2(z, **k), _2D_PAIRS, "fft2", True),
    fft_row("_fft_c2r", lambda m, z, **k: m.fft.irfft(z, **k), _1D_PAIRS, "irfft", True),
    fft_row("_fft_c2r", lambda m, z, **k: m.fft.hfft(z, **k), _1D_PAIRS, "hfft", True),
    fft_row("_fft_c2r", lambda m, z, **k: m.fft.irfft2(z, **k), _2D_PAIRS, "irfft2", True),
]

ROWS = COMPLEX_ROWS + FFT_ROWS

# Known differences from PyTorch (strict xfails), by row id.
KNOWN = {
    "conj_physical": {
        "strides": "conj_physical of a real tensor: torch returns the input itself, ember a contiguous copy"
    },
}
for _row in ROWS:
    _row.xfail.update(KNOWN.get(_row.id, {}))
