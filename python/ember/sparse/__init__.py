"""ember.sparse: operations on sparse tensors (COO: ember/_sparse_coo.py;
CSR/CSC/BSR/BSC: ember/_sparse_compressed.py)."""

from __future__ import annotations

import warnings

from ember._sparse_coo import _addmm, _mm, _sparse_softmax, _sparse_sum

__all__ = ["mm", "sum", "addmm", "softmax", "log_softmax", "check_sparse_tensor_invariants"]


def _compressed(*xs):
    from ember._sparse_compressed import SparseCompressedTensor

    return any(isinstance(x, SparseCompressedTensor) for x in xs)


def mm(mat1, mat2):
    """Matrix product where ``mat1`` (or ``mat2``) is sparse; the result is dense
    unless both are sparse."""
    if _compressed(mat1, mat2):
        from ember._sparse_compressed import _mm as compressed_mm

        return compressed_mm(mat1, mat2, _masked=True)
    return _mm(mat1, mat2, "SparseAddmmBackward0")


def sum(input, dim=None, dtype=None):  # noqa: A001 - PyTorch's name
    """Sum of a sparse tensor: a dense scalar without ``dim``; over sparse dims
    the result stays sparse."""
    if _compressed(input):
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got {_layout_title(input)}")
    return _sparse_sum(input, dim, dtype=dtype)


def _layout_title(x):
    from ember._sparse_compressed import _layout_title as title

    return title(x.layout)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    if _compressed(mat1, mat2):
        return mat * beta + mm(mat1, mat2) * alpha
    return _addmm(mat, mat1, mat2, beta=beta, alpha=alpha, node="SparseAddmmBackward0")


def softmax(input, dim, *, dtype=None):  # noqa: A002 - PyTorch's name
    """Softmax over the specified elements along ``dim`` (the unspecified ones
    count as -inf): a sparse tensor of the same pattern, coalesced."""
    return _sparse_softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002 - PyTorch's name
    """Log-softmax over the specified elements along ``dim`` (see softmax)."""
    return _sparse_softmax(input, dim, dtype, log=True)


class check_sparse_tensor_invariants:  # noqa: N801 - PyTorch's name
    """Checks of the sparse layouts' invariants when tensors are made: a
    switch (``enable``/``disable``/``is_enabled``), a context manager and a
    decorator, off by default as in PyTorch."""

    _enabled = False
    _explicit = False  # set once the program opts in or out

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = check_sparse_tensor_invariants._explicit = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False
        check_sparse_tensor_invariants._explicit = True

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError(
                "This context manager instance is already activated. Use a different context manager instance "
                "for context nesting."
            )
        self.saved_state = self.is_enabled()
        check_sparse_tensor_invariants._enabled = self.state
        check_sparse_tensor_invariants._explicit = True

    def __exit__(self, type, value, traceback):  # noqa: A002
        check_sparse_tensor_invariants._enabled = self.saved_state
        self.saved_state = None

    def __call__(self, mth):
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)

        return test_mth


def _warn_once(key, message):
    from ember._warnings import warn_once

    warn_once(("sparse", key), message)


def _note_invariant_checks(check_invariants):
    """PyTorch's one warning when a factory's checks were left to the default."""
    if check_invariants is None and not check_sparse_tensor_invariants._explicit:
        _warn_once(
            "invariants",
            "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when operating "
            "on a sparse tensor which violates the invariants, but checks incur performance overhead. To silence this "
            "warning, explicitly opt in or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for "
            "guidance. ",
        )


def _note_compressed_beta():
    _warn_once(
        "compressed",
        "Sparse CSR tensor support is in beta state. If you miss a functionality in the sparse tensor support, please "
        "submit a feature request to https://github.com/pytorch/pytorch/issues.",
    )
