"""The margin, embedding, ranking and likelihood losses of ember.nn.functional, with
torch.nn.functional's signatures, defaults and argument checks.

PyTorch computes most of these as composites of elementwise operators and a
final reduction; the same operators run here in the same order, so results
agree bit for bit. multi_margin_loss and multilabel_margin_loss are native
kernels in PyTorch and composites here (same values up to rounding)."""

from __future__ import annotations

import math

import ember
from ember import _argcheck

__all__ = [
    "cosine_embedding_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "poisson_nll_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


def _enum(reduction, size_average=None, reduce=None):
    from ember.nn._functional_nn import _reduction

    return _reduction(reduction, size_average, reduce)


def _reduce(loss, r):
    if r == 1:
        return loss.mean()
    if r == 2:
        return loss.sum()
    return loss


def _legacy_string(reduction, size_average, reduce):
    if size_average is not None or reduce is not None:
        from ember.nn.functional import _legacy_reduction

        return _legacy_reduction(size_average, reduce)
    return reduction


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r = _enum(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    # margin is a C++ double in PyTorch: integer inputs give a floating loss
    return _reduce((-target * (input1 - input2) + float(margin)).clamp_min_(0), r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    r = _enum(reduction, size_average, reduce)
    zeros = ember.zeros_like(input)
    # margin - input in input's dtype (margin filled into a tensor like
    # input first), as PyTorch's C++ operator does: integer inputs stay integer.
    margin_clamp = ember.empty_like(input).fill_(margin).sub_(input).clamp_min_(0)
    output_margin = ember.where(target != 1, margin_clamp, zeros)
    output_self = ember.where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, r)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r = _enum(reduction, size_average, reduce)
    if ember.is_grad_enabled() and isinstance(target, ember.Tensor) and target.requires_grad:
        raise RuntimeError(
            "The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
            "This input cannot have requires_grad True."
        )
    if isinstance(input, ember.Tensor) and not (
        input.dtype.is_floating_point or input.dtype.is_complex or input.dtype == ember.bool
    ):
        from ember._ops_math import _scalar_name

        # The loss is computed into a tensor of input's dtype.
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_scalar_name(input.dtype)}")
    # Each step rounded to input's dtype, as PyTorch's out= kernel computes it.
    return _recorded("SoftMarginLossBackward0", lambda x: _reduce(ember.neg(x).mul_(target).exp().log1p(), r), input)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    from ember.nn.functional import logsigmoid

    reduction = _legacy_string(reduction, size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


_EPSILON = 1e-12


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r = _enum(reduction, size_average, reduce)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    if targ_dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = (input1 * input1).sum(targ_dim) + _EPSILON
    mag_square2 = (input2 * input2).sum(targ_dim) + _EPSILON
    denom = (mag_square1 * mag_square2).sqrt_()
    cos = prod_sum / denom
    zeros = ember.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min_(0)
    output_pos = ember.where(target == 1, pos, zeros)
    output_neg = ember.where(target == -1, neg, zeros)
    return _reduce(output_pos + output_neg, r)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def triplet_margin_loss(
    anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"
):
    from ember.nn.functional import pairwise_distance

    r = _enum(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = ember.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(ember.clamp_min(margin + dist_pos - dist_neg, 0), r)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    from ember.nn.functional import pairwise_distance

    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = ember.minimum(dist_neg, distance_function(positive, negative))
    loss = ember.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return ember.sum(loss)
    if reduction == "mean":
        return ember.mean(loss)
    return loss


def poisson_nll_loss(
    input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"
):
    reduction = _legacy_string(reduction, size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = ember.exp(input) - target * input
    else:
        loss = input - target * ember.log(input + eps)
    if full:
        stirling = target * ember.log(target) - target + 0.5 * ember.log(2 * math.pi * target)
        loss += stirling.masked_fill(target <= 1, 0)  # in place, as PyTorch: loss keeps its dtype
    return _reduce(loss, _enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ember.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    in_shape, var_shape = list(input.shape), list(var.shape)
    if var_shape != in_shape:
        if in_shape[:-1] == var_shape:
            var = ember.unsqueeze(var, -1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(in_shape, var_shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with ember.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (ember.log(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


_MULTI_MARGIN_BINDING = _argcheck.Binding(
    "multi_margin_loss(Tensor input, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=1)"
)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """sum over j != y of max(0, margin - x[y] + x[j])**p (times weight[y]), divided by the class count."""
    r = _enum(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _MULTI_MARGIN_BINDING(input, target, p, margin, weight, r)
    ndim = input.dim()
    if not (ndim <= 1 and target.dim() <= 1 or ndim == 2 and target.dim() == 1):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )
    x = input.reshape(1, -1) if ndim <= 1 else input
    t = target.reshape(-1)
    n, c = x.shape
    if t.numel() != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {list(target.shape)}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    idx = t.unsqueeze(1)
    scale = weight.detach().index_select(0, t).unsqueeze(1) if weight is not None else None

    def margins(inp):
        x = inp.reshape(1, -1) if ndim <= 1 else inp
        z = (margin - x.gather(1, idx) + x).clamp_min(0)
        if p == 2:
            z = z * z
        if scale is not None:
            z = z * scale
        not_target = ember.ones_like(x, dtype=ember.bool).scatter_(1, idx, False)
        loss = ember.where(not_target, z, ember.zeros_like(z)).sum(1) / c
        if r == 0:
            return loss.reshape(list(target.shape)) if ndim <= 1 else loss
        return _reduce(loss, r)

    return _recorded("MultiMarginLossBackward0", margins, input)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """For the target classes j (listed until the first -1) and the others i:
    sum of max(0, 1 - (x[j] - x[i])), divided by the class count."""
    r = _enum(reduction, size_average, reduce)
    ndim = input.dim()
    if not (ndim <= 1 and target.dim() <= 1 or ndim == 2 and target.dim() == 2):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )
    if list(target.shape) != list(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    x = input.reshape(1, -1) if ndim <= 1 else input
    t = target.reshape(1, -1) if ndim <= 1 else target
    n, c = x.shape
    # Which classes are targets: those listed before the first -1 of each row.
    listed = (t >= 0).to(ember.int64).cumprod(1).to(ember.bool)
    safe = ember.where(listed, t, ember.zeros_like(t))
    hits = ember.zeros([n, c], dtype=ember.int64, device=x.device).scatter_add_(1, safe, listed.to(ember.int64))
    is_target = hits > 0
    mask = is_target.unsqueeze(2).logical_and(is_target.logical_not().unsqueeze(1))

    def margins(inp):
        x = inp.reshape(1, -1) if ndim <= 1 else inp
        # pair[b, j, i] = max(0, 1 - (x[b, j] - x[b, i])) for target j, non-target i.
        pair = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0)
        loss = ember.where(mask, pair, ember.zeros_like(pair)).sum([1, 2]) / c
        if r == 0:
            return loss.reshape([]) if ndim <= 1 else loss
        return _reduce(loss, r)

    return _recorded("MultilabelMarginLossBackward0", margins, input)


def _recorded(node, fn, *inputs):
    """fn(*inputs) recorded as one autograd node named as PyTorch's."""
    from ember._linalg_autograd import named

    return named(node, fn, *inputs)
