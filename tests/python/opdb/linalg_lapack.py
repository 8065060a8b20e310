"""Rows of ember.linalg's decompositions, solvers and the functions built
on them: float32, float64, complex64 and complex128, as PyTorch's CPU build.
The complex rows are gradchecked on complex128 by test_opdb's
test_gradcheck_complex."""

from __future__ import annotations

import torch

from .core import ALL_BUT_BOOL, ALL_DTYPES, COMPLEX, SampleInput, Tol, make
from .families import row

REAL = ("float32", "float64")
LAPACK_DTYPES = REAL + COMPLEX
LAPACK_TOL = Tol(
    {"float32": (2e-4, 2e-4), "float64": (1e-10, 1e-10), "complex64": (2e-4, 2e-4), "complex128": (1e-10, 1e-10)},
    "OpenBLAS's LAPACK against MKL: other blockings, other rounding",
)


def _square(shape, d, seed):
    """A well-conditioned matrix (batch): random entries plus 3 on the diagonal."""
    a = make(shape, d, seed=seed)
    return a if d == torch.bool else a + 3 * torch.eye(shape[-2], shape[-1], dtype=d)


def _samples(*cases):
    """cases: tuples of ('sq', shape) / ('any', shape) per argument, then an optional kwargs dict."""

    def gen(d):
        out = []
        for i, case in enumerate(cases):
            kwargs = case[-1] if isinstance(case[-1], dict) else {}
            args = []
            for j, (kind, shape) in enumerate(c for c in case if not isinstance(c, dict)):
                seed = 10 * i + j
                args.append(_square(shape, d, seed) if kind == "sq" else make(shape, d, seed=seed))
            out.append(SampleInput(tuple(args), kwargs, name=f"case{i}"))
        return out

    return gen


def _spd(lib, a):
    """Symmetric (Hermitian) positive-definite."""
    return a @ a.mH + lib.eye(a.shape[-1], dtype=a.dtype)


def lapack(name, samples, **kw):
    kw.setdefault("dtypes", LAPACK_DTYPES)
    kw.setdefault("tol", LAPACK_TOL)
    kw.setdefault("supports_grad", True)
    kw.setdefault("supports_gradgrad", True)
    return row(name, "linalg", samples, **kw)


SQ = ("sq", (3, 3))
SQ_B = ("sq", (2, 3, 3))
ROWS = [
    lapack(
        "linalg_solve",
        _samples((SQ, ("any", (3, 2))), (SQ_B, ("any", (2, 3))), (SQ, ("any", (3,)))),
        call="linalg.solve",
        supports_out=True,
    ),  # fmt: skip
    lapack("linalg_inv", _samples((SQ,), (SQ_B,)), call="linalg.inv", supports_out=True),
    lapack("linalg_det", _samples((SQ,), (SQ_B,)), call="linalg.det"),
    lapack("logdet", _samples((SQ,)), call=lambda lib, a: lib.logdet(_spd(lib, a))),
    lapack("linalg_slogdet", _samples((SQ,), (SQ_B,)), call=lambda lib, a: lib.linalg.slogdet(a).logabsdet),
    lapack("linalg_cholesky", _samples((SQ,), (SQ_B,)), call=lambda lib, a: lib.linalg.cholesky(_spd(lib, a))),
    lapack("linalg_qr", _samples((("any", (4, 3)),), (("any", (2, 3, 4)),)), call="linalg.qr"),
    lapack("linalg_eigvalsh", _samples((SQ,), (SQ_B,)), call=lambda lib, a: lib.linalg.eigvalsh(_spd(lib, a))),
    lapack("linalg_svdvals", _samples((("any", (4, 3)),), (("any", (2, 3, 4)),)), call="linalg.svdvals"),
    lapack("linalg_pinv", _samples((("sq", (4, 3)),), (("sq", (2, 3, 4)),)), call="linalg.pinv"),
    lapack(
        "linalg_lstsq",
        _samples((("sq", (4, 3)), ("any", (4, 2)))),
        call=lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
    ),
    lapack("linalg_lu_factor", _samples((SQ,), (SQ_B,)), call=lambda lib, a: lib.linalg.lu_factor(a).LU),
    lapack(
        "linalg_solve_triangular",
        _samples((SQ, ("any", (3, 2)), {"upper": True})),
        call=lambda lib, a, b, upper: lib.linalg.solve_triangular(a.triu(), b, upper=upper),
    ),  # fmt: skip
    lapack(
        "linalg_matrix_exp",
        _samples((SQ,), (SQ_B,)),
        call="linalg.matrix_exp",
        xfail={"dtypes": "torch's CPU matrix_exp also takes float16 and bfloat16; ember's takes float32/float64"},
    ),
    lapack(
        "linalg_matrix_power",
        _samples((SQ, {"n": 3}), (SQ_B, {"n": -2})),
        call="linalg.matrix_power",
        dtypes=ALL_DTYPES + COMPLEX,
    ),
    lapack(
        "linalg_householder_product",
        _samples((("sq", (4, 3)), ("any", (2,)))),
        call="linalg.householder_product",
        # a product of reflections, not PyTorch's formula: second derivatives 7.5e-13 apart (relative 6.6e-12)
        gradgrad_tol=(1e-10, 1e-12),
    ),
    lapack("linalg_cond", _samples((SQ,), (SQ_B,)), call="linalg.cond"),
    lapack(
        "linalg_matrix_norm", _samples((("any", (4, 3)), {"ord": "nuc"}), (SQ_B, {"ord": 2})), call="linalg.matrix_norm"
    ),
    lapack(
        "linalg_multi_dot",
        _samples((("any", (2, 3)), ("any", (3, 4)), ("any", (4,)))),
        call=lambda lib, *ts: lib.linalg.multi_dot(list(ts)),
        dtypes=ALL_DTYPES + COMPLEX,
    ),
    lapack(
        "linalg_matrix_rank",
        _samples((("any", (4, 3)),), (SQ_B,)),
        call="linalg.matrix_rank",
        supports_grad=False,
        supports_gradgrad=False,
    ),
    lapack(
        "linalg_cross", _samples((("any", (4, 3)), ("any", (4, 3)))), call="linalg.cross", dtypes=ALL_BUT_BOOL + COMPLEX
    ),
    # complex eigenvalues of real and complex matrices, in LAPACK's order (geev)
    lapack(
        "linalg_eigvals",
        _samples((SQ,), (SQ_B,)),
        # as real parts and imaginary parts, so the float64 gradient tests take a real loss
        call=lambda lib, a: lib.view_as_real(lib.linalg.eigvals(a)),
    ),
    lapack(
        "linalg_vander",
        _samples((("any", (2, 3)),)),
        call="linalg.vander",
        dtypes=tuple(d for d in ALL_BUT_BOOL if d not in ("float16", "bfloat16")) + COMPLEX,
    ),
]
