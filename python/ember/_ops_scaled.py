"""Scaled matrix products of float8 operands: torch._scaled_mm and its v2 form
(behind F.scaled_mm). On the CPU, as PyTorch's, each operand is decoded to
float32 and multiplied by its scale (one per tensor, or one per row of mat_a
and per column of mat_b), the product is taken in float32, the bias added,
and the result rounded to the output dtype. The grouped forms have no CPU
kernel in PyTorch and raise its error."""

from __future__ import annotations

import enum

from ember import _argcheck
from ember._ops_math import _SCALAR_NAMES

__all__ = ["_scaled_mm", "_scaled_mm_v2", "_scaled_grouped_mm", "_scaled_grouped_mm_v2"]
METHODS: list[str] = []


class _ScalingType(enum.IntEnum):
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"


class _SwizzleType(enum.IntEnum):
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"


def _ember():
    import ember

    return ember


def _name(dtype) -> str:
    """PyTorch's name of a dtype in messages ("Float", "Float8_e4m3fn")."""
    short = str(dtype).split(".")[-1]
    return _SCALAR_NAMES.get(short) or short[0].upper() + short[1:]


_FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")


def _is_float8(dtype) -> bool:
    return str(dtype).split(".")[-1] in _FLOAT8


def _sizes(t) -> str:
    return str(list(t.shape))


def _invalid_config(a, b, scale_a, scale_b, first="scale_a", second="scale_b", a_name="mat_a", b_name="mat_b"):
    return (
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and singletons.\n"
        f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be ({a.shape[0]}, 1)"
        f" and scale_b should be (1, {b.shape[1]}), and both should be contiguous.\n"
        f"Got {a_name}.dtype()={_name(a.dtype)}, {first}.dtype()={_name(scale_a.dtype)},"
        f" {first}.size()={_sizes(scale_a)}, {first}.stride()={list(scale_a.stride())},"
        f" {b_name}.dtype()={_name(b.dtype)},"
        f" {second}.dtype()={_name(scale_b.dtype)}, {second}.size()={_sizes(scale_b)} and"
        f" {second}.stride()={list(scale_b.stride())}"
    )


def _check_scales(a, b, scale_a, scale_b, rowwise):
    """PyTorch's checks of the emulated product's operands, in its order."""
    if rowwise:
        if not (_is_float8(a.dtype) and _is_float8(b.dtype)):
            raise ValueError(f"mat_a and mat_b must be fp8 types, got: {_name(a.dtype)}{_name(b.dtype)}")
        if scale_a.size(0) != a.shape[0] or scale_a.size(1) != 1:
            raise ValueError(f"scale_a must have shape [{a.shape[0]}, 1], got [{_sizes(scale_a)}]")
        for s, n, which in ((scale_a, a.shape[0], "scale_a"), (scale_b, b.shape[1], "scale_b")):
            if s.numel() != n or s.dtype != _ember().float32:
                raise ValueError(f"{which} must have {n} Float elements, got {s.numel()}")
        for s, which in ((scale_a, "scale_a"), (scale_b, "scale_b")):
            if s.stride(1) != 1:
                raise ValueError(f"expected {which}.stride(1) to be 1, but got {s.stride(1)}")
        return
    if not (_is_float8(a.dtype) and _is_float8(b.dtype)):
        raise ValueError(f"mat_a and mat_b must be fp8 types, got: {_name(a.dtype)}{_name(b.dtype)}")
    for s, which in ((scale_a, "scale_a"), (scale_b, "scale_b")):
        if s.numel() != 1 or s.dtype != _ember().float32:
            raise ValueError(f"{which} must have 1 Float element")


def _emulated(a, b, scale_a, scale_b, bias, out_dtype, rowwise, result_scale=None):
    """float32(a) * scale_a @ float32(b) * scale_b (+ bias), in out_dtype."""
    ember = _ember()
    f32 = ember.float32
    if rowwise:
        fa, fb = a.contiguous().to(f32) * scale_a, b.contiguous().to(f32) * scale_b
    else:
        fa, fb = a.contiguous().to(f32) * scale_a.item(), b.contiguous().to(f32) * scale_b.item()
    out = ember.matmul(fa, fb)
    if bias is not None:
        out.add_(bias)
    if out_dtype in (ember.float8_e4m3fn, ember.float8_e5m2):
        out = out * (1 / (result_scale if result_scale is not None else 1.0))
    return out.to(out_dtype)


def _scaled_mm(
    self, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False, *, out=None
):
    """torch._scaled_mm: per-tensor or row-wise scaled float8 product; the output dtype defaults to self's."""
    _argcheck.cpu_only("aten::_scaled_mm", self, mat2)
    ember = _ember()
    dtype = self.dtype if out_dtype is None else out_dtype
    for t, which in ((self, "mat1"), (mat2, "mat2")):
        if not _is_float8(t.dtype):
            raise RuntimeError(f"Expected {which} to be Float8 matrix got {_name(t.dtype)}")
    rowwise = None
    for row in (False, True):
        if _accepts(self, scale_a, row) and _accepts(mat2.t(), scale_b.t(), row):
            rowwise = row
            break
    if rowwise is None:
        raise ValueError(_invalid_config(self, mat2, scale_a, scale_b))
    if self.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"{'mat_a' if self.dim() != 2 else 'mat_b'} must be a matrix")
    _check_shapes(self, mat2, RuntimeError)
    _check_scales(self, mat2, scale_a, scale_b, rowwise)
    if scale_result is not None and (scale_result.numel() != 1 or scale_result.dtype != ember.float32):
        raise RuntimeError("scale_result must be a float scalar")
    if bias is not None and bias.numel() != mat2.shape[1]:
        raise RuntimeError(f"Bias must be size {mat2.shape[1]} but got {bias.numel()}")
    rs = scale_result.item() if scale_result is not None else None
    result = _emulated(self, mat2, scale_a, scale_b, bias, dtype, rowwise, rs)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


def _accepts(t, scale, rowwise):
    """PyTorch's is_tensorwise_scaling / is_rowwise_scaling of an operand and its scale."""
    ember = _ember()
    if not _is_float8(t.dtype) or scale.dtype != ember.float32:
        return False
    if not rowwise:
        return scale.numel() == 1
    return scale.dim() == 2 and scale.size(0) == t.shape[0] and scale.size(1) == 1 and scale.is_contiguous()


def _check_shapes(a, b, error):
    if a.shape[1] != b.shape[0]:
        raise error(
            f"mat_a and mat_b shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
        )


def _as_list(v):
    return [] if v is None else (list(v) if isinstance(v, (list, tuple)) else [v])


def _scaled_mm_v2(
    self,
    mat2,
    scale_a,
    recipe_a,
    swizzle_a,
    scale_b,
    recipe_b,
    swizzle_b,
    bias=None,
    out_dtype=None,
    contraction_dim=(),
    use_fast_accum=False,
):
    """torch._scaled_mm_v2 (F.scaled_mm): scales, recipes and swizzles as lists."""
    _argcheck.cpu_only("aten::_scaled_mm_v2", self, mat2)
    ember = _ember()
    if self.dim() != 2:
        raise ValueError("mat_a must be a matrix")
    if mat2.dim() != 2:
        raise ValueError("mat_b must be a matrix")
    m, k, n = self.shape[0], self.shape[1], mat2.shape[1]
    dtype = self.dtype if out_dtype is None else out_dtype
    if m == 0 or k == 0 or n == 0:
        out = ember.empty((m, n), dtype=dtype)
        return out.zero_() if k == 0 else out
    cdim = list(contraction_dim)
    if cdim:
        if len(cdim) != 2:
            raise ValueError("contraction_dim must have exactly 2 elements")
        if self.size(cdim[0]) != mat2.size(cdim[1]):
            raise ValueError(
                f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {mat2.shape[0]}x{n}) "
                f"with contraction dims mat_a: {cdim[0]}, mat_b: {cdim[1]}"
            )
    else:
        _check_shapes(self, mat2, ValueError)
    if bias is not None and bias.numel() != n:
        raise ValueError(f"Bias must be size {n} but got {bias.numel()}")
    if bias is not None and bias.dtype not in (ember.float32, ember.bfloat16, ember.float16):
        raise ValueError(f"Bias must be Float32 or BFloat16 or Half, but got {_name(bias.dtype)}")
    scales_a, scales_b = _as_list(scale_a), _as_list(scale_b)
    recipes_a, recipes_b = [int(r) for r in _as_list(recipe_a)], [int(r) for r in _as_list(recipe_b)]
    swizzles = [int(s) for s in _as_list(swizzle_a)[:1] + _as_list(swizzle_b)[:1]]
    if len(swizzles) == 2 and any(swizzles):
        raise ValueError("CPU does not support swizzle.")
    rowwise = None
    if _is_float8(self.dtype) and _is_float8(mat2.dtype) and len(scales_a) == len(scales_b) == 1:
        if len(recipes_a) == len(recipes_b) == 1 and scales_a[0].dtype == scales_b[0].dtype == ember.float32:
            for kind, row in ((_ScalingType.TensorWise, False), (_ScalingType.RowWise, True)):
                if recipes_a[0] == kind and recipes_b[0] == kind:
                    rowwise = row
    if rowwise is None:
        sa = scales_a[0] if scales_a else ember.empty(0)
        sb = scales_b[0] if scales_b else ember.empty(0)
        raise ValueError(_invalid_config(self, mat2, sa, sb))
    _check_shapes(self, mat2, RuntimeError)
    _check_scales(self, mat2, scales_a[0], scales_b[0], rowwise)
    return _emulated(self, mat2, scales_a[0], scales_b[0], bias, dtype, rowwise)


def _scaled_grouped_mm(
    self, mat2, scale_a, scale_b, offs=None, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False
):
    raise _argcheck.backend_error("aten::_scaled_grouped_mm", self.device.type.upper())


def _scaled_grouped_mm_v2(
    self,
    mat2,
    scale_a,
    recipe_a,
    swizzle_a,
    scale_b,
    recipe_b,
    swizzle_b,
    offs=None,
    bias=None,
    out_dtype=None,
    contraction_dim=(),
    use_fast_accum=False,
):
    raise _argcheck.backend_error("aten::_scaled_grouped_mm_v2", self.device.type.upper())
