"""The symbolic-shape helpers of the torch namespace (sym_int, sym_max, ...).

Ember runs eagerly, so sizes are always plain Python numbers: these act on
them as PyTorch's do outside tracing, and the SymInt/SymFloat/SymBool
classes exist for ``isinstance`` checks and wrap a node when constructed.
"""

from __future__ import annotations

import builtins
import math

__all__ = [
    "SymBool",
    "SymFloat",
    "SymInt",
    "sym_constrain_range",
    "sym_constrain_range_for_size",
    "sym_float",
    "sym_fresh_size",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sqrt",
    "sym_sum",
]


class _SymNumber:
    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return str(self.node)


class SymInt(_SymNumber):
    """A symbolic integer (a size under tracing)."""


class SymFloat(_SymNumber):
    """A symbolic float."""


class SymBool(_SymNumber):
    """A symbolic boolean."""


_NUMBERS = (int, float)


def _check_number(a):
    if isinstance(a, bool) or not isinstance(a, _NUMBERS):
        import numpy as np

        if not isinstance(a, (np.integer, np.floating)):
            import ember

            kind = "<class 'torch.Tensor'>" if isinstance(a, ember.Tensor) else str(type(a))
            raise AssertionError(f"expected {(np.integer, np.floating, int, float)}, got {kind}")


def sym_int(a):
    return builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def sym_not(a):
    return not a


def sym_sqrt(a):
    return math.sqrt(a)


def sym_max(a, b):
    _check_number(a)
    _check_number(b)
    out = builtins.max(a, b)
    return builtins.float(out) if isinstance(a, float) or isinstance(b, float) else out


def sym_min(a, b):
    _check_number(a)
    _check_number(b)
    out = builtins.min(a, b)
    return builtins.float(out) if isinstance(a, float) or isinstance(b, float) else out


def sym_sum(*args):
    """The sum of sym_sum([a, b, c]) or sym_sum(a, b, c)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def _type_text(x):
    import ember

    return "<class 'torch.Tensor'>" if type(x) is ember.Tensor else str(type(x))


def sym_ite(b, t, f):
    if not isinstance(b, (SymBool, builtins.bool)):
        raise AssertionError(f"expected SymBool or bool, got {_type_text(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {_type_text(t)} vs {_type_text(f)}")
    return t if b else f


def sym_fresh_size(expr):
    """A size's value: ``expr`` made a tensor and read back as one number."""
    import ember

    return ember.tensor(expr).item()


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _constrained_size(fn, size):
    # A binding in PyTorch: size is a number (a 0-dim tensor counts, a
    # one-element tensor of another shape does not), read as an int64.
    import ember

    if isinstance(size, ember.Tensor):
        if size.dim() != 0:
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be Number, not Tensor")
        size = size.item()
    elif not isinstance(size, (builtins.int, builtins.float, builtins.complex)):
        raise TypeError(f"{fn}(): argument 'size' (position 1) must be Number, not {type(size).__name__}")
    if isinstance(size, builtins.complex):
        if size.imag != 0:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        size = size.real
    return builtins.int(size)


def sym_constrain_range(size, *, min=None, max=None):
    size = _constrained_size("sym_constrain_range", size)
    low = _INT64_MIN if min is None else min
    high = _INT64_MAX if max is None else max
    if not (low <= size <= high):
        raise RuntimeError(f"Invalid value range for {size} between [{low}, {high}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):
    size = _constrained_size("sym_constrain_range_for_size", size)
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    low = 0 if min is None else min
    high = _INT64_MAX if max is None else max
    if not (low <= size <= high):
        raise RuntimeError(f"Invalid value range for {size} between [{low}, {high}].")
