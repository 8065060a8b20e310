"""ember.linalg's building blocks: result types, argument checks, PyTorch's
errors and messages, and the out= rules shared by its functions."""

from __future__ import annotations

import builtins
import collections

import ember
from ember import _C
from ember import _linalg_autograd as _ag
from ember._ops_math import _SCALAR_NAMES
from ember._warnings import warn_once


class LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite, or an
    algorithm does not converge."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "ember._C"
_C._LinAlgError = LinAlgError


# ---- results, checks -------------------------------------------------------------------------------


def _named_tuple(name, fields):
    base = collections.namedtuple(name, fields)

    def __repr__(self):  # noqa: N807
        parts = ",".join(f"\n{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{name}({parts})"

    cls = type(name, (base,), {"__repr__": __repr__, "__slots__": ()})
    cls.__module__ = "torch.return_types"
    return cls


# The result type of each call with out= (PyTorch's linalg_qr_out and so on).
_OUT_TYPES = {}


def _return_type(name, fields):
    cls = _named_tuple(name, fields)
    _OUT_TYPES[cls] = _named_tuple(name + "_out", fields)
    return cls


_solve_ex_t = _return_type("linalg_solve_ex", ["result", "info"])
_inv_ex_t = _return_type("linalg_inv_ex", ["inverse", "info"])
_cholesky_ex_t = _return_type("linalg_cholesky_ex", ["L", "info"])
_slogdet_t = _return_type("linalg_slogdet", ["sign", "logabsdet"])
_slogdet_top_t = _return_type("slogdet", ["sign", "logabsdet"])
_qr_t = _return_type("linalg_qr", ["Q", "R"])
_qr_top_t = _return_type("qr", ["Q", "R"])
_eigh_t = _return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
_svd_t = _return_type("linalg_svd", ["U", "S", "Vh"])
_svd_top_t = _return_type("svd", ["U", "S", "V"])
_lstsq_t = _return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_lu_t = _return_type("linalg_lu", ["P", "L", "U"])
_lu_unpack_t = _return_type("lu_unpack", ["P", "L", "U"])
_lu_factor_t = _return_type("linalg_lu_factor", ["LU", "pivots"])
_lu_factor_ex_t = _return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_ldl_factor_t = _return_type("linalg_ldl_factor", ["LD", "pivots"])
_ldl_factor_ex_t = _return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_eig_t = _return_type("linalg_eig", ["eigenvalues", "eigenvectors"])
_geqrf_t = _return_type("geqrf", ["a", "tau"])
_triangular_solve_t = _return_type("triangular_solve", ["solution", "cloned_coefficient"])

_REAL = (ember.float32, ember.float64)
_LAPACK = (ember.float32, ember.float64, ember.complex64, ember.complex128)


def _real_dtype(dtype):
    """float32 for complex64, float64 for complex128; others unchanged."""
    return {ember.complex64: ember.float32, ember.complex128: ember.float64}.get(dtype, dtype)


def _type_name(t):
    """The dtype as PyTorch's kernels name it in messages (Float, ComplexDouble, ...)."""
    return _SCALAR_NAMES.get(str(t.dtype).split(".")[-1], str(t.dtype))


def _check_dtype(A, name, kernel, int_first=True):
    """float32/float64/complex64/complex128 only: PyTorch's message for integers, its kernel's for the rest."""
    if A.dtype in _LAPACK:
        return
    if int_first and not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(A)}")
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(A)}'")


def _check_square_input(A, name, kernel, low_precision=False, int_first=True):
    """PyTorch's order: the shape, then integer dtypes, then the kernel's dtypes."""
    _check_matrix(A, name, square=True)
    if int_first and not A.dtype.is_floating_point and not A.dtype.is_complex:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(A)}")
    if low_precision and A.dtype in (ember.float16, ember.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_type_name(A)}")
    _check_dtype(A, name, kernel, False)


def _check_matrix(A, name, square=False):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )


def _check_same_dtype(A, B, name):
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type {_type_name(A)} and B of type "
            f"{_type_name(B)} instead"
        )


def _first_error(info):
    """(batch index, code) of the first nonzero info, or None."""
    if info.numel() == 0:
        return None
    flat = info.reshape(-1).tolist()
    if not any(flat):
        return None
    for b, code in enumerate(flat):
        if code != 0:
            return b, code
    return None


def _raise_info(info, name, message):
    found = _first_error(info)
    if found is None:
        return
    b, code = found
    prefix = f"(Batch element {b}): " if info.dim() > 0 else ""
    raise LinAlgError(f"{name}: {prefix}{message(code)}")


def _singular(code):
    return (
        f"The diagonal element {code} is zero, the inversion could not be completed because the input matrix is "
        "singular."
    )


def _not_pd(code):
    return (
        "The factorization could not be completed because the input is not positive-definite (the leading minor "
        f"of order {code} is not positive-definite)."
    )


def _write_out(out, result):
    """Copies result into out (resized as PyTorch resizes it) and returns out."""
    if out is None:
        return result
    if isinstance(out, (tuple, list)):
        for o, r in zip(out, result):
            _write_out(o, r)
        kind = _OUT_TYPES.get(type(result))
        if kind is not None:
            return kind(*out)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if out.dtype != result.dtype:
        from ember._out_forms import _cpp_name

        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp_name(result.dtype)}, but got {_cpp_name(out.dtype)} instead"
        )
    # an exact copy through an out= operator, which resizes out as PyTorch does
    ember._ops_math._write(result, out)
    return out


def _no_grad_out(out, op, *tensors):
    """PyTorch's error for out= while an input requires grad (op: the kernel that refuses it)."""
    if out is not None and ember.is_grad_enabled():
        if builtins.any(isinstance(t, ember.Tensor) and t.requires_grad for t in tensors):
            raise RuntimeError(
                f"{op}(): functions with out=... arguments don't support automatic differentiation, but one of the "
                "arguments requires grad."
            )


def _copy_out(out, result):
    """out= of PyTorch's composites: result cast and copied into out (resized),
    which records CopyBackwards when result requires grad."""
    if out is None:
        return result
    ember._ops_math._write(result, out)
    if result.requires_grad and ember.is_grad_enabled():
        out.copy_(result)
    return out


class _NotImplemented(ember.autograd.Function):
    """An output PyTorch records without a derivative: backward raises its error."""

    @staticmethod
    def forward(ctx, op, x, *others):
        ctx.op = op
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError(f"derivative for aten::{ctx.op} is not implemented")


_ag._node_name(_NotImplemented, "NotImplemented")


def _not_implemented(op, x, *inputs):
    """x recorded as PyTorch records an output of `op`, which has no derivative."""
    if _needs_grad(*inputs):
        return _NotImplemented.apply(op, x, *inputs)
    return x


def _ni_out(out, result, op, *inputs):
    """out= of such an op: PyTorch's out (the first one) requires grad then, with no derivative."""
    r = _write_out(out, result)
    if out is None or not _needs_grad(*inputs):
        return r
    if isinstance(r, tuple):
        return type(r)(_not_implemented(op, r[0], *inputs), *r[1:])
    return _not_implemented(op, r, *inputs)


_broadcast_batch = _ag._broadcast_batch  # A and B expanded to their broadcast batch dims


def _eye(n, like):
    return ember.eye(n, dtype=like.dtype, device=like.device)


def _needs_grad(*ts):
    """Whether the differentiable path is needed: a gradient to record, or a
    tangent to carry (forward-mode AD)."""
    if ember.is_grad_enabled() and builtins.any(t is not None and t.requires_grad for t in ts):
        return True
    from ember.autograd.forward_ad import _is_dual

    return builtins.any(_is_dual(t) for t in ts)


def _deprecated(key, message):
    """PyTorch's deprecation warning, once per process."""
    warn_once(("linalg", key), message)
