"""Bits of PyTorch in complex elementwise functions and products: expm1
(c10's formula, contracted in PyTorch's FMA builds), acos of complex128
(pi/2 - asin in PyTorch's vector form), angle (SLEEF's atan2 on whole
vectors of contiguous rows, libm's elsewhere), square and pow(z, 2) (the
fused scalar product after the whole vectors), prod of complex rows (the
lane fold and strided rows in PyTorch's product forms) and vector norms of
complex numbers (their libm magnitudes folded one by one), under every
CPU capability; and the gradients of linalg functions in PyTorch's
arithmetic."""

import numpy as np
import pytest
from conftest import run_under_capability, torch

import ember

DTYPES = ["complex64", "complex128"]
LENGTHS = [1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000]
SHAPES = [(37, 29), (6, 16), (6, 40), (5, 67)]


def _values(L, dname, shape, seed, layout):
    rng = np.random.default_rng(seed)
    full = shape[:-1] + (2 * shape[-1],) if layout == "strided" else shape
    a = (rng.standard_normal(full) + 1j * rng.standard_normal(full)).astype(dname)
    t = L.from_numpy(a)
    if layout == "strided":
        t = t[..., ::2]
    elif layout == "transposed":
        t = L.from_numpy(np.ascontiguousarray(a.swapaxes(-1, -2))).transpose(-1, -2)
    return t


def _parts(r):
    a = np.ascontiguousarray(r.detach().numpy())
    return a.view(a.real.dtype) if a.dtype.kind == "c" else a


def _assert_same(fn, dname, shape, seed, layout):
    t = _parts(fn(torch, _values(torch, dname, shape, seed, layout)))
    e = _parts(fn(ember, _values(ember, dname, shape, seed, layout)))
    differ = ~((t == e) | (np.isnan(t) & np.isnan(e)))
    assert not differ.any(), f"{int(differ.sum())} of {t.size} parts differ: {t[differ][:3]} vs {e[differ][:3]}"


UNARY = {
    "expm1": lambda L, x: L.expm1(x),
    "acos": lambda L, x: L.acos(x),
    "angle": lambda L, x: L.angle(x),
    "square": lambda L, x: L.square(x),
    "pow2": lambda L, x: L.pow(x, 2),
}
REDUCTIONS = {
    "prod_rows": lambda L, x: L.prod(x, -1),
    "prod_columns": lambda L, x: L.prod(x, 0),
    "prod_all": lambda L, x: L.prod(x.reshape(-1)[:50]),
    "norm_all": lambda L, x: L.norm(x),
    "norm_rows": lambda L, x: L.linalg.vector_norm(x, 2, dim=-1),
    "norm_columns": lambda L, x: L.linalg.vector_norm(x, 2, dim=0),
    "norm_one_rows": lambda L, x: L.linalg.vector_norm(x, 1, dim=-1),
    "norm_p_rows": lambda L, x: L.linalg.vector_norm(x, 3, dim=-1),
}


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dname", DTYPES)
def test_unary_bits(dname, name, n, layout):
    _assert_same(UNARY[name], dname, (n,), n, layout)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(UNARY) + sorted(REDUCTIONS))
@pytest.mark.parametrize("dname", DTYPES)
def test_matrix_bits(dname, name, shape, layout):
    _assert_same({**UNARY, **REDUCTIONS}[name], dname, shape, 7, layout)


def _check_all():
    for dname in DTYPES:
        for layout in ("contiguous", "strided"):
            for n in LENGTHS:
                for name in UNARY:
                    _assert_same(UNARY[name], dname, (n,), n, layout)
            for shape in SHAPES:
                for fn in {**UNARY, **REDUCTIONS}.values():
                    _assert_same(fn, dname, shape, 7, layout)
    return "ok"


@pytest.mark.parametrize("cap", ["avx2", "default"])
def test_bits_other_capabilities(cap):
    run_under_capability(cap, "test_numerics_bits_round2", "_check_all")


# Gradients of linalg functions in PyTorch's arithmetic (its backward formulas'
# products and solves, in their order), for well-conditioned batches.
def _matrices(L, dname, layout, seed=0, n=4, batch=3):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((batch, n, n)) + n * np.eye(n)
    if dname.startswith("complex"):
        a = a + 1j * rng.standard_normal((batch, n, n))
    a = a.astype(dname)
    if layout == "transposed":
        return L.from_numpy(np.ascontiguousarray(a.swapaxes(-1, -2))).mT
    return L.from_numpy(a)


def _spd(L, A):
    return A @ A.mH + A.shape[-1] * L.eye(A.shape[-1], dtype=A.dtype)


def _rhs(L, A):
    return A[..., :2].detach() * 0.5 + 0.1


LINALG_GRADS = {
    "inv": lambda L, A: L.linalg.inv(A),
    "det": lambda L, A: L.linalg.det(A),
    "lu_factor": lambda L, A: L.linalg.lu_factor(A)[0],
    "lu": lambda L, A: L.cat(list(L.linalg.lu(A)[1:]), -1),
    "lu_solve": lambda L, A: L.linalg.lu_solve(*L.linalg.lu_factor(A), _rhs(L, A)),
    "lu_solve_adjoint": lambda L, A: L.linalg.lu_solve(*L.linalg.lu_factor(A), _rhs(L, A), adjoint=True),
    "cholesky": lambda L, A: L.linalg.cholesky(_spd(L, A)),
    "qr": lambda L, A: L.cat(list(L.linalg.qr(A)), -1),
    "eigh": lambda L, A: L.linalg.eigh(_spd(L, A))[1].abs(),
    "eigvalsh": lambda L, A: L.linalg.eigvalsh(_spd(L, A)),
    "svd": lambda L, A: L.linalg.svd(A)[0].abs() + L.linalg.svd(A)[1].unsqueeze(-1),
    "svdvals": lambda L, A: L.linalg.svdvals(A),
    "svd_wide": lambda L, A: L.linalg.svd(A[..., :3, :], full_matrices=False)[2].abs(),
    "svd_tall": lambda L, A: L.linalg.svd(A[..., :3], full_matrices=False)[0].abs(),
    "lstsq": lambda L, A: L.linalg.lstsq(A, _rhs(L, A)).solution,
    "lstsq_tall": lambda L, A: L.linalg.lstsq(A[..., :3], _rhs(L, A)).solution,
}


def _grad_bits(L, name, dname, layout):
    A = _matrices(L, dname, layout).requires_grad_(True)
    y = LINALG_GRADS[name](L, A)
    g = np.random.default_rng(9).standard_normal(tuple(y.shape))
    gy = L.from_numpy(g).to(y.dtype)
    y.backward(gy)
    return _parts(A.grad)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dname", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("name", sorted(LINALG_GRADS))
def test_linalg_grad_bits(name, dname, layout):
    t = _grad_bits(torch, name, dname, layout)
    e = _grad_bits(ember, name, dname, layout)
    assert np.array_equal(t, e), f"{int((t != e).sum())} of {t.size} parts differ"


@pytest.mark.parametrize("dname", ["float64", "complex128"])
def test_lu_solve_grads_of_factors_and_rhs_bits(dname):
    """lu_solve's own gradients (of LU and B): the forward by getrs, LU's by
    PyTorch's formula, B's by the adjoint solve."""
    out = []
    for L in (torch, ember):
        LU, piv = L.linalg.lu_factor(_matrices(L, dname, "contiguous"))
        LU.requires_grad_(True)
        B = _rhs(L, _matrices(L, dname, "contiguous", seed=1)).requires_grad_(True)
        X = L.linalg.lu_solve(LU, piv, B)
        X.backward(X.detach().cos())
        out.append([_parts(X), _parts(LU.grad), _parts(B.grad)])
    for t, e in zip(*out):
        assert np.array_equal(t, e)
