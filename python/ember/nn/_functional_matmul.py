"""Grouped and scaled matrix products of nn.functional: grouped_mm (one
product per group of a mixture-of-experts layer, torch._grouped_mm),
scaled_mm and scaled_grouped_mm (float8 operands with their scales), and the
ScalingType / SwizzleType enums they take."""

from __future__ import annotations

import ember
from ember._ops_scaled import _ScalingType as ScalingType
from ember._ops_scaled import _SwizzleType as SwizzleType

__all__ = ["ScalingType", "SwizzleType", "grouped_mm", "scaled_mm", "scaled_grouped_mm"]

ScalingType.__module__ = "ember.nn.functional"
SwizzleType.__module__ = "ember.nn.functional"


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """One product per group: a 2-d operand is cut by the int32 group ends `offs`; two 3-d operands are a batch."""
    return ember._grouped_mm(mat_a, mat_b, offs=offs, bias=bias, out_dtype=out_dtype)


def _as_list(v):
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def _v2_lists(scale_a, scale_recipe_a, swizzle_a, scale_b, scale_recipe_b, swizzle_b):
    """The v2 operators' per-operand lists: scales, recipes as ints, swizzles as ints (empty when None)."""
    out = []
    for scale, recipe, swizzle in ((scale_a, scale_recipe_a, swizzle_a), (scale_b, scale_recipe_b, swizzle_b)):
        out += [_as_list(scale), [int(r) for r in _as_list(recipe)], [int(s) for s in _as_list(swizzle)]]
    return out


def scaled_mm(
    mat_a,
    mat_b,
    scale_a,
    scale_recipe_a,
    scale_b,
    scale_recipe_b,
    swizzle_a=None,
    swizzle_b=None,
    bias=None,
    output_dtype=ember.bfloat16,
    contraction_dim=(),
    use_fast_accum=False,
):
    """mat_a @ mat_b of float8 operands decoded by their scales (recipes: TensorWise or RowWise on the CPU)."""
    lists = _v2_lists(scale_a, scale_recipe_a, swizzle_a, scale_b, scale_recipe_b, swizzle_b)
    return ember._scaled_mm_v2(mat_a, mat_b, *lists, bias, output_dtype, contraction_dim, use_fast_accum)


def scaled_grouped_mm(
    mat_a,
    mat_b,
    scale_a,
    scale_recipe_a,
    scale_b,
    scale_recipe_b,
    swizzle_a=None,
    swizzle_b=None,
    bias=None,
    offs=None,
    output_dtype=ember.bfloat16,
    contraction_dim=(),
    use_fast_accum=False,
):
    """grouped_mm of scaled float8 operands (PyTorch has no CPU kernel for it)."""
    lists = _v2_lists(scale_a, scale_recipe_a, swizzle_a, scale_b, scale_recipe_b, swizzle_b)
    return ember._scaled_grouped_mm_v2(mat_a, mat_b, *lists, offs, bias, output_dtype, contraction_dim, use_fast_accum)
