"""embedding_bag: sums, means or maxima of bags of embeddings, as torch.nn.functional.embedding_bag.

Note [Embedding bags as gathers and segment reductions]
The indices' rows are gathered once (index_select), weighted by
per_sample_weights, and reduced into their bag by index_add (sum, mean) or
scatter_reduce amax (max); entries equal to padding_idx are left out, and an
empty bag gives zeros. scale_grad_by_freq divides each gathered row's
gradient, not its value (the scale of _frequency_scale).
"""

from __future__ import annotations

import warnings

import ember
from ember._tensor import Tensor

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def _type_str(obj):
    return "<class 'torch.Tensor'>" if type(obj) is Tensor else str(type(obj))


def _flatten_input(input, offsets, per_sample_weights, include_last_offset):
    """(indices, offsets, per_sample_weights, include_last_offset) with 1-D indices."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {_type_str(offsets)}"
            )
        offsets = ember.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input.reshape(-1), offsets, per_sample_weights, False
    if input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, per_sample_weights, include_last_offset
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")


_INDEX_CHECK = (
    "Expected i < index_size to be true, but got false.  (Could this error message be improved?  If so, please "
    "report an enhancement request to PyTorch.)"
)


def _bag_of_each_index(n, offsets, include_last_offset):
    """(bag number of each of the n indices, number of bags)."""
    starts = offsets.tolist()
    if starts and starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
            f"However, got {starts[0]}\n[ torch.LongTensor{{}} ]"
        )
    if starts and starts[-1] > n:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {starts[-1]}"
        )
    if any(a > b for a, b in zip(starts, starts[1:])):
        raise RuntimeError(_INDEX_CHECK)
    bags = len(starts) - 1 if include_last_offset else len(starts)
    ends = starts[1 : bags + 1] if include_last_offset else starts[1:] + [n]
    if not bags:
        return ember.zeros(0, dtype=ember.int64, device=offsets.device), bags
    # bag j holds the positions [starts[j], ends[j]), which follow one another (found on the host)
    total = ends[-1]
    ids = ember._C._segment_ids(ember.tensor(starts[:bags] + [total], dtype=ember.int64), total)
    return ids.to(offsets.device), bags


def _frequency_scale(idx, weight):
    """The gradient scale of each index: PyTorch's CPU kernel divides the gradient of the k-th distinct index
    (in increasing order) by the count of the k-th entry of the sorted indices, which is that index's own
    count only where the two coincide."""
    counts = ember.bincount(idx, minlength=weight.size(0)).to(weight.dtype)
    ordered = idx.sort().values
    distinct = ember.unique(ordered)
    per_distinct = 1.0 / counts.index_select(0, ordered[: distinct.numel()])
    return per_distinct.index_select(0, ember.searchsorted(distinct, idx))


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """One row per bag: the sum, mean or maximum of the embeddings of its indices (Note [Embedding bags as
    gathers and segment reductions])."""
    if weight.dtype == ember.long and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` is "
            "deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must have the "
            f"same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    input, offsets, per_sample_weights, include_last_offset = _flatten_input(
        input, offsets, per_sample_weights, include_last_offset
    )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with ember.no_grad():
            ember.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    # The checks of torch.embedding_bag's kernel, after the Python ones.
    if padding_idx is not None:
        rows = weight.size(0)
        if not -rows <= padding_idx < rows:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{rows} through {rows - 1}, "
                f"but got {padding_idx}"
            )
        padding_idx %= rows
    if not weight.dtype.is_floating_point:
        name = "CPUBoolType" if weight.dtype == ember.bool else weight.type()
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, BFloat16, "
            f"Float, Double; but got {name} instead (while checking arguments for embedding_bag)"
        )
    if input.dtype not in (ember.int64, ember.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"{input.type()} instead (while checking arguments for embedding_bag)"
        )
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported; use sparse=False")
    bag, bags = _bag_of_each_index(input.numel(), offsets, include_last_offset)
    idx = input[: bag.numel()].long()
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= weight.size(0)):
        raise RuntimeError(_INDEX_CHECK)
    weights = per_sample_weights[: bag.numel()] if per_sample_weights is not None else None
    scale = _frequency_scale(idx, weight) if scale_grad_by_freq and idx.numel() else None
    if padding_idx is not None:
        keep = (idx != padding_idx).nonzero().squeeze(1)
        idx, bag = idx.index_select(0, keep), bag.index_select(0, keep)
        weights = weights.index_select(0, keep) if weights is not None else None
        scale = scale.index_select(0, keep) if scale is not None else None
    if mode == "max" and weight.device.type in ("cpu", "cuda") and not weight.is_meta:
        return ember._embedding_bag_max(weight, idx, bag, bags)[0]
    if mode == "max":
        rows = weight.index_select(0, idx)
        zeros = ember.zeros((bags, weight.size(1)), dtype=weight.dtype, device=weight.device)
        return zeros.scatter_reduce(0, bag.unsqueeze(1).expand(-1, weight.size(1)), rows, "amax", include_self=False)
    plan = _BagPlan(idx, bag, bags, scale, mode)
    needs_graph = ember.is_grad_enabled() and (weight.requires_grad or (weights is not None and weights.requires_grad))
    if not needs_graph:
        return plan.reduce(weight, weights)
    if weights is None:
        return _embedding_bag_function().apply(plan, weight)
    return _embedding_bag_function().apply(plan, weight, weights)


class _BagPlan:
    """Which bag each kept index goes to, and the reduction (sum or mean)."""

    def __init__(self, idx, bag, bags, scale, mode):
        self.idx, self.bag, self.bags, self.scale, self.mode = idx, bag, bags, scale, mode
        self.sizes = None

    def reduce(self, weight, weights):
        rows = weight.index_select(0, self.idx)
        if weights is not None:
            rows = rows * weights.unsqueeze(1)
        out = ember.zeros((self.bags, weight.size(1)), dtype=weight.dtype, device=weight.device)
        out = out.index_add(0, self.bag, rows)
        if self.mode == "mean":
            self.sizes = ember.bincount(self.bag, minlength=self.bags).clamp(min=1).to(weight.dtype).unsqueeze(1)
            out = out / self.sizes
        return out

    def backward(self, grad, weight, weights, want_weight, want_weights):
        """The gradients of reduce's weight and weights: the steps of its graph's backward, in its order."""
        if self.mode == "mean":
            grad = grad / self.sizes
        g_rows = grad.index_select(0, self.bag)
        g_weights = None
        if want_weights:
            g_weights = (g_rows * weight.index_select(0, self.idx)).sum(1, keepdim=True).squeeze(1)
        g_weight = None
        if want_weight:
            if weights is not None:
                g_rows = g_rows * weights.unsqueeze(1)
            if self.scale is not None:
                g_rows = g_rows * self.scale.unsqueeze(1)
            g_weight = ember.zeros(weight.shape, dtype=g_rows.dtype, device=g_rows.device)
            g_weight.index_put_((self.idx,), g_rows, accumulate=True)
        return g_weight, g_weights


_EMBEDDING_BAG = []


def _embedding_bag_function():
    """embedding_bag's sum and mean recorded as one EmbeddingBagBackward0 node."""
    if _EMBEDDING_BAG:
        return _EMBEDDING_BAG[0]
    from ember._linalg_autograd import _node_name
    from ember.autograd.function import Function

    class EmbeddingBag(Function):
        @staticmethod
        def forward(ctx, plan, weight, weights=None):
            ctx.plan = plan
            ctx.save_for_backward(weight, weights)
            return plan.reduce(weight, weights)

        @staticmethod
        def backward(ctx, grad):
            weight, weights = ctx.saved_tensors
            want_weights = len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]
            _, g_weights = ctx.plan.backward(grad, weight, weights, False, want_weights)
            g_weight = None
            if ctx.needs_input_grad[1]:
                # As PyTorch's: the weight's gradient has no derivative of its own.
                gradient = BagGradient.apply if ember.is_grad_enabled() else _weight_gradient
                g_weight = gradient(ctx.plan, grad, weight, weights)
            return (None, g_weight, g_weights) if weights is not None else (None, g_weight)

    def _weight_gradient(plan, grad, weight, weights):
        return plan.backward(grad, weight, weights, True, False)[0]

    class BagGradient(Function):
        @staticmethod
        def forward(ctx, plan, grad, weight, weights):
            return _weight_gradient(plan, grad, weight, weights)

        @staticmethod
        def backward(ctx, _grad):
            raise NotImplementedError("the derivative for '_embedding_bag_backward' is not implemented.")

    _node_name(EmbeddingBag, "EmbeddingBagBackward0")
    _node_name(BagGradient, "EmbeddingBagBackwardBackward0")
    _EMBEDDING_BAG.append(EmbeddingBag)
    return EmbeddingBag
