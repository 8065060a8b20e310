"""The pieces SyncBatchNorm builds a batch norm of several processes from: per-process statistics, their
combination, the normalization and its two backward steps, as torch.batch_norm_stats & co.

Note [Batch norm pieces on every device]
PyTorch has kernels for six of these on CUDA only (on CPU they raise NotImplementedError); Ember composes
them from reductions, so they run on every device. Statistics of reduced-precision inputs are kept in
float32, as PyTorch's CUDA kernels keep them. Channels are dimension 1; every other dimension is reduced.
"""

from __future__ import annotations

import ember

__all__ = [
    "batch_norm_backward_elemt",
    "batch_norm_backward_reduce",
    "batch_norm_elemt",
    "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts",
    "batch_norm_stats",
    "batch_norm_update_stats",
]
METHODS: list[str] = []


def _reduced_dims(input):
    if input.dim() < 2:
        raise ValueError(f"expected 2D or more input (got {input.dim()}D input)")
    return [0, *range(2, input.dim())]


def _per_channel(t, input):
    """A channel vector shaped to broadcast against input."""
    return t.reshape([1, -1] + [1] * (input.dim() - 2))


def _stat_dtype(input):
    return ember.float32 if input.dtype in (ember.float16, ember.bfloat16) else input.dtype


def _mean_and_biased_var(input):
    x = input.to(_stat_dtype(input))
    dims = _reduced_dims(input)
    mean = x.mean(dims)
    var = (x - _per_channel(mean, x)).square().mean(dims)
    return mean, var


def batch_norm_stats(input, eps):  # noqa: A002
    """(mean, invstd) of each channel: invstd = 1 / sqrt(biased variance + eps)."""
    mean, var = _mean_and_biased_var(input)
    return mean, (var + eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps, *, out=None):  # noqa: A002
    """(input - mean) * invstd * weight + bias, per channel, in input's dtype."""
    y = (input - _per_channel(mean, input)) * _per_channel(invstd, input)
    if weight is not None:
        y = y * _per_channel(weight, input)
    if bias is not None:
        y = y + _per_channel(bias, input)
    y = y.to(input.dtype)
    if out is not None:
        return out.copy_(y)
    return y


def batch_norm_gather_stats_with_counts(
    input,  # noqa: A002
    mean,
    invstd,
    running_mean,
    running_var,
    momentum,
    eps,
    counts,
):
    """The mean and invstd of the union of the groups whose per-group statistics are the rows of mean and
    invstd (counts[i] elements in group i); updates the running statistics (unbiased variance)."""
    counts = counts.to(mean.dtype).unsqueeze(1)
    total = counts.sum(0)
    var = ember.where(invstd == 0, 0.0, invstd.square().reciprocal() - eps)
    global_mean = (counts * mean).sum(0) / total
    global_var = (counts * (var + (mean - global_mean).square())).sum(0) / total
    with ember.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(global_mean.to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            unbiased = global_var * total / (total - 1)
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)
    return global_mean, (global_var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):  # noqa: A002
    """batch_norm_gather_stats_with_counts with the same count for every group."""
    counts = ember.full((mean.size(0),), float(count), dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_update_stats(input, running_mean, running_var, momentum):  # noqa: A002
    """(mean, biased variance) of each channel; the running statistics move towards the mean and the
    unbiased variance by momentum."""
    mean, var = _mean_and_biased_var(input)
    n = input.numel() // max(input.size(1), 1)
    with ember.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1)) if n > 1 else var * float("inf")
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)
    return mean, var


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):  # noqa: A002
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel; a part not asked for is None."""
    dims = _reduced_dims(input)
    dy = grad_out.to(_stat_dtype(input))
    sum_dy = dy.sum(dims)
    sum_dy_xmu = (dy * (input.to(dy.dtype) - _per_channel(mean, input))).sum(dims)
    grad_weight = (sum_dy_xmu * invstd).to(weight.dtype) if weight_g and weight is not None else None
    grad_bias = sum_dy.to(weight.dtype if weight is not None else sum_dy.dtype) if bias_g else None
    return (sum_dy if input_g else None, sum_dy_xmu if input_g else None, grad_weight, grad_bias)


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):  # noqa: A002
    """The input's gradient from the gathered sums: (dy - mean(dy) - (x - mean) * invstd^2 * mean(dy * (x -
    mean))) * invstd * weight, where count holds each process's element count."""
    norm = 1.0 / count.sum().to(sum_dy.dtype)
    mean_dy = _per_channel(sum_dy * norm, input)
    factor = _per_channel(invstd.square() * sum_dy_xmu * norm, input)
    scale = invstd * weight if weight is not None else invstd
    x_mu = input.to(sum_dy.dtype) - _per_channel(mean, input)
    grad = (grad_out.to(sum_dy.dtype) - mean_dy - x_mu * factor) * _per_channel(scale, input)
    return grad.to(input.dtype)
