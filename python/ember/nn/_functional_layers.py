"""Convolution, pooling and normalisation functions of ember.nn.functional,
with torch.nn.functional's signatures, defaults and argument checks."""

from __future__ import annotations

import ember

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "group_norm",
    "layer_norm",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
]

# The operators themselves parse their arguments (ints or tuples, padding strings).
conv1d = ember.conv1d
conv2d = ember.conv2d
conv_transpose2d = ember.conv_transpose2d


def _stride_or_empty(stride):
    return [] if stride is None else stride


def _single(v, name):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"{name} must be a single int, or a tuple of one int")
        return int(v[0])
    return v


def _squeeze_dim(t, dim):
    # squeeze(dim) where the operator exists; a reshape otherwise.
    if hasattr(t, "squeeze"):
        return t.squeeze(dim)
    shape = list(t.shape)
    del shape[dim]
    return t.reshape(shape)


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return ember.max_pool2d_with_indices(input, kernel_size, _stride_or_empty(stride), padding, dilation, ceil_mode)


def _max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return ember.max_pool2d(input, kernel_size, _stride_or_empty(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling; with return_indices=True also the flat h*W+w position of each maximum."""
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    k = _single(kernel_size, "max_pool1d: kernel_size")
    s = (
        k
        if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
        else _single(stride, "max_pool1d: stride")
    )
    p = _single(padding, "max_pool1d: padding")
    d = _single(dilation, "max_pool1d: dilation")
    out, idx = ember.max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode)
    return _squeeze_dim(out, -2), _squeeze_dim(idx, -2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling, computed as 2-d pooling over a height of 1."""
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    return ember.avg_pool2d(
        input,
        kernel_size,
        _stride_or_empty(stride),
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling, computed as 2-d pooling over a height of 1."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    k = _single(kernel_size, "avg_pool1d: kernel_size")
    s = k if stride is None else _single(stride, "avg_pool1d: stride")
    p = _single(padding, "avg_pool1d: padding")
    out = ember.avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad, None)
    return _squeeze_dim(out, -2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size; None in output_size keeps that input size."""
    from ember.nn._functional_pooling import _output_size_with_default

    output_size = _output_size_with_default(output_size, input.shape)
    if isinstance(output_size, int):
        size = [output_size, output_size]
    else:
        size = list(output_size)
        if len(size) == 2:
            size = [input.size(i - 2) if v is None else v for i, v in enumerate(size)]
    # (A 1x1 output is computed as a mean over the last two dims, as in PyTorch.)
    return ember.adaptive_avg_pool2d(input, size)


def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalises each channel; in training with the batch's statistics (and updates the running ones)."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return ember.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalises over the trailing dimensions given by normalized_shape."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return ember.layer_norm(input, normalized_shape, weight, bias, eps, False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises over groups of channels (and all positions) per sample."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return ember.group_norm(input, num_groups, weight, bias, eps, False)
