"""Index-based operators composed in Python: index_reduce (through
scatter_reduce) and nonzero_static (nonzero cut or padded to a fixed count)."""

from __future__ import annotations

import warnings

from ember import _C, _argcheck
from ember._warnings import user_stacklevel

_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


_warned = [False]


def _index_reduce_check(self, dim, index, source, reduce):
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not _warned[0]:
        _warned[0] = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", stacklevel=user_stacklevel())
    _argcheck.wrap_dim(dim, self.dim())
    dim = dim + self.dim() if dim < 0 else dim
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    shape = [1] * max(source.dim(), 1)
    shape[dim] = -1
    return dim, index.reshape(shape).expand_as(source)


def index_reduce(self, dim, index, source, reduce, *, include_self=True, out=None):
    """self with source's slices combined into the rows index names along dim."""
    from ember._ops_math import _out

    dim, spread = _index_reduce_check(self, dim, index, source, reduce)
    return _out(self.scatter_reduce(dim, spread, source, reduce, include_self=include_self), out)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    dim, spread = _index_reduce_check(self, dim, index, source, reduce)
    return self.scatter_reduce_(dim, spread, source, reduce, include_self=include_self)


def nonzero_static(input, *, size, fill_value=-1, out=None):
    """The indices of the first `size` nonzero elements, padded with fill_value."""
    from ember._ops_math import _out

    return _out(_nonzero_static(input, size, fill_value), out)


def _nonzero_static(input, size, fill_value):
    import ember

    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = _C._VariableFunctions.nonzero(input)
    count = found.size(0)
    if count >= size:
        return found[:size].clone()
    pad = ember.full((size - count, found.size(1)), fill_value, dtype=found.dtype)
    return ember.cat([found, pad])


__all__ = ["index_reduce", "nonzero_static"]
METHODS = ["index_reduce", "index_reduce_", "nonzero_static"]
