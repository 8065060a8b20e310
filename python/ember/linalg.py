"""ember.linalg: torch.linalg's functions, names, errors and gradients.

Decompositions and solvers run LAPACK kernels through the building blocks of
ember._linalg_autograd; the rest is composed of them. float32, float64,
complex64 and complex128 (LAPACK's c/z routines for the complex ones)."""

from __future__ import annotations

import builtins
import math

import ember
from ember import _C, _argcheck, _matrix_exp
from ember import _linalg_autograd as _ag
from ember._linalg_checks import (  # noqa: F401  (also read as ember.linalg._name)
    _LAPACK,
    _OUT_TYPES,
    _REAL,
    LinAlgError,
    _broadcast_batch,
    _check_dtype,
    _check_matrix,
    _check_same_dtype,
    _check_square_input,
    _cholesky_ex_t,
    _copy_out,
    _deprecated,
    _eig_t,
    _eigh_t,
    _eye,
    _first_error,
    _geqrf_t,
    _inv_ex_t,
    _ldl_factor_ex_t,
    _ldl_factor_t,
    _lstsq_t,
    _lu_factor_ex_t,
    _lu_factor_t,
    _lu_t,
    _lu_unpack_t,
    _named_tuple,
    _needs_grad,
    _ni_out,
    _no_grad_out,
    _not_implemented,
    _not_pd,
    _NotImplemented,
    _qr_t,
    _qr_top_t,
    _raise_info,
    _real_dtype,
    _return_type,
    _singular,
    _slogdet_t,
    _slogdet_top_t,
    _solve_ex_t,
    _svd_t,
    _svd_top_t,
    _triangular_solve_t,
    _type_name,
    _write_out,
)

_F = _C._VariableFunctions

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]


# ---- solve, inv -----------------------------------------------------------------------------------


def _is_vector_rhs(A, B):
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_impl(A, B, left, name, check_errors, info_name="torch.linalg.solve"):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(A)}")
    _check_same_dtype(A, B, name)
    _check_matrix(A, name, square=True)
    _check_dtype(A, name, "lu_cpu", False)
    vector = _is_vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    if vector and not left:
        raise RuntimeError(f"{name}: Vector broadcasting of the left hand side is not supported for left=False.")
    n = A.shape[-1]
    rows = Bm.shape[-2] if left else Bm.shape[-1]
    if Bm.dim() < 2 or rows != n:
        shape_b = f"{Bm.shape[-2]}x{Bm.shape[-1]}" if Bm.dim() >= 2 else f"{B.shape[-1]}x1"
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {shape_b})")
    # one node on A and B as given (PyTorch's LinalgSolveExBackward0); X A = B is solved as A^H X^H = B^H
    X, _LU, _piv, info = _ag.Solve.apply(A, B, False, left, vector)
    if check_errors:
        _raise_info(info, info_name, lambda c: "The solver failed because the input matrix is singular.")
    return X, info


def solve_ex(A, B, *, left=True, check_errors=False, out=None):  # noqa: N803
    _no_grad_out(out, "_linalg_solve_ex", A, B)
    X, info = _solve_impl(A, B, left, "linalg.solve", check_errors, "torch.linalg.solve_ex")
    return _write_out(out, _solve_ex_t(X, info))


def solve(A, B, *, left=True, out=None):  # noqa: N803
    """The solution X of A X = B (left) or X A = B."""
    _no_grad_out(out, "_linalg_solve_ex", A, B)
    X, _ = _solve_impl(A, B, left, "linalg.solve", True)
    return _write_out(out, X)


def _inv_impl(A, name, check_errors, info_name=None):
    if A.dtype in (ember.float16, ember.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_type_name(A)}")
    _check_dtype(A, name, "linalg_inv", True)
    _check_matrix(A, name, square=True)
    X, _LU, _piv, info = _ag.Inv.apply(A)
    if check_errors:
        _raise_info(info, info_name or name, _singular)
    return X, info


def inv_ex(A, *, check_errors=False, out=None):  # noqa: N803
    _no_grad_out(out, "linalg_inv_ex", A)
    return _write_out(out, _inv_ex_t(*_inv_impl(A, "linalg.inv", check_errors, "linalg.inv_ex")))


def inv(A, *, out=None):  # noqa: N803
    """The inverse of square matrices."""
    _no_grad_out(out, "linalg_inv_ex", A)
    return _write_out(out, _inv_impl(A, "linalg.inv", True)[0])


# ---- LU, det -----------------------------------------------------------------------------------


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):  # noqa: N803
    _no_grad_out(out, "linalg_lu_factor_ex", A)
    name = "torch.linalg.lu_factor_ex"
    if A.dim() < 2:
        raise RuntimeError(
            f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead"
        )
    _check_dtype(A, name, "lu_cpu", False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = _ag.LuFactor.apply(A)
    if check_errors:
        _lu_factor_errors(info, name)
    return _write_out(out, _lu_factor_ex_t(LU, piv, info))


def _lu_factor_errors(info, name):
    found = _first_error(info)
    if found is not None:
        b, code = found
        prefix = f"(Batch element {b}): " if info.dim() > 0 else ""
        raise RuntimeError(
            f"{name}: {prefix}U[{code},{code}] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
            "or linalg.lu_factor_ex(A, pivot)"
        )


def lu_factor(A, *, pivot=True, out=None):  # noqa: N803
    """The compact LU factorization (LU, pivots) of A."""
    _no_grad_out(out, "linalg_lu_factor_ex", A)
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    _lu_factor_errors(info, "torch.linalg.lu_factor")
    return _write_out(out, _lu_factor_t(LU, piv))


def lu(A, *, pivot=True, out=None):  # noqa: N803
    """(P, L, U) with A = P L U."""
    _no_grad_out(out, "linalg_lu", A)
    # one node, as PyTorch's (LinalgLuBackward0): P carries no gradient
    factor = lambda A: _ag.unpack_lu(*lu_factor_ex(A, pivot=pivot)[:2])  # noqa: E731, N803
    return _write_out(out, _lu_t(*_ag.named("LinalgLuBackward0", factor, A, mask=(False, True, True))))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):  # noqa: N803
    if LU_data.dim() < 2:
        raise RuntimeError(
            f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(LU_data.shape)} instead"
        )
    # one node on LU_data, as PyTorch's (LuUnpackBackward0): P carries no gradient
    unpack = lambda LU: _ag.unpack_lu(LU, LU_pivots, unpack_data, unpack_pivots)  # noqa: E731, N803
    return _write_out(out, _lu_unpack_t(*_ag.named("LuUnpackBackward0", unpack, LU_data, mask=(False, True, True))))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):  # noqa: N803
    """Solves with a factorization from lu_factor (differentiable through the factors)."""
    _no_grad_out(out, "linalg_lu_solve", LU, pivots, B)
    name = "linalg.lu_solve"
    _check_matrix(LU, "torch." + name, square=True)
    if B.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if pivots.dtype != ember.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    if pivots.dim() == 0 or pivots.shape[-1] != n:
        raise RuntimeError(f"{name}: Number of pivots per batch should be same as the dimension of the matrix")
    if LU.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected LU and B to have the same dtype, but found LU of type {_type_name(LU)} and B of type "
            f"{_type_name(B)} instead"
        )
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    if not left:
        # X A = B is A^H X^H = B^H
        X = lu_solve(LU, pivots, B.mH, left=True, adjoint=not adjoint)
        return _write_out(out, X.mH)
    LU2, B2 = _broadcast_batch(LU, B)
    piv2 = pivots.expand(*LU2.shape[:-2], pivots.shape[-1]).contiguous()
    if _needs_grad(LU, B):
        return _write_out(out, _ag.LuSolve.apply(LU2, piv2, B2, adjoint))
    return _write_out(out, _F._linalg_lapack_getrs(LU2, piv2, B2, adjoint, True))


def _lu_diag(A, name):
    _check_dtype(A, name, "lu_cpu", True)
    _check_matrix(A, name, square=True)
    # As PyTorch: a contiguous real A is factored as A^T (no column-major copy; det(A^T) = det(A)).
    LU, piv, _ = _ag.LuFactor.apply(A.mT if A.is_contiguous() and not A.is_complex() else A)
    n = A.shape[-1]
    swaps = (piv != ember.arange(1, n + 1, dtype=ember.int32, device=piv.device)).sum(-1)
    sign = 1.0 - 2.0 * (swaps % 2).to(A.dtype)
    return LU.diagonal(0, -2, -1), sign


def _det(A):  # noqa: N803
    d, sign = _lu_diag(A, "linalg.det")
    return sign * d.prod(-1)


def det(A, *, out=None):  # noqa: N803
    """The determinant, from an LU factorization."""
    _no_grad_out(out, "_linalg_det", A)
    _check_square_input(A, "linalg.det", "lu_cpu")
    return _write_out(out, _ag.Det.apply(_det, None, {}, A) if ember.is_grad_enabled() and A.requires_grad else _det(A))


def _slogdet(A):  # noqa: N803
    d, sign = _lu_diag(A, "linalg.slogdet")
    if A.is_complex():
        # the sign is a unit complex number, differentiable as PyTorch's
        return ember.sgn(d).prod(-1) * sign, d.abs().log().sum(-1)
    return sign * ember.sign(d).prod(-1), d.abs().log().sum(-1)


def _checked_slogdet(A, name):  # noqa: N803
    _check_square_input(A, name, "lu_cpu", low_precision=True)
    return _ag.Slogdet.apply(A, _slogdet) if ember.is_grad_enabled() and A.requires_grad else _slogdet(A)


def slogdet(A, *, out=None):  # noqa: N803
    """(sign, log |det|)."""
    _no_grad_out(out, "_linalg_slogdet", A)
    return _write_out(out, _slogdet_t(*_checked_slogdet(A, "linalg.slogdet")))


def _top_slogdet(input, *, out=None):  # noqa: A002
    return _write_out(out, _slogdet_top_t(*slogdet(input)))


def logdet(input):  # noqa: A002
    """log det(A): nan where det < 0."""
    sign, logabs = _checked_slogdet(input, "logdet")
    if input.is_complex():
        return sign.log() + logabs  # log det = log(sign) + log |det|
    return ember.where(sign < 0, ember.full_like(logabs, math.nan), logabs)


# ---- Cholesky ------------------------------------------------------------------------------------


def _cholesky_impl(A, upper, name, check_errors, int_first=True):
    _check_square_input(A, name, "cholesky_cpu", int_first=int_first)
    factor, info = _ag.Cholesky.apply(A, upper)
    if check_errors:
        _raise_info(info, name, _not_pd)
    return factor, info


def cholesky_ex(input, *, upper=False, check_errors=False, out=None):  # noqa: A002
    _no_grad_out(out, "linalg_cholesky_ex", input)
    factor, info = _cholesky_impl(input, upper, "linalg.cholesky", False)
    if check_errors:
        _raise_info(info, "linalg.cholesky_ex", _not_pd)
    return _write_out(out, _cholesky_ex_t(factor, info))


def cholesky(input, *, upper=False, out=None):  # noqa: A002
    """The Cholesky factor L (A = L L^T), or U = L^T when upper."""
    _no_grad_out(out, "linalg_cholesky_ex", input)
    return _write_out(out, _cholesky_impl(input, upper, "linalg.cholesky", True)[0])


def _top_cholesky(input, upper=False, *, out=None):  # noqa: A002
    _deprecated(
        "cholesky",
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
        "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
        "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
        "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.",
    )
    if input.numel() == 0:
        # As PyTorch's deprecated form: an empty input of any shape and dtype comes back as it is.
        return _write_out(out, input.clone())
    return _write_out(out, _cholesky_impl(input, upper, "cholesky", True, int_first=False)[0])


def cholesky_solve(B, L, upper=False, *, out=None):  # noqa: N803
    """X with (L L^H) X = B given the Cholesky factor L (or U^H U with U)."""
    # PyTorch's checks in its order: ranks, dtypes, square factor, sizes, then the kernel's dtype.
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions instead")
    if L.dtype != B.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_type_name(B)} and A of type "
            f"{_type_name(L)} instead."
        )
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(
            f"A must be batches of square matrices, but they are {L.shape[-2]} by {L.shape[-1]} matrices"
        )
    if L.shape[-1] != B.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-1]} by {L.shape[-1]} but "
            f"each b matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    if L.dtype not in _LAPACK:
        _broadcast_batch(L, B)  # a batch mismatch is reported first
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for '{_type_name(L)}'")
    if not ember.is_grad_enabled() or not (B.requires_grad or L.requires_grad) or _ag._composed(_ag.CHOL, (L,)):
        return _write_out(out, _ag.cholesky_solve(B, L, upper))
    # one node on (B, L), as PyTorch's (CholeskySolveBackward0)
    return _write_out(out, _ag.CholeskySolve.apply(B, L, upper))


def cholesky_inverse(L, upper=False, *, out=None):  # noqa: N803
    """(L L^H)^-1 from the Cholesky factor: LAPACK's potri, as PyTorch (one triangle read)."""
    _check_matrix(L, "cholesky_inverse", square=True)
    if L.dtype not in _LAPACK:
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for '{_type_name(L)}'")

    def solve(factor, upper):
        inverse, info = _F._linalg_lapack_potri(factor, upper)
        _raise_info(info, "cholesky_inverse", _singular)
        return inverse

    if ember.is_grad_enabled() and L.requires_grad:
        return _write_out(out, _ag.CholeskyInverse.apply(L, upper, solve))
    return _write_out(out, solve(L, upper))


# ---- triangular ----------------------------------------------------------------------------------


def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):  # noqa: A002, N803
    """X with A X = B (or X A = B) for triangular A."""
    _no_grad_out(out, "linalg_solve_triangular", input, B)
    A = input
    if out is not None and out.dtype != A.dtype:
        from ember._ops_math import _scalar_name

        raise RuntimeError(f"expected scalar type {_scalar_name(A.dtype)} but found {_scalar_name(out.dtype)}")
    name = "linalg.solve_triangular"
    _check_matrix(A, name, square=True)
    _check_dtype(A, name, "triangular_solve_cpu", False)
    n = A.shape[-1]
    if B.dim() < 2 or (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        shape_b = f"{B.shape[-2]}x{B.shape[-1]}" if B.dim() >= 2 else f"{B.shape[-1]}"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {shape_b})")
    if B.dtype != A.dtype:
        B = B.to(A.dtype)  # as PyTorch: the result takes A's dtype
    A2, B2 = _broadcast_batch(A, B)
    return _write_out(out, _ag._tri_solve(A2, B2, upper, left, unitriangular))


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):  # noqa: N803
    """torch.triangular_solve: (X, A) with op(A) X = b."""
    _deprecated(
        "triangular_solve",
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
        "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
        "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).",
    )
    for t, what in ((b, "b"), (A, "A")):
        if t.dim() < 2:
            raise RuntimeError(
                f"torch.triangular_solve: Expected {what} to have at least 2 dimensions, but it has {t.dim()} "
                "dimensions instead"
            )
    if b.dtype != A.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_type_name(b)} and A of type "
            f"{_type_name(A)} instead."
        )
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for triangular_solve: each A matrix is {A.shape[-1]} by {A.shape[-1]} but "
            f"each b matrix is {b.shape[-2]} by {b.shape[-1]}"
        )

    def solve(b, A):  # noqa: N803
        M = A.mT if transpose else A
        return solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular), A.clone()

    # one node on (b, A) for both results, as PyTorch's (TriangularSolveBackward0)
    return _write_out(out, _triangular_solve_t(*_ag.named("TriangularSolveBackward0", solve, b, A)))


# ---- QR, Householder ---------------------------------------------------------------------------


def qr(A, mode="reduced", *, out=None):  # noqa: N803
    """(Q, R) with A = Q R; mode 'reduced', 'complete' or 'r' (Q empty)."""
    _no_grad_out(out, "linalg_qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    _check_matrix(A, "linalg.qr")
    _check_dtype(A, "linalg.qr", "geqrf_cpu", True)
    Q, R = _ag.Qr.apply(A, mode)
    return _write_out(out, _qr_t(Q, R))


def _top_qr(input, some=True, *, out=None):  # noqa: A002
    _deprecated(
        "qr",
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
        "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
        "Q, R = torch.qr(A, some)\nshould be replaced with\n"
        "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
    )
    return _write_out(out, _qr_top_t(*qr(input, "reduced" if some else "complete")))


def geqrf(input, *, out=None):  # noqa: A002
    """LAPACK's compact QR: (a, tau)."""
    _check_dtype(input, "geqrf", "geqrf_cpu", False)
    _check_matrix(input, "torch.geqrf")
    if _needs_grad(input):
        return _write_out(out, _geqrf_t(*_ag.Geqrf.apply(input)))
    return _write_out(out, _geqrf_t(*_F._linalg_lapack_geqrf(input)))


def householder_product(input, tau, *, out=None):  # noqa: A002
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T."""
    _no_grad_out(out, "linalg_householder_product", input, tau)
    A = input
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to {tau.dim()} "
            f"and input.ndim is equal to {A.dim()}"
        )
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {_type_name(tau)} does not match input dtype {_type_name(A)}")
    _check_dtype(A, name, "orgqr_cpu", False)
    if not _needs_grad(A, tau):
        return _write_out(out, _F._linalg_lapack_orgqr(A, tau))
    # one node on (input, tau), as PyTorch's (LinalgHouseholderProductBackward0)
    return _write_out(
        out,
        _ag.named(
            "LinalgHouseholderProductBackward0", _ag.householder_composite, A, tau, exact=_F._linalg_lapack_orgqr
        ),
    )


def orgqr(input, tau):  # noqa: A002
    return householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):  # noqa: A002
    """op(Q) C or C op(Q) with Q the Householder product of (input, tau)."""
    from ember._sparse_coo import _size_error

    for t, what in ((input, "input"), (other, "other")):
        if t.dim() < 2:
            raise RuntimeError(f"torch.ormqr: {what} must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.dim() == 0:
        raise _size_error(tau, -1)
    if tau.shape[-1] != builtins.min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(
            "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to "
            f"{tau.dim()} and input.ndim is equal to {input.dim()}"
        )
    if other.dim() != input.dim():
        raise RuntimeError(
            "torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim equal "
            f"to {other.dim()} and input.ndim is equal to {input.dim()}"
        )
    _check_dtype(input, "ormqr", "ormqr_cpu", False)
    if _needs_grad(input, tau, other):

        def apply_q(input, tau, other):  # noqa: A002
            m = input.shape[-2]
            Q = _ag.householder_composite(
                ember.cat([input, input.new_zeros(*input.shape[:-1], m - input.shape[-1])], -1)
                if input.shape[-1] < m
                else input[..., :, :m],
                tau,
            )
            Qop = Q.mH if transpose else Q
            return Qop @ other if left else other @ Qop

        # one node on (input, tau, other), as PyTorch's (OrmqrBackward0)
        exact = lambda *args: _F._linalg_lapack_ormqr(*args, left, transpose)  # noqa: E731 - LAPACK's values
        return _write_out(out, _ag.named("OrmqrBackward0", apply_q, input, tau, other, exact=exact))
    return _write_out(out, _F._linalg_lapack_ormqr(input, tau, other, left, transpose))


# ---- symmetric eigenproblem ------------------------------------------------------------------------


def _eigh_impl(A, UPLO, name, compute_v):  # noqa: N803
    _check_matrix(A, "linalg.eigh", square=True)  # eigvalsh's checks are eigh's, named so
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_dtype(A, name, "linalg_eigh_cpu", False)
    if compute_v or _needs_grad(A):
        w, V, info = _ag.Eigh.apply(A, UPLO == "U")
    else:
        w, V, info = _F._linalg_lapack_syevd(A, UPLO == "U", False)
    _raise_info(
        info,
        name,
        lambda c: (
            "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
            f"repeated eigenvalues (error code: {c})."
        ),
    )
    return w, V


def eigh(input, UPLO="L", *, out=None):  # noqa: A002, N803
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    _no_grad_out(out, "_linalg_eigh", input)
    return _write_out(out, _eigh_t(*_eigh_impl(input, UPLO, "linalg.eigh", True)))


def eigvalsh(input, UPLO="L", *, out=None):  # noqa: A002, N803
    _no_grad_out(out, "_linalg_eigh", input)
    return _write_out(out, _eigh_impl(input, UPLO, "linalg.eigvalsh", False)[0])


# ---- SVD ---------------------------------------------------------------------------------------


def _svd_impl(A, full_matrices, compute_uv, name="linalg.svd"):  # noqa: N803
    _check_matrix(A, name)
    _check_dtype(A, name, "linalg_svd_cpu", True)
    if compute_uv or _needs_grad(A):
        U, S, Vh, info = _ag.Svd.apply(A, full_matrices)
    else:
        U, S, Vh, info = _F._linalg_lapack_gesdd(A, False, False)
    # As PyTorch: gesdd's info -4 is a NaN in the input (an inf gives NaNs back).
    _raise_info(
        info,
        name,
        lambda c: (
            "The algorithm failed to converge because the input matrix contained non-finite values."
            if c == -4
            else "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
            f"repeated singular values (error code: {c})."
        ),
    )
    return U, S, Vh


def _check_driver(driver, name):
    if driver is not None:
        raise RuntimeError(
            f"{name}: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend."
        )


def svd(A, full_matrices=True, *, driver=None, out=None):  # noqa: N803
    """(U, S, Vh) with A = U diag(S) Vh."""
    _no_grad_out(out, "_linalg_svd", A)
    _check_driver(driver, "torch.linalg.svd")
    return _write_out(out, _svd_t(*_svd_impl(A, full_matrices, True)))


def svdvals(A, *, driver=None, out=None):  # noqa: N803
    """Singular values, descending."""
    _no_grad_out(out, "_linalg_svd", A)
    _check_driver(driver, "torch.linalg.svdvals")
    return _write_out(out, _svd_impl(A, False, False)[1])


def _top_svd(input, some=True, compute_uv=True, *, out=None):  # noqa: A002
    U, S, Vh = _svd_impl(input, not some, True)
    V = Vh.mH
    if not compute_uv:
        U, V = ember.zeros_like(U), ember.zeros_like(V)
    return _write_out(out, _svd_top_t(U, S, V))


# ---- least squares, pseudo-inverse, rank ----------------------------------------------------------


class _Lstsq(ember.autograd.Function):
    """lstsq through LAPACK forward; backward is that of pinv(A) @ B."""

    _jvp_from_backward = True  # forward-mode AD differentiates backward

    @staticmethod
    def forward(ctx, A, B, rcond, driver):
        X, rank, sv, info = _F._linalg_lapack_gels(A, B, rcond, driver)
        ctx.save_for_backward(A, B)
        ctx.mark_non_differentiable(rank, sv, info)
        return X, rank, sv, info

    @staticmethod
    def backward(ctx, gX, _g1, _g2, _g3):
        # PyTorch's: pinv's gradient from gX B^H, and pinv(A)^H gX.
        A, B = ctx.saved_tensors
        P = pinv(A)
        gA = _ag.pinv_backward(gX @ B.mH, P, A) if ctx.needs_input_grad[0] else None
        gB = P.mH @ gX if ctx.needs_input_grad[1] else None
        return gA, gB, None, None


_ag._node_name(_Lstsq, "LinalgLstsqBackward0")


def _broadcast_sizes(a, b):
    """The broadcast of two shapes, with PyTorch's error for sizes that do not match."""
    n = builtins.max(len(a), len(b))
    shape = []
    for i in builtins.range(n):
        sa = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        sb = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton dimension {i}"
            )
        shape.append(builtins.max(sa, sb) if sa != 1 else sb)
    return tuple(shape)


def lstsq(input, b, rcond=None, *, driver=None, out=None):  # noqa: A002
    """The least-squares solution of A X = B (LAPACK gelsy by default)."""
    _no_grad_out(out, "linalg_lstsq", input, b)
    return _write_out(out, _lstsq(input, b, rcond, driver))


def _lstsq(A, B, rcond, driver):  # noqa: N803
    name = "torch.linalg.lstsq"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if not (A.dim() >= B.dim() and A.dim() - B.dim() <= 1):
        raise RuntimeError(
            f"{name}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"
        )
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected input and other to have the same dtype, but got input's dtype {_type_name(A)} and "
            f"other's dtype {_type_name(B)}"
        )
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if B.shape[-1 if vector else -2] != A.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2)")
    if A.dtype not in _LAPACK and rcond is None:
        # PyTorch's default rcond reads the epsilon of float or double only.
        raise RuntimeError("This function doesn't handle types other than float and double")
    _check_dtype(A, name, "linalg_lstsq", True)
    m, n = A.shape[-2], A.shape[-1]
    if rcond is None:
        rcond = float(ember.finfo(_real_dtype(A.dtype)).eps) * builtins.max(m, n)
    _broadcast_sizes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2]))
    A2, B2 = _broadcast_batch(A, Bm)
    X, rank, sv, info = _Lstsq.apply(A2, B2, float(rcond), driver)
    found = _first_error(info)
    if found is not None and found[1] < 0:
        # LAPACK refuses the input (a NaN in it): PyTorch's internal assert
        raise RuntimeError(
            'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp":1613, '
            f"please report a bug to PyTorch. {name}: Argument {-found[1]} has illegal value. Most certainly there is "
            "a bug in the implementation calling the backend library."
        )
    if driver == "gels":
        _raise_info(
            info,
            name,
            lambda c: (
                "The least squares solution could not be computed because the input matrix does not have full "
                f"rank (error code: {c})."
            ),
        )
    batch = tuple(A2.shape[:-2])
    residuals = ember.empty(0, dtype=_real_dtype(A.dtype))
    if m > n and driver != "gelsy":
        full = driver == "gels" or bool((rank == n).all())
        if full:
            r = A2 @ X - B2
            residuals = (r.abs() ** 2 if r.is_complex() else r**2).sum(-2)
            if vector:
                residuals = residuals.squeeze(-1)
    rank = rank if driver != "gels" else ember.empty(0, dtype=ember.int64)
    if driver == "gels":
        rank = ember.empty(0, dtype=ember.int64)
    elif rank.shape != batch:
        rank = rank.reshape(batch)
    sv = sv if driver in ("gelsd", "gelss") else ember.empty(0, dtype=_real_dtype(A.dtype))
    return _lstsq_t(X.squeeze(-1) if vector else X, residuals, rank, sv)


def _tolerances(S_max, atol, rtol, like, default_rtol):
    if atol is None:
        atol_t = ember.zeros((), dtype=like.dtype)
    else:
        atol_t = atol if isinstance(atol, ember.Tensor) else ember.tensor(float(atol), dtype=like.dtype)
    if rtol is None:
        rtol_t = (
            ember.zeros((), dtype=like.dtype)
            if atol is not None and (not isinstance(atol, ember.Tensor) or True) and default_rtol is None
            else ember.tensor(default_rtol, dtype=like.dtype)
        )
    else:
        rtol_t = rtol if isinstance(rtol, ember.Tensor) else ember.tensor(float(rtol), dtype=like.dtype)
    return ember.maximum(atol_t.unsqueeze(-1) if atol_t.dim() else atol_t, rtol_t * S_max)


def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):  # noqa: A002
    """The Moore-Penrose pseudo-inverse, from the SVD (or eigh when hermitian)."""
    _no_grad_out(out, "linalg_pinv", input, rcond, atol, rtol)
    return _copy_out(out, _pinv_checked(input, rcond, hermitian, atol, rtol))


def _pinv_checked(A, rcond, hermitian, atol, rtol):  # noqa: N803
    if rcond is not None:
        # PyTorch's older form: rcond is rtol, with no absolute tolerance.
        atol, rtol = (ember.zeros((), dtype=rcond.dtype) if isinstance(rcond, ember.Tensor) else 0.0), rcond
    if A.dim() < 2 or A.dtype not in _LAPACK or not (ember.is_grad_enabled() and A.requires_grad):
        return _pinv(A, atol, rtol, hermitian)
    return _ag.Pinv.apply(A, lambda a: _pinv(a, atol, rtol, hermitian))


def _pinv(A, atol, rtol, hermitian):  # noqa: N803
    if A.dim() < 2 or A.dtype not in _LAPACK:
        shape = ", ".join(str(s) for s in A.shape)
        raise RuntimeError(
            f"linalg.pinv({_type_name(A)}{{[{shape}]}}): expected a tensor with 2 or more dimensions of float, "
            "double, cfloat or cdouble types"
        )
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0:
        # PyTorch returns the empty result before the tolerances broadcast.
        return ember.empty(*A.shape[:-2], n, m, dtype=A.dtype)
    default_rtol = (
        None if atol is not None and rtol is None else float(ember.finfo(_real_dtype(A.dtype)).eps) * builtins.max(m, n)
    )
    if rtol is not None:
        default_rtol = None
    if hermitian:
        w, V = eigh(A)
        S = w.abs()
    else:
        U, S, Vh = svd(A, full_matrices=False)
    if S.numel():
        smax = S.amax(-1, keepdim=True)
    else:
        smax = ember.zeros(*S.shape[:-1], 1, dtype=S.dtype)
    tol = _pinv_tol(smax, atol, rtol, default_rtol, S)
    keep = S > tol
    S_inv = ember.where(keep, 1 / ember.where(keep, S if not hermitian else w, ember.ones_like(S)), ember.zeros_like(S))
    if hermitian:
        return (V * S_inv.unsqueeze(-2)) @ V.mH
    return (Vh.mH * S_inv.unsqueeze(-2)) @ U.mH


def _pinv_tol(smax, atol, rtol, default_rtol, like):
    def as_t(x):
        t = x if isinstance(x, ember.Tensor) else ember.tensor(float(x), dtype=like.dtype)
        return t.unsqueeze(-1) if t.dim() else t

    parts = []
    if atol is not None:
        parts.append(as_t(atol))
    r = rtol if rtol is not None else default_rtol
    if r is not None:
        parts.append(as_t(r) * smax)
    if not parts:
        return ember.zeros_like(smax)
    return parts[0] if len(parts) == 1 else ember.maximum(parts[0], parts[1])


def pinverse(input, rcond=1e-15):  # noqa: A002
    return pinv(input, rtol=rcond)


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):  # noqa: A002
    """The number of singular values above the tolerance."""
    return _copy_out(out, _matrix_rank(input, tol, hermitian, atol, rtol))


def _matrix_rank(A, tol, hermitian, atol, rtol):  # noqa: N803
    if tol is not None:
        atol, rtol = tol, 0.0
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype not in _LAPACK and rtol is None:
        # PyTorch's default rtol reads the epsilon of float or double only.
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.numel() == 0:  # PyTorch's zeros of the batch shape, whatever the tolerances' shapes
        return ember.zeros(A.shape[:-2], dtype=ember.int64, device=A.device)
    if hermitian:
        _check_matrix(A, "linalg.eigvalsh", square=True)
        S = eigvalsh(A).abs()
    else:
        S = _svd_impl(A, False, False, "linalg.svd")[1]
    m, n = A.shape[-2], A.shape[-1]
    default_rtol = (
        None if atol is not None and rtol is None else float(ember.finfo(_real_dtype(A.dtype)).eps) * builtins.max(m, n)
    )
    if rtol is not None:
        default_rtol = None
    smax = S.amax(-1, keepdim=True) if S.numel() else ember.zeros(*S.shape[:-1], 1, dtype=S.dtype)
    tol_t = _pinv_tol(smax, atol, rtol, default_rtol, S)
    return (S > tol_t).sum(-1)


# ---- norms, condition number -----------------------------------------------------------------------


def _as_dims(dim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return [dim]
    return list(dim)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The ord-norm of input over dim (all dims when None), as a vector."""
    return _F.linalg_vector_norm(input, ord, dim, keepdim, dtype=dtype, out=out)


def _norm_out(out, result, name):
    """out= of matrix_norm and norm: PyTorch's dtype check, then a copy."""
    if out is not None and out.dtype != result.dtype:
        raise RuntimeError(f"{name} expected out tensor dtype {_type_name(result)} but got: {_type_name(out)}")
    return _copy_out(out, result)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """Matrix norms over the two dims in dim: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf."""
    return _norm_out(out, _matrix_norm(input, ord, dim, keepdim, dtype), "linalg.matrix_norm")


def _matrix_norm(A, ord, dim, keepdim, dtype):  # noqa: A002, N803
    if ord not in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = _as_dims(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    nd = A.dim()
    d0, d1 = (_argcheck.wrap_dim(d, nd) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got {_type_name(A)}"
        )
    if ord == "fro":
        r = vector_norm(A, 2, dim, keepdim, dtype=dtype)
    elif ord in (1, -1, float("inf"), float("-inf")):
        # 1-norms: largest column sum; inf-norms: largest row sum (min for the negatives).
        summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
        if not keepdim and summed < other:
            other -= 1
        s = vector_norm(A, 1, summed, keepdim, dtype=dtype)
        r = s.amax(other, keepdim=keepdim) if ord > 0 else s.amin(other, keepdim=keepdim)
    elif ord in ("nuc", 2, -2):
        if A.dtype not in _LAPACK:
            _check_dtype(A, "linalg.matrix_norm", "linalg_svd_cpu", True)
        B = A if dtype is None else A.to(dtype)
        rest = [i for i in builtins.range(nd) if i not in (d0, d1)]
        B = B.permute(*rest, d0, d1)
        S = svdvals(B)
        if S.shape[-1] == 0 or ord == "nuc":
            r = S.sum(-1, keepdim=keepdim)
        else:
            r = S.amax(-1, keepdim=keepdim) if ord == 2 else S.amin(-1, keepdim=keepdim)
        if keepdim:  # as PyTorch: the reduced dims moved back where they were
            order = rest + [d0, d1]
            r = r.unsqueeze(-1).permute([order.index(i) for i in builtins.range(nd)])
    return r


def norm(input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):  # noqa: A002
    """torch.linalg.norm: a vector norm for 1-D inputs or int dim, a matrix
    norm for 2-D inputs or a 2-tuple dim (the 2-norm of all elements when
    both ord and dim are None); a string ord is always a matrix norm."""
    return _norm_out(out, _norm(input, ord, dim, keepdim, dtype), "linalg.norm")


def _norm(A, ord, dim, keepdim, dtype):  # noqa: A002, N803
    dims = _as_dims(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}")
    if dims is None and ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
        )
    if isinstance(ord, str):
        return _matrix_norm(A, ord, (-2, -1) if dims is None else dims, keepdim, dtype)
    if dims is not None:
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return _matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.dim() == 2:
        return _matrix_norm(A, ord, (-2, -1), keepdim, dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")


def cond(input, p=None, *, out=None):  # noqa: A002
    """The condition number in the p-norm (2-norm when None)."""
    return _copy_out(out, _cond(input, p))


def _cond(A, p):  # noqa: N803
    if isinstance(p, str):
        # PyTorch checks the shape first for a string p, naming it
        _check_matrix(A, f"linalg.cond(ord={p})", square=True)
    if p not in (None, 2, -2, "fro", "nuc", 1, -1, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        S = svdvals(A)
        if S.shape[-1] == 0:
            return S.sum(-1)
        # the extreme singular values as one-element slices, divided, then squeezed (as PyTorch)
        high, low = S[..., :1], S[..., -1:]
        return (low / high if p == -2 else high / low).squeeze(-1)
    shown = p if isinstance(p, str) or isinstance(p, int) or math.isinf(p) else f"{p:f}"
    _check_matrix(A, f"linalg.cond(ord={shown})", square=True)
    if A.numel() == 0:
        return ember.zeros(A.shape[:-2], dtype=A.real.dtype if A.is_complex() else A.dtype)
    if p == "nuc":
        # the sums of the singular values and of their reciprocals, as PyTorch (no inverse)
        S = svdvals(A)
        return S.sum(-1) * S.reciprocal().sum(-1)
    # the inverse of a singular matrix taken as infinite, and 0 * inf as inf
    Ainv, info = _inv_impl(A, "linalg.inv", False)
    Ainv = Ainv.masked_fill((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
    return (matrix_norm(A, p) * matrix_norm(Ainv, p)).nan_to_num(math.inf, math.inf, -math.inf)


# ---- products, powers, exponential ----------------------------------------------------------------


def matmul(input, other, *, out=None):  # noqa: A002
    if out is not None:
        return _F.matmul(input, other, out=out)
    return _F.matmul(input, other)


def vecdot(x, y, *, dim=-1, out=None):
    """Dot products of conj(x) and y along dim, broadcasting the other dims."""
    _no_grad_out(out, "vdot" if x.dim() == 1 and y.dim() == 1 else "sum", x, y)
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got {_type_name(x)}")
    if x.dtype != y.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{_type_name(x)} and y of type {_type_name(y)} instead"
        )
    r = (x.conj() * y).sum(dim)
    if out is not None and out.dtype != r.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected out of dtype{_type_name(r)} but found {_type_name(out)}")
    return _write_out(out, r)


def matrix_power(input, n, *, out=None):  # noqa: A002
    """A^n by repeated squaring (n < 0: the inverse's power)."""
    A = input
    _check_matrix(A, "linalg.matrix_power", square=True)
    if n == 0:  # as PyTorch: the identity copied into a clone of A (CopyBackwards, a zero gradient)
        identity = _eye(A.shape[-1], A).expand(*A.shape)
        if out is not None:
            return _copy_out(out, identity)
        return A.clone(memory_format=ember.contiguous_format).copy_(identity)
    if n == 1:
        return _copy_out(out, A) if out is not None else A.clone(memory_format=ember.contiguous_format)
    if n == -1:
        return inv(A, out=out)
    if n < 0:
        A = inv(A)
        n = -n
    _no_grad_out(out, "matmul", A)
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _write_out(out, result)


def multi_dot(tensors, *, out=None):
    """The product of matrices (the first and last may be vectors), in the cheapest order."""
    from ember._out_forms import _cpp_name

    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, (t, which) in enumerate(((tensors[0], "first"), (tensors[-1], "last"))):
        if t.dim() not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.dim()}D")
    for i in builtins.range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in builtins.range(1, n):
        if tensors[i].dtype != tensors[0].dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is {_cpp_name(tensors[0].dtype)} "
                f"and tensor {i} {_cpp_name(tensors[i].dtype)}"
            )
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in builtins.range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    if out is not None and out.dtype != tensors[0].dtype:
        raise RuntimeError(
            f"multi_dot(): expected out tensor to have dtype {_cpp_name(tensors[0].dtype)} but got "
            f"{_cpp_name(out.dtype)}"
        )
    _no_grad_out(out, "mm", *tensors)
    dims = [mats[0].shape[0]] + [t.shape[1] for t in mats]
    cost = [[0] * n for _ in builtins.range(n)]
    split = [[0] * n for _ in builtins.range(n)]
    for length in builtins.range(1, n):
        for i in builtins.range(n - length):
            j = i + length
            cost[i][j] = None
            for k in builtins.range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    if n == 3:  # as PyTorch's rule for three: (AB)C unless A(BC) is strictly cheaper
        a, b, c, d = dims
        split[0][2] = 0 if a * c * (b + d) > b * d * (a + c) else 1

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k) @ product(k + 1, j)

    # the product viewed in the result's shape (a view even when no vector was given, as PyTorch's)
    shape = ([] if first_vec else [dims[0]]) + ([] if last_vec else [dims[-1]])
    return _write_out(out, product(0, n - 1).view(shape))


def chain_matmul(*matrices, out=None):
    _deprecated(
        "chain_matmul",
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use torch.linalg.multi_dot "
        "instead, which accepts a list of two or more tensors rather than multiple parameters.",
    )
    _argcheck.tensor_elements(matrices, 0)
    if len(matrices) == 1:
        if matrices[0].dim() != 2:
            raise RuntimeError(f"Tensor dimension is {matrices[0].dim()}, expected 2 instead.")
        return _write_out(out, matrices[0].clone())
    return multi_dot(list(matrices), out=out)


def matrix_exp(input):  # noqa: A002
    """e^A, as PyTorch computes it (Note [matrix_exp] in ember._matrix_exp)."""
    A = input
    _check_matrix(A, "linalg.matrix_exp", square=True)
    _check_dtype(A, "linalg.matrix_exp", "linalg_matrix_exp", True)
    return _matrix_exp.matrix_exp(A)


# ---- LDL ------------------------------------------------------------------------------------------


def _ldl_errors(info, name):
    found = _first_error(info)
    if found is not None:
        # PyTorch's internal assert for sytrf's info > 0 (a zero pivot)
        raise RuntimeError(
            'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp":1642, '
            f"please report a bug to PyTorch. {name}: Unknown error code: {found[1]}."
        )


def _ldl_factor_ex(A, hermitian, check_errors, name):  # noqa: N803
    _check_matrix(A, name, square=True)
    _check_dtype(A, name, "ldl_factor_kernel_cpu", True)
    LD, piv, info = _F._linalg_lapack_sytrf(A, False, bool(hermitian))
    LD = LD.mT.triu().mT  # the lower triangle, column-major as PyTorch's
    if check_errors:
        _ldl_errors(info, name)
    # as PyTorch: LD requires grad, and has no derivative
    return _not_implemented("linalg_ldl_factor_ex", LD, A), piv, info


def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):  # noqa: A002
    result = _ldl_factor_ex_t(*_ldl_factor_ex(input, hermitian, check_errors, "torch.linalg.ldl_factor_ex"))
    return _ni_out(out, result, "linalg_ldl_factor_ex", input)


def ldl_factor(input, *, hermitian=False, out=None):  # noqa: A002
    """The compact LDL^T factorization (LD, pivots) of a symmetric matrix (Bunch-Kaufman)."""
    LD, piv, info = _ldl_factor_ex(input, hermitian, False, "torch.linalg.ldl_factor_ex")
    _ldl_errors(info, "torch.linalg.ldl_factor")
    return _ni_out(out, _ldl_factor_t(LD, piv), "linalg_ldl_factor_ex", input)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):  # noqa: N803
    """Solves A X = B with a factorization from ldl_factor."""
    name = "torch.linalg.ldl_solve"
    _check_matrix(LD, name, square=True)
    LD2, B2 = _broadcast_batch(LD, B)
    piv2 = pivots.expand(*LD2.shape[:-2], pivots.shape[-1]).contiguous()
    X = _F._linalg_lapack_sytrs(LD2.detach(), piv2, B2.detach(), False, bool(hermitian))
    return _ni_out(out, _not_implemented("linalg_ldl_solve", X, LD, B), "linalg_ldl_solve", LD, B)


# ---- general eigenproblem -------------------------------------------------------------------------


def _eig_impl(A, name, compute_v):  # noqa: N803
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(A)}")
    _check_matrix(A, name, square=True)
    _check_dtype(A, name, "linalg_eig_out_cpu", False)
    if A.numel() and not bool(ember.isfinite(A).all()):
        raise RuntimeError(f"torch.{name}: input tensor should not contain infs or NaNs.")
    if compute_v or _needs_grad(A):
        w, V, info = _ag.Eig.apply(A)
    else:
        w, V, info = _ag.eig_from_geev(A, False)
    _raise_info(
        info,
        name,
        lambda c: (
            f"The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
            f"repeated eigenvalues (error code: {c})."
        ),
    )
    return w, V


def eig(input, *, out=None):  # noqa: A002
    """Eigenvalues and eigenvectors of general matrices: complex results (LAPACK geev)."""
    _no_grad_out(out, "linalg_eig", input)
    return _write_out(out, _eig_t(*_eig_impl(input, "linalg.eig", True)))


def eigvals(input, *, out=None):  # noqa: A002
    """Eigenvalues of general matrices, complex."""
    w = _eig_impl(input, "linalg.eigvals", False)[0]
    if out is None:
        return w
    if not ember.can_cast(w.dtype, out.dtype):
        raise RuntimeError(
            f"torch.linalg.eigvals: Expected eigenvalues to be safely castable from {_type_name(w)} dtype, but got "
            f"eigenvalues with dtype {_type_name(out)}"
        )
    return _ni_out(out, w, "linalg_eig", input)


# ---- tensors, helpers --------------------------------------------------------------------------------


def tensorinv(input, ind=2, *, out=None):  # noqa: A002
    """The inverse of A seen as a matrix of prod(shape[:ind]) rows."""
    A = input
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows = math.prod(A.shape[:ind])
    cols = math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
            f"{cols} != {rows}"
        )
    return _copy_out(out, _inv_impl(A.reshape(rows, cols), "linalg.inv", True, "inv")[0].reshape(out_shape))


def tensorsolve(input, other, dims=None, *, out=None):  # noqa: A002
    """X with tensordot(A, X, X.dim()) = B."""
    A, B = input, other
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        rest = [d for d in builtins.range(nd) if d not in dims]
        A = A.permute(*rest, *dims)
    x_shape = tuple(A.shape[B.dim() :])
    rows = B.numel()
    cols = math.prod(x_shape)
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
            f"but got {cols} != {rows}"
        )
    return _copy_out(out, solve(A.reshape(rows, cols), B.reshape(rows)).reshape(x_shape))


def cross(input, other, *, dim=-1, out=None):  # noqa: A002
    """The cross product of 3-vectors along dim, with PyTorch's checks in its
    order: ranks, the lengths along dim, the broadcast, out's dtype, then the
    kernel's dtype (bool refused) and other's."""
    from ember._ops_math import _broadcast_shape, _scalar_name
    from ember._out_forms import _cpp_name
    from ember._sparse_coo import _size_error

    _no_grad_out(out, "linalg_cross", input, other)
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dim() == 0 or not -input.dim() <= dim < input.dim():
        raise _size_error(input, dim)
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and {other.shape[dim]}"
        )
    _broadcast_shape(tuple(input.shape), tuple(other.shape))
    if out is not None and out.dtype != input.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp_name(input.dtype)}, but got {_cpp_name(out.dtype)} instead"
        )
    if input.dtype == ember.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(other.dtype)}")
    c = _F.linalg_cross(input, other, dim=dim)
    return _write_out(out, c)


def vander(x, *, N=None):  # noqa: N803
    """Powers x^0 ... x^(N-1) in the last dim."""
    if x.dtype in (ember.bool, ember.float16, ember.bfloat16):
        raise RuntimeError(
            f"linalg.vander supports floating point, complex, and integer tensors, but got {_type_name(x)}"
        )
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dim() < 1:
        x = x.reshape(1)  # PyTorch takes a number as a one-element vector
    ones = ember.ones_like(x).unsqueeze(-1)
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return ember.cat([ones, powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):  # noqa: N803
    return A.diagonal(offset, dim1, dim2)


def _torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002
    """torch.norm: vector norms over dim (or all dims), 'fro' as the 2-norm."""
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        if dim is None:
            dim = list(builtins.range(input.dim()))
        return matrix_norm(input, p, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)


# torch.* names of the functions above (torch.slogdet and friends have their own result names).
TOP_LEVEL = {
    "det": det,
    "logdet": logdet,
    "slogdet": _top_slogdet,
    "inverse": inv,
    "cholesky": _top_cholesky,
    "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse,
    "qr": _top_qr,
    "svd": _top_svd,
    "lu_unpack": lu_unpack,
    "lu_solve": None,
    "triangular_solve": triangular_solve,
    "pinverse": pinverse,
    "matrix_exp": matrix_exp,
    "matrix_power": matrix_power,
    "geqrf": geqrf,
    "orgqr": orgqr,
    "ormqr": ormqr,
    "chain_matmul": chain_matmul,
}


def _top_lu_solve(b, LU_data, LU_pivots, *, out=None):  # noqa: N803
    _deprecated(
        "lu_solve",
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
        "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
        "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
    )
    return lu_solve(LU_data, LU_pivots, b, out=out)


TOP_LEVEL["lu_solve"] = _top_lu_solve


def _top_lu(A, pivot=True, get_infos=False, out=None):  # noqa: N803
    """torch.lu: (LU, pivots) or (LU, pivots, infos)."""
    _deprecated(
        "lu",
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed "
        "in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
        "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
        "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
        "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)",
    )
    # PyTorch's Python wrapper reads get_infos's truth value before its
    # binding checks the arguments (a tensor of several elements raises there).
    get_infos = bool(get_infos)
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    result = (LU, piv, info) if get_infos else (LU, piv)
    return _write_out(out, result) if out is not None else result


TOP_LEVEL["lu"] = _top_lu


def _top_cross(input, other, dim=None, *, out=None):  # noqa: A002
    """torch.cross: dim None is the first dim of size 3."""
    if dim is None:
        _deprecated(
            "cross",
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
            "The default value of dim will change to agree with that of linalg.cross in a future release.",
        )
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return cross(input, other, dim=dim, out=out)


TOP_LEVEL["cross"] = _top_cross

# Tensor methods of the same names: tensor.det() is torch.det(tensor).
_METHODS = (
    "det",
    "logdet",
    "slogdet",
    "inverse",
    "cholesky",
    "cholesky_solve",
    "cholesky_inverse",
    "qr",
    "svd",
    "lu",
    "lu_solve",
    "triangular_solve",
    "pinverse",
    "matrix_exp",
    "matrix_power",
    "geqrf",
    "orgqr",
    "ormqr",
    "cross",
)


def _install_methods(tensor_cls):
    for name in _METHODS:
        fn = TOP_LEVEL[name]

        def method(self, *args, _fn=fn, **kwargs):
            return _fn(self, *args, **kwargs)

        method.__name__ = method.__qualname__ = name
        setattr(tensor_cls, name, method)


def _check_python_named():
    """norm and lu are C++ bindings in torch.linalg, though torch.norm and
    torch.lu are Python (which _argtypes.install leaves unchecked by name)."""
    from ember import _argtypes, _signatures

    for name in ("norm", "lu"):
        guarded = _argtypes._guard(globals()[name], name, False, _signatures.LINALG[name])
        guarded.__name__ = "linalg_" + name
        globals()[name] = guarded


_check_python_named()
