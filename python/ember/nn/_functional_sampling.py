"""conv_transpose3d, conv_tbc, affine_grid and grid_sample: functions of
ember.nn.functional with torch.nn.functional's signatures and checks.

Note [Transposed 3-d convolution as a convolution]
Float32 (and 16-bit) calls on the CPU run oneDNN's deconvolution through
ember.convolution; otherwise conv_transpose3d(x, w, stride s, padding p, output_padding q, dilation d) equals
conv3d over x with s - 1 zeros put between neighbours, padded by d*(k-1) - p
before and d*(k-1) - p + q after (cropped where negative), with the kernel
flipped in space and its in/out channels swapped group by group.

Note [grid_sample as a gather]
On the CPU grid_sample runs the kernels of cpu/GridSampler.cpp; on other
devices, each output point's grid coordinate is mapped to input pixels (align_corners
decides whether -1 and 1 are pixel centres or edges), folded back by the
padding mode, and the 1 (nearest) or 4 (bilinear) neighbours are gathered from
the flattened input. Bilinear weights are built from the coordinates, so
autograd carries the gradient to both the input and the grid.
"""

from __future__ import annotations

import warnings

import ember
from ember._warnings import user_stacklevel

__all__ = ["affine_grid", "conv_tbc", "conv_transpose3d", "grid_sample"]


def _triple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * 3


def _spread(x, dim, step):
    """x with step - 1 zeros put between neighbours along dim."""
    if step == 1 or x.shape[dim] == 0:
        return x
    x = x.movedim(dim, -1)
    length = x.shape[-1]
    zeros = x.new_zeros(tuple(x.shape) + (step - 1,))
    spread = ember.cat([x.unsqueeze(-1), zeros], -1).reshape(tuple(x.shape[:-1]) + (length * step,))
    return spread[..., : (length - 1) * step + 1].movedim(-1, dim)


def _pad_or_crop(x, dim, before, after):
    if before < 0:
        x = x.narrow(dim, -before, x.shape[dim] + before)
        before = 0
    if after < 0:
        x = x.narrow(dim, 0, x.shape[dim] + after)
        after = 0
    if before or after:
        shape = list(x.shape)
        parts = []
        if before:
            shape[dim] = before
            parts.append(x.new_zeros(shape))
        parts.append(x)
        if after:
            shape[dim] = after
            parts.append(x.new_zeros(shape))
        x = ember.cat(parts, dim)
    return x


def _deconvolution_applies(x, weight, bias, padding, output_padding):
    """Whether the C++ kernel (oneDNN's deconvolution) takes this call (Note [3-d transposed convolution])."""
    floats = (ember.float32, ember.float16, ember.bfloat16)
    tensors = [x, weight] + ([bias] if bias is not None else [])
    if x.is_cuda:
        # cuDNN runs every transposed convolution.
        return all(t.is_cuda and t.dtype == x.dtype for t in tensors)
    return (
        all(t.device.type == "cpu" and not t.is_meta and t.dtype == x.dtype for t in tensors)
        and x.dtype in floats
        and all(q <= p for p, q in zip(padding, output_padding))
        and ember.backends.mkldnn.is_available()
    )


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-d transposed convolution (Note [Transposed 3-d convolution as a convolution])."""
    if input.dim() not in (4, 5):
        raise RuntimeError(
            "Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input of size: "
            f"{list(input.shape)}"
        )
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    if weight.dim() != 5:
        raise RuntimeError(f"weight should be 5-dimensional, but got {weight.dim()}-dimensional weight")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} to have "
            f"{weight.shape[0]} channels, but got {x.shape[1]} channels instead"
        )
    if not (x.dtype.is_floating_point or x.dtype == ember.int64):
        scalar = "Bool" if x.dtype == ember.bool else x.type().split(".")[-1][: -len("Tensor")]
        raise NotImplementedError(f"\"slow_conv_transpose3d_out_cpu\" not implemented for '{scalar}'")
    s, p, q, dl = _triple(stride), _triple(padding), _triple(output_padding), _triple(dilation)
    for i in range(3):
        if q[i] >= s[i] and q[i] >= dl[i]:
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                f"output_padding: {list(q)} stride: {list(s)} dilation: {list(dl)}"
            )
    if _deconvolution_applies(x, weight, bias, p, q):
        out = ember.convolution(x, weight, bias, list(s), list(p), list(dl), True, list(q), groups)
        return out if batched else out.squeeze(0)
    kernel = weight.shape[2:]
    for i in range(3):
        x = _spread(x, 2 + i, s[i])
        reach = dl[i] * (kernel[i] - 1)
        x = _pad_or_crop(x, 2 + i, reach - p[i], reach - p[i] + q[i])
    cin, cout_per_group = weight.shape[0], weight.shape[1]
    flipped = (
        weight.reshape((groups, cin // groups, cout_per_group) + tuple(kernel))
        .transpose(1, 2)
        .reshape((groups * cout_per_group, cin // groups) + tuple(kernel))
        .flip(2, 3, 4)
    )
    out = ember.nn.functional.conv3d(x, flipped, bias, 1, 0, dl, groups)
    return out if batched else out.squeeze(0)


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution over time-major (time, batch, channel) input; weight is (kernel, in, out)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = ember.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1).contiguous()


# ---- sampling grids ---------------------------------------------------------------------------
_ALIGN_CORNERS_DEFAULT = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify "
    "align_corners=True if the old behavior is desired. See the documentation of grid_sample for details."
)


def _base_coords(size, align_corners, like):
    """The normalised centres of size pixels along one axis."""
    coords = ember.linspace(-1, 1, size, dtype=like.dtype, device=like.device)
    if not align_corners and size > 0:
        coords = coords * ((size - 1) / size)
    return coords


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) or (N, D, H, W, 3) sampling grid of the affine maps theta."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=user_stacklevel())
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {ember.Size(size)}. Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {ember.Size(size)}. Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {ember.Size(size)}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {ember.Size(size)}")
    n = size[0]
    axes = [_base_coords(s, align_corners, theta) for s in spatial]
    mesh = ember.meshgrid(*axes, indexing="ij")  # z, y, x order
    ones = ember.ones_like(mesh[0])
    base = ember.stack(list(reversed(mesh)) + [ones], -1)  # x, y, (z,) 1
    points = base.reshape(1, -1, base.shape[-1]).expand(n, -1, -1)
    from ember._linalg_autograd import named

    return named(
        "AffineGridGeneratorBackward0",
        lambda t: ember.bmm(points, t.transpose(1, 2)).reshape([n] + spatial + [len(spatial)]),
        theta,
    )


def _unnormalise(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return ember.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = ember.fmod(coord, span)
    flips = ember.floor(coord / span)
    return ember.where(ember.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _source_coord(coord, size, padding_mode, align_corners):
    coord = _unnormalise(coord, size, align_corners)
    if padding_mode == "border":
        coord = coord.clamp(0, size - 1)
    elif padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        coord = coord.clamp(0, size - 1)
    return coord


def _gather_2d(flat, ix, iy, height, width):
    """flat (N, C, H*W) at integer positions (N, P): zero outside the input."""
    inside = (ix >= 0) & (ix < width) & (iy >= 0) & (iy < height)
    index = (iy.clamp(0, height - 1) * width + ix.clamp(0, width - 1)).long()
    values = flat.gather(2, index.unsqueeze(1).expand(-1, flat.shape[1], -1))
    return values * inside.unsqueeze(1).to(flat.dtype)


_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input sampled at grid's normalised (x, y) points (Note [grid_sample as a gather])."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=user_stacklevel())
        align_corners = False
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.dim() != input.dim():
        raise RuntimeError(
            f"grid_sampler(): expected grid to have same number of dimensions as input, but got input with "
            f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
            f"{list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got grid "
            f"with sizes {list(grid.shape)}"
        )
    on_cpu = input.device.type == "cpu" and not input.is_meta and grid.device.type == "cpu"
    if on_cpu or (input.device.type == "cuda" and grid.device.type == "cuda"):
        if mode == "bicubic" and input.dim() == 5:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        sampler = ember.grid_sampler_2d if input.dim() == 4 else ember.grid_sampler_3d
        return sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], bool(align_corners))
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode 'bicubic' is not supported yet")
    if input.dim() == 5:
        return _grid_sample_3d(input, grid, mode, padding_mode, align_corners)
    n, c, height, width = input.shape
    out_h, out_w = grid.shape[1], grid.shape[2]
    points = grid.reshape(n, out_h * out_w, 2)
    x = _source_coord(points[..., 0], width, padding_mode, align_corners)
    y = _source_coord(points[..., 1], height, padding_mode, align_corners)
    flat = input.reshape(n, c, height * width)
    if mode == "nearest":
        out = _gather_2d(flat, ember.round(x).long(), ember.round(y).long(), height, width)
    else:
        x0, y0 = ember.floor(x), ember.floor(y)
        wx1, wy1 = x - x0, y - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        x0l, y0l = x0.long(), y0.long()
        out = (
            _gather_2d(flat, x0l, y0l, height, width) * (wx0 * wy0).unsqueeze(1)
            + _gather_2d(flat, x0l + 1, y0l, height, width) * (wx1 * wy0).unsqueeze(1)
            + _gather_2d(flat, x0l, y0l + 1, height, width) * (wx0 * wy1).unsqueeze(1)
            + _gather_2d(flat, x0l + 1, y0l + 1, height, width) * (wx1 * wy1).unsqueeze(1)
        )
    return out.reshape(n, c, out_h, out_w)


def _gather_3d(flat, ix, iy, iz, depth, height, width):
    """flat (N, C, D*H*W) at integer positions (N, P): zero outside the input."""
    inside = (ix >= 0) & (ix < width) & (iy >= 0) & (iy < height) & (iz >= 0) & (iz < depth)
    index = (iz.clamp(0, depth - 1) * height + iy.clamp(0, height - 1)) * width + ix.clamp(0, width - 1)
    values = flat.gather(2, index.long().unsqueeze(1).expand(-1, flat.shape[1], -1))
    return values * inside.unsqueeze(1).to(flat.dtype)


def _grid_sample_3d(input, grid, mode, padding_mode, align_corners):
    """5-d grid_sample: nearest, or trilinear ('bilinear') over the 8 neighbours."""
    n, c, depth, height, width = input.shape
    out_shape = list(grid.shape[1:4])
    points = grid.reshape(n, -1, 3)
    x = _source_coord(points[..., 0], width, padding_mode, align_corners)
    y = _source_coord(points[..., 1], height, padding_mode, align_corners)
    z = _source_coord(points[..., 2], depth, padding_mode, align_corners)
    flat = input.reshape(n, c, depth * height * width)
    if mode == "nearest":
        out = _gather_3d(
            flat, ember.round(x).long(), ember.round(y).long(), ember.round(z).long(), depth, height, width
        )
        return out.reshape([n, c] + out_shape)
    x0, y0, z0 = ember.floor(x), ember.floor(y), ember.floor(z)
    fx, fy, fz = x - x0, y - y0, z - z0
    x0, y0, z0 = x0.long(), y0.long(), z0.long()
    out = None
    for dz in (0, 1):
        wz = fz if dz else 1 - fz
        for dy in (0, 1):
            wy = fy if dy else 1 - fy
            for dx in (0, 1):
                wx = fx if dx else 1 - fx
                term = _gather_3d(flat, x0 + dx, y0 + dy, z0 + dz, depth, height, width) * (wx * wy * wz).unsqueeze(1)
                out = term if out is None else out + term
    return out.reshape([n, c] + out_shape)
