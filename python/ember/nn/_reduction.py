"""nn._reduction (functional's _Reduction): loss reductions as enums, and the
legacy size_average/reduce arguments."""

from __future__ import annotations

import warnings

from ember._warnings import user_stacklevel

_ENUMS = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction: str) -> int:
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=user_stacklevel(),
        )
        return 1
    if reduction not in _ENUMS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _ENUMS[reduction]


def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    """The reduction that size_average/reduce (None meaning True) name."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
            stacklevel=user_stacklevel(),
        )
    return reduction


def legacy_get_enum(size_average, reduce, emit_warning: bool = True) -> int:
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
