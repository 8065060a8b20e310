"""Activations, dropout, embedding, one_hot and losses of ember.nn.functional, with
torch.nn.functional's signatures, defaults, warnings and argument checks."""

from __future__ import annotations

import math
import warnings

import ember
from ember import _argcheck
from ember._warnings import user_stacklevel
from ember.autograd.function import _add_scalar, _div_scalar, _mul_scalar

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "cross_entropy",
    "dropout",
    "dropout1d",
    "dropout2d",
    "elu",
    "elu_",
    "embedding",
    "gelu",
    "glu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "nll_loss",
    "normalize",
    "one_hot",
    "relu6",
    "relu_",
    "selu",
    "selu_",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanhshrink",
    "threshold",
    "threshold_",
]

_C = ember._C._VariableFunctions


def _reduction(reduction, size_average=None, reduce=None):
    from ember.nn.functional import _legacy_reduction, _reduction_enum

    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


# ---- softmax family ----------------------------------------------------------------


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=user_stacklevel(),
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


# ---- elementwise activations ----------------------------------------------------------


def relu_(input):
    return input.relu_()


def relu6(input, inplace=False):
    return input.hardtanh_(0.0, 6.0) if inplace else _C.hardtanh(input, 0.0, 6.0)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return input.leaky_relu_(negative_slope) if inplace else _C.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return input.leaky_relu_(negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return input.elu_(alpha) if inplace else _C.elu(input, alpha)


def elu_(input, alpha=1.0):
    return input.elu_(alpha)


def selu(input, inplace=False):
    return _C.selu_(input) if inplace else _C.selu(input)


def selu_(input):
    return _C.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    return _C.celu_(input, alpha) if inplace else _C.celu(input, alpha)


def celu_(input, alpha=1.0):
    return _C.celu_(input, alpha)


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    if inplace:
        return input.silu_()
    # PyTorch has no complex gradient of silu.
    if input.is_complex() and input.requires_grad and ember.is_grad_enabled():
        raise RuntimeError("silu does not support automatic differentiation for outputs with complex dtype.")
    return _C.silu(input)


def mish(input, inplace=False):
    return input.mish_() if inplace else _C.mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _C.softplus(input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.hardtanh_(min_val, max_val) if inplace else _C.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    # PyTorch's hardtanh_ is its binding alone: no Python check of the bounds' order
    # (the kernel lets max_val win); it converts the bounds to double (int64_t for
    # integer inputs).
    if isinstance(input, ember.Tensor) and input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    for bound in (min_val, max_val):
        if isinstance(bound, complex) or (isinstance(bound, ember.Tensor) and bound.is_complex()):
            target = "double" if input.is_floating_point() else "int64_t"
            raise RuntimeError(f"value cannot be converted to type {target} without overflow")
    return input.hardtanh_(min_val, max_val)


def hardsigmoid(input, inplace=False):
    return input.hardsigmoid_() if inplace else _C.hardsigmoid(input)


def hardswish(input, inplace=False):
    return input.hardswish_() if inplace else _C.hardswish(input)


def logsigmoid(input):
    return _C.log_sigmoid(input)


def threshold(input, threshold, value, inplace=False):
    return input.threshold_(threshold, value) if inplace else _C.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return input.threshold_(threshold, value)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _C.glu(input, dim)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = ember.linalg_vector_norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return ember.div(input, denom, out=out)


# ---- dropout ------------------------------------------------------------------------------
# Note [Dropout noise]: as PyTorch on the CPU, the mask is drawn as
# empty_like(input).bernoulli_(1 - p), scaled in place by 1/(1 - p) and
# multiplied in, so the same seed gives the same output bit for bit.


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


_DROPOUT_BINDINGS = {}


def _check_dropout_binding(name, inplace, input, p, training):
    """The types the binding PyTorch's dropout functions end in checks
    (`training` must be a bool, `p` a float), after their Python checks."""
    name = name + "_" if inplace else name
    check = _DROPOUT_BINDINGS.get(name)
    if check is None:
        check = _DROPOUT_BINDINGS[name] = _argcheck.Binding(f"{name}(Tensor input, float p, bool train)")
    check(input, p, training)


def _dropout_impl(input, p, training, inplace, noise_shape=None):
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = ember.zeros([], dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    if noise_shape is None:
        noise = ember.empty_like(input)
    else:
        noise = ember.empty(noise_shape, dtype=input.dtype, device=input.device)
    noise.bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    _check_dropout_binding("dropout", inplace, input, p, training)
    return _dropout_impl(input, p, training, inplace)


def _feature_dropout(input, p, training, inplace):
    # PyTorch returns early (p 0 or 1, eval, empty) before it draws the
    # per-channel noise, whose shape needs two dimensions.
    _check_dropout_binding("feature_dropout", inplace, input, p, training)
    if p == 0 or p == 1 or not training or input.numel() == 0:
        return _dropout_impl(input, p, training, inplace)
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = [input.size(0), input.size(1)] + [1] * (input.dim() - 2)
    return _dropout_impl(input, p, training, inplace, shape)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    batched = input.dim() == 3
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=user_stacklevel(),
        )
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=user_stacklevel(),
        )
    return _feature_dropout(input, p, training, inplace)


def _dropout(input, p, training):
    # input * mask / (1 - p), the mask drawn by bernoulli_ as PyTorch on the CPU.
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * ember.zeros_like(input)
    noise = ember.empty_like(input).bernoulli_(1 - p)
    noise.div_(1 - p)
    return input * noise


# ---- embedding -----------------------------------------------------------------------------


# The bindings PyTorch's embedding ends in: their argument types come after its Python checks.
_EMBEDDING_RENORM_BINDING = _argcheck.Binding(
    "embedding_renorm_(Tensor input, Tensor indices, float max_norm, float norm_type)"
)
_EMBEDDING_BINDING = _argcheck.Binding(
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False)"
)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _EMBEDDING_RENORM_BINDING(weight, input, max_norm, norm_type)
        with ember.no_grad():
            _C.embedding_renorm_(weight, input, max_norm, norm_type)
    _EMBEDDING_BINDING(weight, input, padding_idx, scale_grad_by_freq, sparse)
    if sparse:
        raise NotImplementedError("ember has no sparse tensors: embedding(sparse=True) is not supported")
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor, num_classes=-1):
    """Index tensor -> int64 tensor with a trailing dim of num_classes holding 1 at each index."""
    if tensor.dtype != ember.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return ember.zeros(list(tensor.shape) + [num_classes], dtype=ember.int64, device=tensor.device)
    lo, hi = int(tensor.min()), int(tensor.max())
    if lo < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = hi + 1
    elif hi >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = ember.zeros(list(tensor.shape) + [num_classes], dtype=ember.int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


# ---- losses -----------------------------------------------------------------------------------


def _warn_size(input, target, stacklevel=3):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=user_stacklevel(),
        )


def _broadcast_shape(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    # From the last dim, as PyTorch reports the first mismatch.
    for i in reversed(range(n)):
        x, y = a[i], b[i]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return out[::-1]


def _broadcast_pair(a, b):
    if tuple(a.shape) == tuple(b.shape):
        return a, b
    shape = _broadcast_shape(a.shape, b.shape)
    return a.expand(shape), b.expand(shape)


def _apply_reduction(loss, r):
    if r == 1:
        return loss.mean()
    if r == 2:
        return loss.sum()
    return loss


def _broadcast_then_reduction(input, target, reduction, size_average=None, reduce=None):
    """PyTorch's order: the sizes, the legacy arguments, broadcasting, then the reduction's name."""
    _warn_size(input, target, stacklevel=4)
    legacy = size_average is not None or reduce is not None
    r = _reduction(reduction, size_average, reduce) if legacy else None
    a, b = _broadcast_pair(input, target)
    return a, b, (_reduction(reduction) if r is None else r)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    a, b, r = _broadcast_then_reduction(input, target, reduction, size_average, reduce)
    loss = (a - b).abs()
    if weight is not None:
        # PyTorch's weighted form: the mean divides by the weights' sum.
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        loss = loss * weight
        if r == 1:
            return ember.sum(loss) / ember.sum(weight)
    return _apply_reduction(loss, r)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    a, b, r = _broadcast_then_reduction(input, target, reduction, size_average, reduce)
    if beta == 0.0:
        return _apply_reduction((a - b).abs(), r)
    return _C.smooth_l1_loss(a, b, r, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    a, b, r = _broadcast_then_reduction(input, target, reduction)
    if weight is not None and weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    if weight is None:
        return _C.huber_loss(a, b, r, delta)
    return _apply_reduction(_C.huber_loss(a, b, 0, delta) * weight, r)


def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and target.dim() > 0 and input.size(0) != target.size(0):
        raise ValueError(f"Expected input batch_size ({input.size(0)}) to match target batch_size ({target.size(0)}).")
    if input.dim() <= 2:
        return _C.nll_loss_forward(input, target, weight, reduction, ignore_index)[0]
    if input.dim() == 4:
        return _C.nll_loss2d_forward(input, target, weight, reduction, ignore_index)[0]
    n, c = input.size(0), input.size(1)
    out_size = [n] + list(input.shape[2:])
    if list(target.shape[1:]) != list(input.shape[2:]):
        raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    x = input.contiguous().view(n, c, 1, -1)
    t = target.contiguous().view(n, 1, -1)
    out = _C.nll_loss2d_forward(x, t, weight, reduction, ignore_index)[0]
    return out if reduction != 0 else out.view(out_size)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    return _nll_loss_nd(input, target, weight, r, ignore_index)


def _class_weight_view(weight, ndim, class_dim):
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.size(0)
    return weight.view(shape)


def cross_entropy(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0
):
    r = _reduction(reduction, size_average, reduce)
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        # Class probabilities.
        if not target.is_floating_point():
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got {_dtype_name(target)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        n_classes = input.size(class_dim)
        if weight is not None and not (weight.dim() == 1 and weight.numel() == n_classes):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no "
                f"classes but got weight tensor of shape: {list(weight.shape)}"
            )
        logp = input.log_softmax(class_dim)
        if label_smoothing > 0.0:
            if label_smoothing > 1.0:
                raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
            target = _add_scalar(_mul_scalar(target, 1 - label_smoothing), label_smoothing / n_classes)
        prod = logp * target
        if weight is not None:
            prod = prod * _class_weight_view(weight, logp.dim(), class_dim)
        if r == 1:
            if input.numel() == 0:
                return -(prod.sum().fill_(math.nan))
            return _div_scalar(-prod.sum(), input.numel() // n_classes)
        if r == 2:
            return -prod.sum()
        return -prod.sum(class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        logp = input.log_softmax(class_dim)
        nll = _nll_loss_nd(logp, target, weight, r, ignore_index)
        n_classes = logp.size(class_dim)
        ignore_mask = target == ignore_index
        if weight is not None:
            smooth = -(logp * _class_weight_view(weight, logp.dim(), class_dim)).sum(class_dim)
        else:
            smooth = -logp.sum(class_dim)
        smooth = smooth.masked_fill(ignore_mask, 0.0)
        if r == 1:
            keep = ignore_mask.logical_not()
            if weight is not None:
                ret = smooth.sum() / weight.index_select(0, target[keep].flatten()).sum()
            else:
                ret = smooth.sum() / keep.sum()
        elif r == 2:
            ret = smooth.sum()
        else:
            ret = smooth
        return _mul_scalar(nll, 1 - label_smoothing) + _mul_scalar(ret, label_smoothing / n_classes)
    return _nll_loss_nd(input.log_softmax(class_dim), target, weight, r, ignore_index)


def _dtype_name(t):
    return {
        "float16": "Half",
        "bfloat16": "BFloat16",
        "float32": "Float",
        "float64": "Double",
        "int64": "Long",
        "int32": "Int",
        "int16": "Short",
        "int8": "Char",
        "uint8": "Byte",
        "bool": "Bool",
        "complex64": "ComplexFloat",
        "complex128": "ComplexDouble",
    }[str(t.dtype).split(".")[1]]


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        shape = _broadcast_shape(target.shape, weight.shape)
        weight = weight.expand(shape)
    return _C.binary_cross_entropy(input, target, weight, r)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    r = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _C.binary_cross_entropy_with_logits(input, target, weight, pos_weight, r)


def _floating_or_complex(t):
    return not isinstance(t, ember.Tensor) or t.dtype.is_floating_point or t.dtype.is_complex


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        r = _reduction(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=user_stacklevel(),
            )
        r = 2 if reduction == "batchmean" else _reduction(reduction)
    if any(isinstance(t, ember.Tensor) and t.dtype.is_complex for t in (input, target)):
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (_floating_or_complex(input) and _floating_or_complex(target)):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = target.exp() * (target - input)
    else:
        xlogx = ember.where(target == 0, 0.0, target * target.log())
        out = xlogx - target * input
    reduced = _apply_reduction(out, r)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced
