"""NumPy arrays and scalars as tensors (used by ember.tensor and
ember.as_tensor); ember.from_numpy and Tensor.numpy live in
src/ember/python/PyNumpy.cpp."""

from __future__ import annotations

from ember import _C


def _numpy_module():
    import sys

    return sys.modules.get("numpy")  # no ndarray can exist before NumPy is imported


def is_ndarray(obj):
    np = _numpy_module()
    return np is not None and isinstance(obj, np.ndarray)


def is_numpy_scalar(obj):
    np = _numpy_module()
    return np is not None and isinstance(obj, np.generic)


def numpy_compatible(arr):
    """arr, or a copy of it that from_numpy accepts (non-negative strides,
    native byte order); dtype errors are left to from_numpy."""
    if any(s < 0 for s in arr.strides) or not arr.dtype.isnative:
        import numpy as np

        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    return arr


def from_ndarray(arr, dtype, copy):
    """A tensor for an ndarray: a copy with the array's strides (tensor()), or
    the array's memory itself when possible (as_tensor()). Arrays from_numpy
    rejects (negative strides, ...) raise as in PyTorch."""
    import numpy as np

    if isinstance(arr, np.generic):
        arr = np.asarray(arr)
    t = _C.from_numpy(arr)
    if dtype is not None and dtype != t.dtype:
        return t.to(dtype)
    return clone_preserving_strides(t) if copy else t


def clone_preserving_strides(t):
    """A copy with t's strides when t is dense and non-overlapping (as
    PyTorch's preserve_format), else a contiguous copy."""
    import ember

    if t.is_contiguous() or t.dim() < 2:
        return t.clone()
    perm = sorted(range(t.dim()), key=lambda d: -t.stride(d))
    expected = 1
    for d in reversed(perm):
        if t.size(d) != 1 and t.stride(d) != expected:
            return t.contiguous()
        expected *= t.size(d)
    inverse = [0] * t.dim()
    for i, d in enumerate(perm):
        inverse[d] = i
    out = ember.empty([t.size(d) for d in perm], dtype=t.dtype).permute(*inverse)
    out.copy_(t)
    return out
