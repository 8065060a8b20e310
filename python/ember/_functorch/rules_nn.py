"""Batching rules of nn.functional families that fold the vmap batch into an
existing dimension: batch normalisation (batch into channels), embedding
(batch into the table's rows) and pooling (batch into N). Each rule falls
back to the per-sample loop for argument combinations it does not fold."""

from __future__ import annotations

import ember
from ember._functorch.batched import BatchedTensor
from ember._functorch.rules import _at, _is_tensor, _materialize, _ndim, batch_size, fallback

_BN_NAMES = ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")

_BN_STATS_ERROR = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in "
    "place, were not batched.\nIf you are using a module and do not need eval mode, please set "
    "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please see "
    "the functorch website for resources on how to patch your module to work with vmap"
)


def _fold_channels(t, level, size):
    """A per-channel tensor (C,) or batched (B, C) as B*C channels, sample-major."""
    if t is None:
        return None
    if _at(t, level):
        return t.value.reshape(-1)
    return t.repeat(size)


def batch_norm_rule(op, level, args, kwargs):
    """batch_norm: each sample is its own batch, so the vmap batch joins the
    channels (B*C channels over N); per-sample running statistics are
    updated in place through a view of their batched value. Unbatched running
    statistics cannot take per-sample updates: PyTorch's error in training."""
    given = {**dict(zip(_BN_NAMES, args)), **kwargs}
    x = given["input"]
    mean, var = given.get("running_mean"), given.get("running_var")
    training = given.get("training", False)
    tensors = [given.get(k) for k in ("running_mean", "running_var", "weight", "bias")]
    if not _at(x, level):
        return fallback(op, level, args, kwargs)
    if training and any(t is not None and not _at(t, level) for t in (mean, var)):
        raise RuntimeError(_BN_STATS_ERROR)
    if any(_at(t, level) and not t.value.is_contiguous() for t in (mean, var) if t is not None):
        return fallback(op, level, args, kwargs)  # an in-place update must reach the batched value
    if any(isinstance(t, BatchedTensor) and not _at(t, level) for t in tensors):
        return fallback(op, level, args, kwargs)
    size = batch_size(level)
    v = x.value
    if v.dim() < 3:
        return fallback(op, level, args, kwargs)
    n, channels, rest = v.shape[1], v.shape[2], tuple(v.shape[3:])
    folded = v.transpose(0, 1).reshape(n, size * channels, *rest)
    out = op(
        folded,
        _fold_channels(mean, level, size),
        _fold_channels(var, level, size),
        _fold_channels(given.get("weight"), level, size),
        _fold_channels(given.get("bias"), level, size),
        training,
        given.get("momentum", 0.1),
        given.get("eps", 1e-5),
    )
    return BatchedTensor(out.reshape(n, size, channels, *rest).transpose(0, 1), level)


def embedding_rule(op, level, args, kwargs):
    """embedding: batched indices look up one table directly; a batched table
    (B, V, D) becomes one table of B*V rows and each sample's indices are
    offset by its row block."""
    names = ("input", "weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse")
    given = {**dict(zip(names, args)), **kwargs}
    indices, weight = given.pop("input"), given.pop("weight")
    if given.get("max_norm") is not None:
        return fallback(op, level, args, kwargs)  # renormalises the table in place
    if not _at(weight, level):
        if isinstance(weight, BatchedTensor) or not _at(indices, level):
            return fallback(op, level, args, kwargs)
        return BatchedTensor(op(indices.value, weight, **given), level)
    if given.get("padding_idx") is not None:
        return fallback(op, level, args, kwargs)
    if isinstance(indices, BatchedTensor) and not _at(indices, level):
        return fallback(op, level, args, kwargs)
    size = batch_size(level)
    table = weight.value
    rows = table.shape[1]
    idx = _materialize(indices, level)
    offsets = ember.arange(size, device=idx.device, dtype=idx.dtype).reshape(size, *([1] * (idx.dim() - 1))) * rows
    out = op(idx + offsets, table.reshape(size * rows, *table.shape[2:]), **given)
    return BatchedTensor(out, level)


def pool_rule(op, level, args, kwargs):
    """Pooling over `d` spatial dims: the vmap batch joins N (or becomes N
    for an input without one); indices returned with the values follow."""
    name = op.__name__.removesuffix("_with_indices")
    spatial = int(name[-2]) if name.endswith("d") and name[-2].isdigit() else None
    x = args[0] if args else kwargs.get("input")
    others = [*args[1:], *kwargs.values()]
    if spatial is None or not _at(x, level) or any(_is_tensor(t) for t in others):
        return fallback(op, level, args, kwargs)
    rest_args = args[1:] if args else ()
    rest_kwargs = {k: v for k, v in kwargs.items() if k != "input"}
    size = batch_size(level)
    v = x.value
    has_n = _ndim(x, level) == spatial + 2
    folded = v.reshape(size * v.shape[1], *v.shape[2:]) if has_n else v
    out = op(folded, *rest_args, **rest_kwargs)

    def unfold(t):
        return t.reshape(size, v.shape[1], *t.shape[1:]) if has_n else t

    if isinstance(out, tuple):
        return tuple(BatchedTensor(unfold(t), level) for t in out)
    return BatchedTensor(unfold(out), level)


POOLS = [
    f"{kind}{d}d{suffix}"
    for kind in ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool", "lp_pool")
    for d in (1, 2, 3)
    for suffix in ("", "_with_indices")
    if not (suffix and kind in ("avg_pool", "adaptive_avg_pool", "lp_pool"))
]

NN_RULES = {"batch_norm": batch_norm_rule, "embedding": embedding_rule, **dict.fromkeys(POOLS, pool_rule)}
