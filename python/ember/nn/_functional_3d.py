"""3-d convolution and pooling: conv3d, max_pool3d, avg_pool3d, adaptive_avg_pool3d, with
torch.nn.functional's signatures.

Note [3-d as 2-d passes]
A box window separates over depth and the height-width plane. Pooling runs the
2-d operator over (H, W) with depth as channels, then again over depth with the
plane flattened (kernel (kd, 1)); maxima, averages (the divisor is the product
of the per-dimension counts) and flat indices (d * H * W + the plane's index)
compose exactly, ties included. conv3d sums, over the kernel's depth taps, one
conv2d of the matching strided depth slices, where oneDNN does not compute it
whole (float32 as PyTorch: Note [3-d convolution]).
"""

from __future__ import annotations

import os

import ember
from ember._out_forms import _cpp_name
from ember.autograd.function import Function, _composite_node, _node_class

__all__ = [
    "adaptive_avg_pool3d",
    "avg_pool3d",
    "conv3d",
    "lp_pool3d",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool3d",
]


def _triple(v, name=None):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (v[0],) * 3
        if len(v) != 3 and name:
            raise RuntimeError(f"{name} must either be a single int, or a tuple of three ints")
        return tuple(v)
    return (v, v, v)


def _batched(input, name):
    if input.dim() not in (4, 5):
        raise RuntimeError(f"{name}: Expected 4D or 5D tensor for input, but got: {list(input.shape)}")
    return (input, True) if input.dim() == 5 else (input.unsqueeze(0), False)


def _refuse(t, name, allowed):
    if t.dtype not in allowed:
        scalar = "Bool" if t.dtype == ember.bool else t.type().split(".")[-1][: -len("Tensor")]
        raise NotImplementedError(f"\"{name}\" not implemented for '{scalar}'")


_NOT_BOOL = tuple(
    getattr(ember, n) for n in ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
)
_FLOATING = (ember.float16, ember.bfloat16, ember.float32, ember.float64)  # PyTorch's CUDA pooling kernels


def _planes(x):
    """(N*C, D, H, W): depth as channels."""
    n, c, d, h, w = x.shape
    return x.reshape(n * c, d, h, w)


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    x, batched = _batched(input, "max_pool3d")
    if x.is_cuda:
        _refuse(x, "max_pool3d_with_indices_out_frame", _FLOATING)
    else:
        _refuse(x, "max_pool3d", _NOT_BOOL)
    k = _triple(kernel_size, "max_pool3d: kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _triple(stride)
    p, dl = _triple(padding), _triple(dilation)

    def pool(t):
        n, c, d, h, w = t.shape
        plane, plane_idx = ember.max_pool2d_with_indices(_planes(t), k[1:], s[1:], p[1:], dl[1:], ceil_mode)
        oh, ow = plane.shape[-2], plane.shape[-1]
        flat = plane.reshape(n * c, 1, d, oh * ow)
        out, depth_idx = ember.max_pool2d_with_indices(flat, [k[0], 1], [s[0], 1], [p[0], 0], [dl[0], 1], ceil_mode)
        od = out.shape[-2]
        depth = depth_idx // (oh * ow)
        in_plane = plane_idx.reshape(n * c, 1, d, oh * ow).gather(2, depth)
        idx = (depth * (h * w) + in_plane).reshape(n, c, od, oh, ow)
        return out.reshape(n, c, od, oh, ow), idx

    if ember.is_grad_enabled() and x.requires_grad and not x.is_meta:
        out, idx = _node_class(_MaxPool3dNode, "MaxPool3DWithIndicesBackward0").apply(x, pool)
    else:
        out, idx = pool(x)
    return (out, idx) if batched else (out.squeeze(0), idx.squeeze(0))


class _MaxPool3dNode(Function):
    """max_pool3d's (values, indices), recorded as PyTorch's node: each output's gradient is
    added to the input element its index names, output by output, as PyTorch's kernel."""

    @staticmethod
    def forward(ctx, x, pool):
        with ember.no_grad():
            out, idx = pool(x)
        ctx.save_for_backward(idx)
        ctx.shape = tuple(x.shape)
        ctx.mark_non_differentiable(idx)
        return out, idx

    @staticmethod
    def backward(ctx, grad, _grad_idx):
        (idx,) = ctx.saved_tensors
        n, c, d, h, w = ctx.shape
        g = ember.zeros(n, c, d * h * w, dtype=grad.dtype, device=grad.device)
        g = g.scatter_add(2, idx.reshape(n, c, -1), grad.reshape(n, c, -1))
        return g.view(ctx.shape), None


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling (Note [3-d as 2-d passes]); with return_indices also the flat d*H*W + h*W + w."""
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool3d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    """3-d average pooling (Note [3-d as 2-d passes])."""
    x, batched = _batched(input, "avg_pool3d")
    if x.is_cuda:
        _refuse(x, "avg_pool3d_out_cuda", _FLOATING)
    else:
        _refuse(x, "avg_pool3d_out_frame", (ember.int64, ember.float32, ember.float64))
    k = _triple(kernel_size, "avg_pool3d: kernel_size")
    s = k if stride is None else _triple(stride)
    p = _triple(padding)
    first_divisor = None if divisor_override is None else 1

    def pool(t):
        n, c = t.shape[0], t.shape[1]
        plane = ember.avg_pool2d(_planes(t), k[1:], s[1:], p[1:], ceil_mode, count_include_pad, first_divisor)
        d, oh, ow = plane.shape[1], plane.shape[2], plane.shape[3]
        out = ember.avg_pool2d(
            plane.reshape(n * c, 1, d, oh * ow),
            [k[0], 1],
            [s[0], 1],
            [p[0], 0],
            ceil_mode,
            count_include_pad,
            divisor_override,
        )
        return out.reshape(n, c, out.shape[-2], oh, ow)

    out = pool(x)
    return out if batched else out.squeeze(0)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (D, H, W) output size; None keeps that input size."""
    from ember.nn._functional_pooling import _output_size_with_default

    output_size = _output_size_with_default(output_size, input.shape)
    x, batched = _batched(input, "adaptive_avg_pool3d")
    _refuse(x, "adaptive_avg_pool3d_cpu", (ember.float16, ember.bfloat16, ember.float32, ember.float64))
    size = _triple(output_size)
    size = [x.shape[2 + i] if v is None else v for i, v in enumerate(size)]
    n, c = x.shape[0], x.shape[1]
    plane = ember.adaptive_avg_pool2d(_planes(x), size[1:])
    d = plane.shape[1]
    out = ember.adaptive_avg_pool2d(plane.reshape(n * c, 1, d, size[1] * size[2]), [size[0], size[1] * size[2]])
    out = out.reshape(n, c, *size)
    return out if batched else out.squeeze(0)


def _same_padding(kernel, dilation):
    """Per dim (left, right) of padding='same'."""
    totals = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
    return [(t // 2, t - t // 2) for t in totals]


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution as a sum of conv2d calls over the kernel's depth (Note [3-d as 2-d passes])."""
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: {list(input.shape)}"
        )
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    if weight.dim() != 5:
        raise RuntimeError(
            "weight should have at least three dimensions"
            if weight.dim() < 3
            else f"Expected 5-dimensional input for 5-dimensional weight {list(weight.shape)}, but got "
            f"{weight.dim()}-dimensional input of size {list(x.shape)} instead"
        )
    if bias is not None and bias.dtype != input.dtype:  # PyTorch's first check, as in conv2d
        raise RuntimeError(
            f"Input type ({_cpp_name(input.dtype)}) and bias type ({_cpp_name(bias.dtype)}) should be the same"
        )
    s, dl = _triple(stride), _triple(dilation)
    kd, kh, kw = weight.shape[2:]
    if x.is_cuda:
        out = _conv3d_cuda(x, weight, bias, s, padding, dl, groups)
        return out if batched else out.squeeze(0)
    _refuse(x, "slow_conv3d_cpu", _NOT_BOOL)
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(x.shape)} to have "
            f"{weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
        if padding == "same" and any(v != 1 for v in s):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = _same_padding((kd, kh, kw), dl) if padding == "same" else [(0, 0)] * 3
        extra = [r - left for left, r in pads]
        if any(extra):
            x = ember.nn.functional.pad(x, [0, extra[2], 0, extra[1], 0, extra[0]])
        p = [left for left, _ in pads]
    else:
        p = list(_triple(padding))
    if x.dtype == ember.float32 and _onednn_applies(x, weight, bias, s, dl, groups):
        out = ember.convolution(x, weight, bias, list(s), p, list(dl), False, [0, 0, 0], groups)
        return out if batched else out.squeeze(0)
    # PyTorch's node has an edge for the bias, None without one: an empty stand-in gives it
    out = _composite_node(
        "ConvolutionBackward0",
        lambda x, weight, b: _conv3d_by_planes(x, weight, bias if bias is None else b, s, p, dl, groups),
        x,
        weight,
        ember.empty(0, dtype=x.dtype) if bias is None else bias,
    )
    return out if batched else out.squeeze(0)


def _conv3d_by_planes(x, weight, bias, s, p, dl, groups):
    """The sum over the kernel's depth taps of conv2d of the strided depth slices (Note [3-d as 2-d passes])."""
    dtype = x.dtype
    if dtype in (ember.float16, ember.bfloat16):
        # the depth taps are summed in float32, as PyTorch accumulates
        x, weight = x.float(), weight.float()
        bias = bias.float() if bias is not None else None
    kd = weight.shape[2]
    if p[0]:
        x = ember.nn.functional.pad(x, [0, 0, 0, 0, p[0], p[0]])
    n, c, d = x.shape[0], x.shape[1], x.shape[2]
    od = (d - dl[0] * (kd - 1) - 1) // s[0] + 1
    if od <= 0:
        kh, kw = weight.shape[3:]
        raise RuntimeError(
            f"Calculated padded input size per channel: ({d} x {x.shape[3] + 2 * p[1]} x {x.shape[4] + 2 * p[2]}). "
            f"Kernel size: ({dl[0] * (kd - 1) + 1} x {dl[1] * (kh - 1) + 1} x {dl[2] * (kw - 1) + 1}). "
            "Kernel size can't be greater than actual input size"
        )
    out = None
    for t in range(kd):
        start = t * dl[0]
        taps = x[:, :, start : start + s[0] * (od - 1) + 1 : s[0]]
        frames = taps.transpose(1, 2).reshape(n * od, c, x.shape[3], x.shape[4])
        y = ember.conv2d(frames, weight[:, :, t], None, s[1:], p[1:], dl[1:], groups)
        out = y if out is None else out + y
    out = out.reshape(n, od, weight.shape[0], out.shape[-2], out.shape[-1]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return _dense(out.to(dtype))


def _onednn_applies(x, weight, bias, stride, dilation, groups):
    """Whether one oneDNN convolution computes this float32 conv3d (Note [3-d convolution]): PyTorch's
    rule for handing a convolution to oneDNN."""
    tensors = [x, weight] + ([bias] if bias is not None else [])
    if not (
        all(t.device.type == "cpu" and not t.is_meta and t.dtype == ember.float32 for t in tensors)
        and x.numel() > 0
        and weight.numel() > 0
        and ember.backends.mkldnn.is_available()
        and os.environ.get("EMBER_CONV_BACKEND") != "im2col"
    ):
        return False
    n, c, d, h = x.shape[:4]
    kh, kw = weight.shape[-2:]
    unit = all(v == 1 for v in stride) and all(v == 1 for v in dilation)
    if unit and n < 16 and kh == 1 and kw == 1 and ember.get_num_threads() <= 1:
        return False
    return groups > 1 or (kh > 3 and kw > 3) or n > 1 or n * c * d * h > 20480


def _conv3d_cuda(x, weight, bias, stride, padding, dilation, groups):
    """One cuDNN convolution (the CUDA kernel of ember.convolution)."""
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
        if padding == "same" and any(v != 1 for v in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = _same_padding(weight.shape[2:], dilation) if padding == "same" else [(0, 0)] * 3
        extra = [r - left for left, r in pads]
        if any(extra):
            x = ember.nn.functional.pad(x, [0, extra[2], 0, extra[1], 0, extra[0]])
        padding = [left for left, _ in pads]
    return ember.convolution(
        x, weight, bias, list(stride), list(_triple(padding)), list(dilation), False, [0] * 3, groups
    )


def _dense(t):
    """t with row-major strides, size-1 dimensions included (PyTorch's fresh output)."""
    strides, step = [], 1
    for size in reversed(t.shape):
        strides.append(step)
        step *= max(size, 1)
    if tuple(reversed(strides)) == tuple(t.stride()):
        return t
    return t.clone(memory_format=ember.contiguous_format)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x**p) ** (1/p), as kd * kh * kw * avg_pool3d(x**p)."""
    from ember.nn.functional import avg_pool3d, max_pool3d, relu
    from ember.nn.modules.utils import _triple as _as_triple

    # As PyTorch: a sequence is taken as it is (one of the wrong length fails to unpack).
    kd, kh, kw = _as_triple(kernel_size)
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool3d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (ember.sign(out) * relu(ember.abs(out))).mul(kd * kh * kw).pow(1.0 / norm_type)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool3d: each value back at its flat index, zeros elsewhere."""
    from ember.nn._functional_pooling import _ntuple, _unpool, _unpool_size

    kernel = _ntuple(kernel_size, 3)
    stride = kernel if stride is None else _ntuple(stride, 3)
    padding = _ntuple(padding, 3)
    size = _unpool_size(input, kernel, stride, padding, output_size)
    return _unpool(input, indices, size, stride, padding)
