"""ctc_loss and fractional max pooling: functions of ember.nn.functional with
torch.nn.functional's signatures.

Note [CTC as a batched recursion]
Each target is widened to blank, l1, blank, l2, ..., blank (2S+1 states). The
log forward variables alpha (N, 2S+1) advance one time step at a time, every
sample at once: a state takes its own value, its left neighbour's and, for a
label different from the one two back, the value two back, log-sum-exp'ed, plus
the log-probability of its symbol. Samples past their input length keep their
alpha. The loss is minus the log-sum-exp of the last two states. A large finite
sentinel stands for log(0), so autograd never meets inf - inf; losses at the
sentinel are impossible alignments and become inf (or 0 with zero_infinity).
PyTorch's gradient with respect to log_probs carries an extra exp(log_probs)
for the time steps inside each input (the form that is exact once chained
through log_softmax); a zero-valued term adds it here.

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

__all__ = [
    "ctc_loss",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

_LOG_ZERO = -1e30


def _as_lengths(lengths, name, batch):
    if isinstance(lengths, ember.Tensor):
        lengths = lengths.tolist()
    lengths = [int(v) for v in (lengths if isinstance(lengths, (list, tuple)) else [lengths])]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected {name} to have value at most {batch}, but got value {len(lengths)}")
    return lengths


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss (Note [CTC as a batched recursion])."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    batched = log_probs.dim() == 3
    if not batched:
        if log_probs.dim() != 2:
            raise RuntimeError(f"ctc_loss: expected log_probs to be 2-D or 3-D, got {log_probs.dim()}-D")
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 and isinstance(target_lengths, int) else targets
    lp = log_probs
    steps, batch, classes = lp.shape
    if blank < 0 or blank >= classes:
        raise RuntimeError("blank must be in label range")
    in_lens = _as_lengths(input_lengths, "input_lengths", batch)
    tg_lens = _as_lengths(target_lengths, "target_lengths", batch)
    for b in range(batch):
        if in_lens[b] > steps or in_lens[b] < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got value {in_lens[b]} "
                f"(while checking arguments for ctc_loss_cpu)"
            )
    # the targets of each sample, padded to the longest
    longest = max(tg_lens) if tg_lens else 0
    if targets.dim() == 1:
        offsets = [0]
        for n in tg_lens[:-1]:
            offsets.append(offsets[-1] + n)
        flat = targets.tolist()
        rows = [flat[o : o + n] for o, n in zip(offsets, tg_lens)]
    else:
        rows = [targets[b, : tg_lens[b]].tolist() for b in range(batch)]
        for b in range(batch):
            if tg_lens[b] > targets.shape[1]:
                raise RuntimeError(
                    f"Expected tensor to have size at least {tg_lens[b]} at dimension 1, but got size "
                    f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)"
                )
    states = 2 * longest + 1
    labels = [[blank] * states for _ in range(batch)]
    skip = [[False] * states for _ in range(batch)]
    for b, row in enumerate(rows):
        for j, label in enumerate(row):
            labels[b][2 * j + 1] = int(label)
            if j > 0 and int(label) != int(row[j - 1]):
                skip[b][2 * j + 1] = True
    labels = ember.tensor(labels, dtype=ember.int64).reshape(batch, states)
    skip = ember.tensor(skip, dtype=ember.bool).reshape(batch, states)
    # emissions: (T, N, states) log-probabilities of each state's symbol
    emit = lp.gather(2, labels.unsqueeze(0).expand(steps, batch, states))
    floor = ember.full((batch, 1), _LOG_ZERO, dtype=lp.dtype)
    start = ember.full((batch, states), _LOG_ZERO, dtype=lp.dtype)
    first = ember.zeros(batch, states, dtype=ember.bool)
    first[:, 0] = True
    if states > 1:
        first[:, 1] = ember.tensor([n > 0 for n in tg_lens], dtype=ember.bool)
    alpha = ember.where(first, emit[0], start) if steps else start
    in_len_t = ember.tensor(in_lens, dtype=ember.int64)
    for t in range(1, steps):
        one_back = ember.cat([floor, alpha[:, :-1]], 1)
        two_back = ember.cat([floor, floor, alpha[:, :-2]], 1)[:, :states]
        two_back = ember.where(skip, two_back, ember.full_like(two_back, _LOG_ZERO))
        step = ember.logsumexp(ember.stack([alpha, one_back, two_back]), 0) + emit[t]
        alpha = ember.where((in_len_t > t).unsqueeze(1), step, alpha)
    ends = ember.tensor([2 * n for n in tg_lens], dtype=ember.int64).unsqueeze(1)
    last = alpha.gather(1, ends).squeeze(1)
    before = alpha.gather(1, (ends - 1).clamp(min=0)).squeeze(1)
    before = ember.where(ends.squeeze(1) > 0, before, ember.full_like(before, _LOG_ZERO))
    nll = -ember.logsumexp(ember.stack([last, before]), 0)
    impossible = (nll > -_LOG_ZERO / 2) | ember.tensor([n == 0 for n in in_lens]) & ember.tensor(
        [n > 0 for n in tg_lens]
    )
    # PyTorch's gradient form: + exp(log_probs) inside each input (Note [CTC as a batched recursion])
    inside = (ember.arange(steps).unsqueeze(1) < in_len_t.unsqueeze(0)).to(lp.dtype).unsqueeze(2)
    extra = (lp.detach().exp() * inside * (lp - lp.detach())).sum((0, 2))
    nll = nll + extra
    inf = ember.full_like(nll, float("inf"))
    if zero_infinity:
        nll = ember.where(impossible, ember.zeros_like(nll), nll)
    else:
        nll = ember.where(impossible, inf + 0 * nll, nll)
    if reduction == "none":
        return nll if batched else nll.squeeze(0)
    if reduction == "sum":
        return nll.sum()
    return (nll / ember.tensor(tg_lens, dtype=lp.dtype).clamp(min=1)).mean()


# ---- fractional max pooling --------------------------------------------------------------------
def _fractional(input, kernel_size, output_size, output_ratio, return_indices, samples, dims):
    name = f"fractional_max_pool{dims}d"
    kernel = tuple(kernel_size) if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * dims
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(input.shape)}"
        )
    batched = input.dim() == dims + 2
    x = input if batched else input.unsqueeze(0)
    spatial = list(x.shape[2:])
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * dims
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    out = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size] * dims
    for d in range(dims):
        if out[d] + kernel[d] - 1 > spatial[d]:
            raise RuntimeError(
                f"{name}_out(): pool size {kernel[d]} too large relative to input size {spatial[d]} "
                f"and output size {out[d]}"
            )
    n, c = x.shape[0], x.shape[1]
    if samples is None:
        samples = ember.rand(n, c, dims, dtype=x.dtype)
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
