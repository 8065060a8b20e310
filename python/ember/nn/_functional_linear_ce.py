"""F.linear_cross_entropy: cross entropy of a linear layer's logits, optionally
chunked over the batch so the (N, C) logits are never held whole.

The reference form is ``cross_entropy(linear(input, weight, bias), target)``.
With ``options`` (LinearCrossEntropyOptions) the batch is processed in chunks
of rows: each chunk's logits are formed, turned into its loss and (for "mean"
and "sum") into its share of the three gradients at once, then dropped; the
backward only scales the stored gradients. For reduction="none" the backward
recomputes the chunks with the upstream gradient folded into the row weights.
A 16-bit input may accumulate in a wider ``acc_dtype``; the policy decides
which intermediates use it (``_ChunkPlan``).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import ember
from ember.autograd.function import Function

__all__ = ["linear_cross_entropy"]

_CHUNKED_REDUCTIONS = ("mean", "sum", "none")


class _ChunkPlan:
    """The dtypes and buffers of one chunked call, decided from the input
    dtype, acc_dtype, the policy and which gradients are wanted."""

    def __init__(self, x, weight, bias, reduction, policy, acc_dtype, want_gx, want_gw, want_gb):
        dtype = x.dtype
        if dtype != acc_dtype and not (dtype in (ember.float16, ember.bfloat16) and acc_dtype == ember.float32):
            raise RuntimeError(
                "linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, "
                f"but got {acc_dtype} acc_dtype and {dtype} inputs."
            )
        self.dtype, self.acc = dtype, acc_dtype
        self.mixed = mixed = dtype != acc_dtype
        lean = policy in ("balanced", "compact")
        if mixed:
            self.loss_dtype = acc_dtype if dtype == ember.float16 else dtype
            self.gx_dtype = dtype if lean else acc_dtype
            # float16 under a lean policy keeps half-size logits; otherwise logits are widened.
            self.logits_dtype = dtype if dtype == ember.float16 and lean else acc_dtype
            self.row_weight_dtype = acc_dtype
        else:
            self.loss_dtype = self.gx_dtype = self.logits_dtype = self.row_weight_dtype = dtype
        self.weight_dtype = self.logits_dtype if mixed else dtype
        # The weight gradient is staged per chunk in acc_dtype unless "compact" can add it in place.
        self.stage_gw = want_gw and not (policy == "compact" and self.logits_dtype == dtype)
        self.stage_gb = want_gb and mixed
        self.stage_gx = want_gx and self.gx_dtype != self.weight_dtype
        self.widen_x = mixed and (want_gw or dtype != self.logits_dtype)
        self.forward_widened_x = mixed and dtype != self.logits_dtype
        self.bias = bias if bias is None or bias.dtype == self.logits_dtype else bias.to(self.logits_dtype)
        self.weight = weight if self.weight_dtype == dtype else weight.to(self.weight_dtype)
        self.reduction = reduction


def _row_weights(plan, target, class_weight, ignore_index, num_classes, upstream):
    """(target with ignored rows pointed at class 0, the signed per-row weight of the loss)."""
    ignored = target == ignore_index
    if ignore_index < 0 or ignore_index >= num_classes:
        target = ember.where(ignored, 0, target)
    dtype = plan.row_weight_dtype
    if class_weight is None:
        rows = ignored.logical_not().to(dtype)
    elif target.numel() > class_weight.numel():
        rows = ember.where(ignored, 0, class_weight.to(dtype).index_select(0, target))
    else:
        rows = ember.where(ignored, 0, class_weight.index_select(0, target).to(dtype))
    if plan.reduction == "mean":
        total = rows.sum()
        rows.div_(ember.where(total == 0, math.nan, -total))
    elif plan.reduction == "sum":
        rows.neg_()
    elif upstream is not None:  # "none" in backward: -w[t] * grad_output per row
        rows.neg_().mul_(upstream.to(rows.dtype))
    return target, rows


class _ChunkConfig(NamedTuple):
    """How one call is chunked: options resolved against its shapes and dtype."""

    reduction: str
    ignore_index: int
    rows: int  # rows per chunk
    policy: str
    acc_dtype: ember.dtype


def _chunked(x, weight, target, bias, class_weight, config, wants=(False, False, False), upstream=None):
    """One pass over the chunks: (loss, grad_input, grad_weight, grad_bias);
    `wants` says which of the three gradients to compute.

    reduction="none" without ``upstream`` gives the per-row losses only; with
    it, the gradients of sum(upstream * loss)."""
    reduction, ignore_index, rows_per_chunk, policy, acc_dtype = config
    want_gx, want_gw, want_gb = wants
    if target.dtype != ember.int64:
        raise TypeError(f"linear_cross_entropy: target dtype must be torch.int64, got {target.dtype}.")
    if bias is not None and tuple(bias.shape) != tuple(weight.shape[:-1]):
        raise RuntimeError(
            f"linear_cross_entropy: expected linear_bias shape {tuple(weight.shape[:-1])}, got {tuple(bias.shape)}."
        )
    plan = _ChunkPlan(x, weight, bias, reduction, policy, acc_dtype, want_gx, want_gw, want_gb)
    n, features = x.shape
    classes = weight.shape[0]
    device, dtype, acc = x.device, plan.dtype, plan.acc
    target, rows = _row_weights(plan, target, class_weight, ignore_index, classes, upstream)
    logits_buf = ember.empty((rows_per_chunk, classes), dtype=plan.logits_dtype, device=device)
    row_buf = ember.empty((rows_per_chunk,), dtype=plan.logits_dtype, device=device)
    wide_x_buf = ember.empty((rows_per_chunk, features), dtype=acc, device=device) if plan.widen_x else None
    losses_only = reduction == "none" and upstream is None
    want_grads = want_gx or want_gw or want_gb

    gx = ember.empty(tuple(x.shape) if want_gx else (0, 0), dtype=plan.gx_dtype, device=device)
    gw = ember.zeros(tuple(weight.shape) if want_gw else (0, 0), dtype=dtype, device=device)
    gb = ember.zeros(tuple(weight.shape[:-1]) if want_gb else (0,), dtype=dtype, device=device)
    gx_stage = (
        ember.empty((rows_per_chunk, features), dtype=plan.weight_dtype, device=device) if plan.stage_gx else None
    )
    gw_stage = ember.empty((classes, features), dtype=acc, device=device) if plan.stage_gw else None
    gb_stage = ember.zeros(tuple(weight.shape[:-1]), dtype=acc, device=device) if plan.stage_gb else None
    wide_logits = None
    if plan.stage_gw and plan.logits_dtype != acc:
        wide_logits = ember.empty((rows_per_chunk, classes), dtype=acc, device=device)
    if losses_only:
        loss = ember.empty((n,), dtype=dtype, device=device)
    else:
        loss = ember.zeros((), dtype=plan.loss_dtype, device=device)
        if reduction == "mean" and n == 0:
            loss.fill_(math.nan)

    for start in range(0, n, rows_per_chunk):
        size = min(rows_per_chunk, n - start)
        x_c = x.narrow(0, start, size)
        t_c = target.narrow(0, start, size)
        w_c = rows.narrow(0, start, size)
        x_wide = wide_x_buf.narrow(0, 0, size).copy_(x_c) if plan.widen_x else x_c
        logits = logits_buf.narrow(0, 0, size)
        ember.mm(x_wide if plan.forward_widened_x else x_c, plan.weight.T, out=logits)
        if plan.bias is not None:
            logits.add_(plan.bias)
        logits.sub_(ember.amax(logits, dim=1, keepdim=True, out=row_buf.narrow(0, 0, size).unsqueeze(1)))
        if losses_only:
            picked = logits.gather(1, t_c.unsqueeze(1)).squeeze(1)
            denom = logits.exp_().sum(1, dtype=acc)
            chunk_loss = denom.log_().sub_(picked.to(denom.dtype)).mul_(w_c.to(denom.dtype))
            loss.narrow(0, start, size).copy_(chunk_loss)
            continue
        loss.add_(w_c.dot(logits.gather(1, t_c.unsqueeze(1)).squeeze(1).to(w_c.dtype)))
        denom = logits.exp_().sum(1, dtype=acc)
        if want_grads:  # logits become softmax * row weight
            scale = ember.div(w_c, denom, out=row_buf.narrow(0, 0, size))
            ember.mul(logits, scale.unsqueeze(1), out=logits)
        loss.sub_(w_c.to(denom.dtype).dot(denom.log_()))
        if want_gb:
            acc_b = gb_stage if plan.stage_gb else gb
            acc_b.sub_(logits.sum(0, dtype=acc if plan.mixed else dtype))
            acc_b.index_add_(0, t_c, w_c)
            if plan.stage_gb:
                gb.add_(acc_b.to(gb.dtype))
                acc_b.zero_()
        if want_gx:
            gx_c = gx_stage.narrow(0, 0, size) if plan.stage_gx else gx.narrow(0, start, size)
            ember.mul(plan.weight.index_select(0, t_c), w_c.to(gx_c.dtype).unsqueeze(1), out=gx_c)
            ember.addmm(gx_c, logits, plan.weight, alpha=-1, out=gx_c)
            if plan.stage_gx:
                gx.narrow(0, start, size).copy_(gx_c)
        if want_gw:
            # gw -= softmax-weighted rows^T x, then the target rows take w * x back.
            if plan.stage_gw:
                src = wide_logits.narrow(0, 0, size).copy_(logits) if wide_logits is not None else logits
                ember.mm(src.T, x_wide, out=gw_stage)
                gw_stage.index_add_(0, t_c, _scaled_rows(plan, x_wide, x_c, w_c), alpha=-1)
                gw.sub_(gw_stage)
            else:
                gw.addmm_(logits.T, x_c, alpha=-1)
                gw.index_add_(0, t_c, _scaled_rows(plan, x_wide, x_c, w_c).to(gw.dtype), alpha=1)
    if losses_only:
        return loss, None, None, None
    return loss.to(dtype), gx.to(dtype), gw, gb


def _scaled_rows(plan, x_wide, x_c, w_c):
    """Each row of the chunk times its row weight (in place on the widened copy)."""
    return x_wide.mul_(w_c.unsqueeze(1)) if plan.mixed else x_c * w_c.unsqueeze(1)


class _ChunkedReduced(Function):
    """ "mean"/"sum": the forward computes the loss and the gradients; the backward scales them."""

    @staticmethod
    def forward(ctx, x, weight, target, bias, class_weight, config, keep, wants):
        loss, gx, gw, gb = _chunked(x, weight, target, bias, class_weight, config, wants)
        ctx.keep = keep
        ctx.grads = [g if want else None for g, want in zip((gx, gw, gb), wants)]
        return loss

    @staticmethod
    def backward(ctx, grad):
        out = []
        for i, g in enumerate(ctx.grads):
            if g is _CONSUMED:
                raise RuntimeError(
                    "linear_cross_entropy chunked backward called twice; "
                    "retain_graph=True / double backward are not supported."
                )
            if g is None:
                out.append(None)
            elif ctx.keep:
                out.append(g * grad)
            else:  # the stored gradient is scaled in place and given away
                ctx.grads[i] = _CONSUMED
                out.append(g.mul_(grad))
        gx, gw, gb = out
        return gx, gw, None, gb, None, None, None, None


_CONSUMED = object()


class _ChunkedPerRow(Function):
    """ "none": the forward gives the per-row losses; the backward recomputes the chunks."""

    @staticmethod
    def forward(ctx, x, weight, target, bias, class_weight, config):
        ctx.save_for_backward(
            x.detach(),
            weight.detach(),
            target,
            None if bias is None else bias.detach(),
            None if class_weight is None else class_weight.detach(),
        )
        ctx.config = config
        return _chunked(x, weight, target, bias, class_weight, config)[0]

    @staticmethod
    def backward(ctx, grad):
        x, weight, target, bias, class_weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        wants = (need[0], need[1], bias is not None and need[3])
        if not any(wants):
            return (None,) * 6
        _, gx, gw, gb = _chunked(x, weight, target, bias, class_weight, ctx.config, wants, upstream=grad)
        gx, gw, gb = (g if want else None for g, want in zip((gx, gw, gb), wants))
        return gx, gw, None, gb, None, None


def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...) as torch.nn.functional's;
    ``options`` (LinearCrossEntropyOptions) selects the chunked form."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
            f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}"
        )
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    tracing = ember.jit.is_tracing()
    if options is not None:
        chunkable = (
            not out_features
            and reduction in _CHUNKED_REDUCTIONS
            and label_smoothing == 0.0
            and target.dtype == ember.int64
            and not tracing
        )
        if not chunkable:
            bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
            warnings.warn(
                "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                f"out_features={out_features}, tracing={tracing}, linear_bias.shape={bias_shape}.",
                stacklevel=2,
            )
        else:
            return _linear_cross_entropy_chunked(
                input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options
            )
    if out_features:
        flat = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((flat, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(flat)
    logits = ember.nn.functional.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return ember.nn.functional.cross_entropy(
        logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing
    )


def _linear_cross_entropy_chunked(x, linear_weight, target, bias, weight, reduction, ignore_index, options):
    batched = x.dim() == 2
    if not batched:
        x, target = x.unsqueeze(0), target.unsqueeze(0)
    n = x.shape[0]
    opts = options._adjust(
        num_batches=n, in_features=x.shape[-1], num_classes=linear_weight.shape[0], dtype=x.dtype, device=x.device
    )
    config = _ChunkConfig(reduction, ignore_index, opts.batch_chunk_size, opts.acc_policy, opts.acc_dtype)
    if reduction == "none":
        loss = _ChunkedPerRow.apply(x, linear_weight, target, bias, weight, config)
    else:
        grad_on = ember.is_grad_enabled()
        wants = tuple(t is not None and t.requires_grad and grad_on for t in (x, linear_weight, bias))
        loss = _ChunkedReduced.apply(x, linear_weight, target, bias, weight, config, opts.allow_retain_graph, wants)
    return loss if batched else loss.squeeze(0)
