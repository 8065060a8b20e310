"""Batch norm whose statistics cover the whole process group: each rank's
count, mean and biased variance per channel are all-gathered and combined
(Chan et al.'s parallel variance), so the result is that of batch norm over
the concatenated batch. Gradients reach every rank's input through the
gather, whose backward sums the gradients over the group."""

from __future__ import annotations

import ember
from ember.autograd import Function


class _AllGatherStats(Function):
    @staticmethod
    def forward(ctx, stats, group):
        import ember.distributed as dist

        ctx.group = group
        parts = [ember.zeros_like(stats) for _ in range(dist.get_world_size(group))]
        dist.all_gather(parts, stats.contiguous(), group=group)
        return ember.stack(parts)

    @staticmethod
    def backward(ctx, grad):
        import ember.distributed as dist

        total = grad.contiguous().clone()
        dist.all_reduce(total, group=ctx.group)
        return total[dist.get_rank(ctx.group)], None


def sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, group):
    """Training-mode batch norm of input (N, C, *) over every rank's batch in group; updates the running stats."""
    channels = input.size(1)
    dims = [d for d in range(input.dim()) if d != 1]
    count = input.numel() // channels
    if count > 0:
        local_mean = input.mean(dims)
        local_var = input.var(dims, unbiased=False)
    else:
        local_mean = input.new_zeros(channels)
        local_var = input.new_zeros(channels)
    counts = ember.full_like(local_mean.detach(), float(count))
    gathered = _AllGatherStats.apply(ember.stack([counts, local_mean, local_var]), group)
    counts, means, variances = gathered[:, 0], gathered[:, 1], gathered[:, 2]
    total = counts.sum(0)
    if (total <= 1).any():
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    mean = (counts * means).sum(0) / total
    var = (counts * (variances + (means - mean) ** 2)).sum(0) / total
    shape = [1, channels] + [1] * (input.dim() - 2)
    out = (input - mean.view(shape)) * ember.rsqrt(var.view(shape) + eps)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    if running_mean is not None:
        with ember.no_grad():
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            unbiased = var.detach() * (total / (total - 1))
            running_var.mul_(1 - momentum).add_(unbiased * momentum)
    return out
