"""ember.sparse: operations on sparse COO tensors (see ember/_sparse_coo.py)."""

from __future__ import annotations

from ember._sparse_coo import _mm, _sparse_sum

__all__ = ["mm", "sum", "addmm"]


def mm(mat1, mat2):
    """Matrix product where ``mat1`` (or ``mat2``) is sparse; the result is dense
    unless both are sparse."""
    return _mm(mat1, mat2)


def sum(input, dim=None, dtype=None):  # noqa: A001 - PyTorch's name
    """Sum of a sparse tensor: a dense scalar without ``dim``; over sparse dims
    the result stays sparse."""
    return _sparse_sum(input, dim, dtype=dtype)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    return mat * beta + _mm(mat1, mat2) * alpha
