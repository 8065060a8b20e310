"""Padding, interpolation and sliding blocks (unfold/fold) of
ember.nn.functional, with torch.nn.functional's signatures, defaults and
errors."""

from __future__ import annotations

import math
import warnings

import ember
from ember._warnings import user_stacklevel

__all__ = [
    "pad",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "unfold",
    "fold",
]


def _pair(v):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v, v)


# ---- padding ------------------------------------------------------------------------

_PAD_OPS = {
    ("reflect", 2): "reflection_pad1d",
    ("reflect", 4): "reflection_pad2d",
    ("reflect", 6): "reflection_pad3d",
    ("replicate", 2): "replication_pad1d",
    ("replicate", 4): "replication_pad2d",
    ("replicate", 6): "replication_pad3d",
}


def _pad_circular(input, pad):
    nd = input.dim()
    k = len(pad) // 2
    # Negative padding crops first; what is left wraps around.
    x = input
    for i in range(k):
        dim = nd - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = x.size(dim)
        if left < 0 or right < 0:
            lo, hi = max(-left, 0), max(-right, 0)
            if n - lo - hi <= 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension.")
            x = x.narrow(dim, lo, n - lo - hi)
    pos = [max(p, 0) for p in pad]
    for i in range(k):
        dim = nd - 1 - i
        if pos[2 * i] > x.size(dim) or pos[2 * i + 1] > x.size(dim):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    shape = list(x.shape)
    for i in range(k):
        shape[nd - 1 - i] += pos[2 * i] + pos[2 * i + 1]
    out = ember.empty(shape, dtype=x.dtype, device=x.device)
    center = out
    for i in range(k):
        dim = nd - 1 - i
        center = center.narrow(dim, pos[2 * i], x.size(dim))
    center.copy_(x)
    # Dim by dim over the full extent of the others: corners come out right
    # because every later dim copies from rows its predecessors completed.
    for i in range(k):
        dim = nd - 1 - i
        left, right, n = pos[2 * i], pos[2 * i + 1], x.size(dim)
        if left > 0:
            out.narrow(dim, 0, left).copy_(out.narrow(dim, n, left))
        if right > 0:
            out.narrow(dim, left + n, right).copy_(out.narrow(dim, left, right))
    return out


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad)//2 dims; pad lists (left, right) from the last dim backwards."""
    pad = [int(p) for p in pad]
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.dim()
    if len(pad) > nd * 2:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(pad)} and input of dimension {nd}"
        )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return ember.constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    size_ok = {2: (2, 3), 4: (3, 4), 6: (4, 5)}.get(len(pad), ())
    if nd not in size_ok:
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode == "circular":
        return _pad_circular(input, pad)
    return getattr(ember, _PAD_OPS[(mode, len(pad))])(input, pad)


# ---- interpolation ------------------------------------------------------------------------

_LINEAR_MODES = ("linear", "bilinear", "bicubic", "trilinear")


def _is_integer(x):
    return isinstance(x, int) or (isinstance(x, ember.Tensor) and not x.is_floating_point())


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resizes the spatial dims (all dims after the first two) of input."""
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            # bools are ints here, as PyTorch's optional int lists take them
            output_size = [int(x) if isinstance(x, bool) else x for x in size]
        else:
            # Converted by the operator that receives it, as in PyTorch.
            output_size = [size] * dim
        scale_factors = None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                    "(s1, s2, ...,sK) format."
                )
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor] * dim
        output_size = None
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None

    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as input"
        )
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False

    nd = input.dim()
    if mode in ("nearest", "nearest-exact") and nd in (3, 4, 5):
        stem = "upsample_nearest" if mode == "nearest" else "_upsample_nearest_exact"
        return getattr(ember, f"{stem}{nd - 2}d")(input, output_size, scale_factors)
    if mode == "area" and nd == 4:
        return ember.nn.functional.adaptive_avg_pool2d(input, output_size)
    if mode == "linear" and nd == 3:
        return ember.upsample_linear1d(input, output_size, align_corners, scale_factors)
    if mode in ("bilinear", "bicubic") and nd == 4 and antialias:
        aa = ember._upsample_bilinear2d_aa if mode == "bilinear" else ember._upsample_bicubic2d_aa
        return aa(input, output_size, align_corners, scale_factors)
    if mode == "bilinear" and nd == 4:
        return ember.upsample_bilinear2d(input, output_size, align_corners, scale_factors)
    if mode == "bicubic" and nd == 4:
        return ember.upsample_bicubic2d(input, output_size, align_corners, scale_factors)
    if mode == "area" and nd == 3:
        return ember.nn.functional.adaptive_avg_pool1d(input, output_size)
    if mode == "area" and nd == 5:
        return ember.nn.functional.adaptive_avg_pool3d(input, output_size)
    if mode == "trilinear" and nd == 5:
        return _trilinear(input, output_size, align_corners, scale_factors)
    if mode in ("linear", "bilinear", "trilinear") and nd in (3, 4, 5):
        need = {"linear": 3, "bilinear": 4, "trilinear": 5}[mode]
        if nd != need:
            raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {need}D input")
    if nd in (3, 4, 5) and mode in ("bicubic", "trilinear", "area", "lanczos"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported for {nd}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
        f"(got {mode})"
    )


def _deprecated(name):
    warnings.warn(
        f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=user_stacklevel()
    )


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- sliding blocks -------------------------------------------------------------------------


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C, H, W) -> (N, C*kh*kw, L): every sliding block as a column."""
    return ember.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C*kh*kw, L) -> (N, C, H, W): sums the sliding blocks back into an image."""
    return ember.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def _trilinear(input, output_size, align_corners, scale_factors):
    """Trilinear resizing as linear resizing along depth, height and width in turn (the
    weights are separable, so each axis's pass is PyTorch's linear pass for that axis)."""
    x = input
    n = x.shape[0]
    for axis in range(3):
        size = None if output_size is None else [output_size[axis]]
        scale = None if scale_factors is None else [scale_factors[axis]]
        moved = x.movedim(2 + axis, -1)
        shape = list(moved.shape)
        flat = moved.reshape(n, -1, shape[-1])
        resized = ember.upsample_linear1d(flat, size, align_corners, scale)
        x = resized.reshape(shape[:-1] + [resized.shape[-1]]).movedim(-1, 2 + axis)
    return x.contiguous()
