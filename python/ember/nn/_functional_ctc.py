"""ctc_loss and fractional max pooling: functions of ember.nn.functional with
torch.nn.functional's signatures.

ctc_loss reduces the per-sample losses of the C++ _ctc_loss (cpu/CtcLoss.cpp).

Note [Fractional max pooling windows]
For input size n, window k and output size m, with a uniform sample u per
plane and dimension (2-d: u[..., 0] for the width, u[..., 1] for the height;
3-d: depth, height, width), window
i starts at int((i + u) * a) - int(u * a), a = (n - k) / (m - 1), and the last
starts at n - k: PyTorch's sequence, so the same samples pick the same windows.
Without _random_samples they are drawn as rand(N, C, dims) in the input's dtype.
"""

from __future__ import annotations

import ember
from ember import _C

__all__ = [
    "ctc_loss",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]


def _as_lengths(lengths, name):
    if isinstance(lengths, ember.Tensor):
        if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == ember.bool:
            raise RuntimeError(f"{name} must be integral")
        return [int(v) for v in lengths.reshape(-1).tolist()]
    if isinstance(lengths, (list, tuple)):
        return [int(v) for v in lengths]
    return [int(lengths)]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss (Note [CTC recursions] in cpu/CtcLoss.cpp)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    in_lens = _as_lengths(input_lengths, "input_lengths")
    tg_lens = _as_lengths(target_lengths, "target_lengths")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if targets.dtype != ember.int64:
        targets = targets.to(ember.int64)
    loss = ember._ctc_loss(lp, targets, in_lens, tg_lens, blank, zero_infinity)[0]
    if zero_infinity:
        loss = ember.where(loss == float("inf"), ember.zeros((), dtype=loss.dtype), loss)
    if reduction == "mean":
        return (loss / ember.tensor(tg_lens, dtype=loss.dtype, device=loss.device).clamp_min(1)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.squeeze(0)


# ---- fractional max pooling --------------------------------------------------------------------
_FRACTIONAL_SIGNATURES = {}


def _check_fractional_types(dims, *args):
    parsed = _FRACTIONAL_SIGNATURES.get(dims)
    if parsed is None:
        form = (
            f"fractional_max_pool{dims}d(Tensor input, int[{dims}] kernel_size, int[{dims}] output_size, "
            "Tensor random_samples)"
        )
        parsed = _FRACTIONAL_SIGNATURES[dims] = _C._arg_signatures([form], False)
    _C._check_args(parsed, *args)


def _fractional(input, kernel_size, output_size, output_ratio, return_indices, samples, dims):
    name = f"fractional_max_pool{dims}d"
    kernel = tuple(kernel_size) if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * dims
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    # PyTorch's Python code reads these sizes before its binding checks the
    # rank, so a tensor of too few dims raises their IndexError first.
    if output_size is None:
        if dims == 2 and len(output_ratio) > 2:  # as PyTorch: a plain number raises TypeError here
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        from ember.nn._functional_pooling import _ntuple

        ratio = _ntuple(output_ratio, dims)
        output_size = [int(input.size(-dims + d) * ratio[d]) for d in range(dims)]
    if samples is None:
        if input.dim() != dims + 1:
            input.size(0)
        input.size(-(dims + 1))
    # Then PyTorch's binding checks the argument types, and its kernel the
    # lengths and the rank.
    _check_fractional_types(dims, input, kernel_size, output_size, input if samples is None else samples)
    for arg, value in (("kernel_size", kernel_size), ("output_size", output_size)):
        if isinstance(value, (list, tuple)) and len(value) != dims:
            raise RuntimeError(
                f"{name}: {arg} must either be a single Int or tuple of {'three ' if dims == 3 else ''}Ints"
            )
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(input.shape)}")
    batched = input.dim() == dims + 2
    x = input if batched else input.unsqueeze(0)
    spatial = list(x.shape[2:])
    out = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size] * dims
    for d in range(dims):
        if out[d] + kernel[d] - 1 > spatial[d] and dims == 2:
            side = ("height", "width")[d]
            raise RuntimeError(f"{name}(): pool {side} {kernel[d]} too large relative to input {side} {spatial[d]}")
        if out[d] + kernel[d] - 1 > spatial[d]:
            raise RuntimeError(
                f"{name}_out(): pool size {kernel[d]} too large relative to input size {spatial[d]} "
                f"and output size {out[d]}"
            )
    n, c = x.shape[0], x.shape[1]
    if samples is None:
        samples = ember.rand(n, c, dims, dtype=x.dtype, device=None if x.is_meta else x.device)
    if dims == 2 and x.device.type in ("cpu", "cuda") and not x.is_meta:
        result, indices = ember.fractional_max_pool2d(x, list(kernel), out, samples)
        if not batched:
            result, indices = result.squeeze(0), indices.squeeze(0)
        return (result, indices) if return_indices else result
    # window starts of every plane, (N, C, out_d) per dimension, computed in float64 as PyTorch's
    # kernel does (its accumulate type); int() truncation is floor for these non-negative values
    order = [dims - 1 - d for d in range(dims)] if dims == 2 else list(range(dims))
    u = samples.to(ember.float64)
    index = None
    stride = 1
    for d in reversed(range(dims)):
        sample = u[:, :, order[d]].unsqueeze(-1)
        if out[d] > 1:
            alpha = (spatial[d] - kernel[d]) / (out[d] - 1)
            steps = ember.arange(out[d], dtype=ember.float64)
            starts = ember.floor((steps + sample) * alpha) - ember.floor(sample * alpha)
            last = ember.arange(out[d]) == out[d] - 1
            starts = ember.where(last, ember.full_like(starts, spatial[d] - kernel[d]), starts).long()
        else:
            starts = ember.full((n, c, 1), spatial[d] - kernel[d], dtype=ember.int64)
        offsets = starts.unsqueeze(-1) + ember.arange(kernel[d])  # (N, C, out_d, k_d)
        shape = [n, c] + [1] * dims + [1] * dims
        shape[2 + d], shape[2 + dims + d] = out[d], kernel[d]
        offsets = offsets.reshape(shape) * stride
        index = offsets if index is None else index + offsets
        stride *= spatial[d]
    cells = 1
    for v in out:
        cells *= v
    window = 1
    for v in kernel:
        window *= v
    index = index.expand([n, c] + out + list(kernel)).reshape(n, c, cells, window)
    flat = x.reshape(n, c, -1)
    values = flat.gather(2, index.reshape(n, c, -1)).reshape(n, c, cells, window)
    # the first maximum in window order; a NaN wins
    nan = values.isnan()
    key = ember.where(nan, ember.full_like(values, float("inf")), values)
    pick = key.detach().argmax(-1, keepdim=True)
    chosen = index.gather(3, pick).squeeze(3)
    result = flat.gather(2, chosen).reshape([n, c] + out)
    indices = chosen.reshape([n, c] + out)
    if not batched:
        result, indices = result.squeeze(0), indices.squeeze(0)
    return (result, indices) if return_indices else result


def fractional_max_pool2d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 2)


def fractional_max_pool2d(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    """Max pooling over pseudo-random windows (Note [Fractional max pooling windows])."""
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2)


def fractional_max_pool3d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 3)


def fractional_max_pool3d(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3)
