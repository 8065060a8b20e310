"""More functions of ember.nn.functional: RMS and instance normalisation, local
response normalisation, PReLU and the shrink activations, distances, pixel and
channel shuffles, bilinear, gumbel_softmax and alpha dropout, with
torch.nn.functional's signatures, defaults and argument checks.

Where PyTorch computes one of these as a composite of operators Ember has, the
same operators run here in the same order (same dtype handling, same eps
placement), so results agree bit for bit; pdist and bilinear, natively
implemented in PyTorch, are composites here that agree to rounding."""

from __future__ import annotations

import math

import ember
from ember import _C, _argcheck

__all__ = [
    "alpha_dropout",
    "bilinear",
    "channel_shuffle",
    "cosine_similarity",
    "dropout3d",
    "feature_alpha_dropout",
    "gumbel_softmax",
    "hardshrink",
    "instance_norm",
    "local_response_norm",
    "lp_pool1d",
    "lp_pool2d",
    "native_channel_shuffle",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "prelu",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "softshrink",
]

_EPS = {"float64": 2.220446049250313e-16, "float32": 1.1920928955078125e-07}
_LOW_PRECISION = ("float16", "bfloat16")


def _dtype_str(t):
    return str(t.dtype).split(".")[1]


# ---- normalisation ---------------------------------------------------------------------------


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input * rsqrt(mean(input**2 over the trailing dims) + eps) * weight in the input's
    dtype, computed in float32 for half-precision inputs; eps defaults to the epsilon of that
    dtype."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = [int(s) for s in normalized_shape]
    n = len(normalized_shape)
    shape = list(input.shape)
    if n == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
            f"but got normalized_shape = {normalized_shape}"
        )
    if len(shape) < n:
        raise ValueError(f"Input tensor must have at least {n} dimensions, but got {len(shape)}")
    if shape[len(shape) - n :] != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={normalized_shape}, expected input with shape "
            f"[*{', '.join(str(s) for s in normalized_shape)}], but got input of size{shape}"
        )
    if weight is not None and list(weight.shape) != normalized_shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {normalized_shape}"
        )
    name = _dtype_str(input)
    x = input.to(ember.float32) if name in _LOW_PRECISION else input
    if eps is None:
        eps = _EPS["float64" if name == "float64" else "float32"]
    dims = list(range(input.dim() - n, input.dim()))
    rsqrt = ember.rsqrt(ember.pow(x, 2).mean(dims, keepdim=True).add_(eps))
    # The weight multiplies in the computing dtype; one rounding to the input's at the end.
    result = x.mul(rsqrt)
    if weight is not None:
        result = result * weight
    return result.type_as(input)


def _verify_spatial_size(size):
    prod = 1
    for s in list(size)[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def _repeat(t, b):
    return None if t is None else t.repeat(b)


_INSTANCE_NORM_BINDING = _argcheck.Binding(
    "instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool use_input_stats, float momentum, float eps, bool cudnn_enabled)"
)


def instance_norm(
    input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, eps=1e-5
):
    """Batch norm of each (sample, channel) plane over its positions: the input viewed
    as one sample of N*C channels, as PyTorch."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    _INSTANCE_NORM_BINDING(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.size(0), input.size(1)
    shape = [1, b * c] + list(input.shape[2:])
    mean_, var_ = _repeat(running_mean, b), _repeat(running_var, b)
    out = ember.batch_norm(
        input.contiguous().view(shape),
        _repeat(weight, b),
        _repeat(bias, b),
        mean_,
        var_,
        use_input_stats,
        momentum,
        eps,
        False,
    )
    with ember.no_grad():
        if running_mean is not None:
            running_mean.copy_(mean_.view(b, c).mean(0, False))
        if running_var is not None:
            running_var.copy_(var_.view(b, c).mean(0, False))
    return out.view(list(input.shape))


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of input**2 over `size` neighbouring channels) ** beta."""
    from ember.nn.functional import avg_pool2d, pad

    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        # PyTorch pools a (N, 1, C, H, rest) view with a (size, 1, 1) window; the
        # window spans channels only, so the same averages come from (N, 1, C, H*rest).
        sizes = list(input.shape)
        div = div.view(sizes[0], 1, sizes[1], -1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ---- activations -----------------------------------------------------------------------------


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight broadcast along the channel dim (dim 1)."""
    from ember.nn._functional_nn import _dtype_name

    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_dtype_name(input)} and {_dtype_name(weight)}")
    w = weight
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.size(1) if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{weight.numel()} and channel size = {channels}."
            )
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if weight.numel() == 1:
        w = weight.reshape([])
    elif input.dim() >= 2:
        shape = [1] * input.dim()
        shape[1] = weight.numel()
        w = weight.reshape(shape)
    _require_floating_kernel(input, "prelu_cpu")
    return _recorded("PreluKernelBackward0", lambda x, a: ember.where(x > 0, x, a * x), input, w)


def _recorded(node, fn, *inputs):
    """fn(*inputs) recorded as one autograd node named as PyTorch's."""
    from ember._linalg_autograd import named

    return named(node, fn, *inputs)


def _require_floating_kernel(input, kernel):
    """PyTorch's NotImplementedError for a kernel that has only floating loops."""
    if isinstance(input, ember.Tensor) and not input.dtype.is_floating_point:
        from ember._ops_math import _not_implemented

        _not_implemented(kernel, input.dtype)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    _require_floating_kernel(input, "hardshrink_cpu")
    _check_converts(lambd, _dtype_str(input))
    return _recorded(
        "HardshrinkBackward0",
        lambda x: ember.where((x >= -lambd).logical_and(x <= lambd), ember.zeros_like(x), x),
        input,
    )


# The largest finite value of each floating dtype, and the C++ type PyTorch's
# conversion errors name.
_FLOAT_MAX = {
    "float64": 1.7976931348623157e308,
    "float32": 3.4028234663852886e38,
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
}
_CPP_TYPE = {"float64": "double", "float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _check_converts(value, dtype):
    """PyTorch's conversion of a number argument to a floating dtype: a complex
    number with an imaginary part, or a finite number past the dtype's range,
    does not fit."""
    if not isinstance(value, (int, float, complex)) or isinstance(value, bool) or dtype not in _FLOAT_MAX:
        return
    fits = True
    if isinstance(value, complex):
        fits, value = value.imag == 0, value.real
    if fits and not (math.isinf(value) or math.isnan(value)):
        fits = abs(value) <= _FLOAT_MAX[dtype]
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_CPP_TYPE[dtype]} without overflow")


def _real(value):
    return value.real if isinstance(value, complex) else value


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if isinstance(lambd, ember.Tensor):  # a tensor lambd is read as a number (PyTorch's Scalar argument)
        lambd = lambd.item()
    _check_converts(lambd, "float64")
    _require_floating_kernel(input, "softshrink_check")
    if isinstance(lambd, complex):
        lambd = lambd.real
    top = _FLOAT_MAX.get(_dtype_str(input), _FLOAT_MAX["float32"])
    if not 0 <= lambd <= top:
        from ember.nn._functional_nn import _dtype_name

        raise RuntimeError(
            f"lambda must be in range [0, {top:g}] for input dtype {_dtype_name(input)}, but found {lambd:g}"
        )

    def shrink(t):
        x = t.to(ember.float32) if _dtype_str(t) in _LOW_PRECISION else t
        # x * 0 in the middle, so that NaN stays NaN as in PyTorch.
        return ember.where(x > lambd, x - lambd, ember.where(x < -lambd, x + lambd, x * 0)).to(t.dtype)

    return _recorded("SoftshrinkBackward0", shrink, input)


# ---- distances -------------------------------------------------------------------------------


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/||x1|| * x2/||x2||) along dim, each norm clamped to eps (no gradient through the clamp)."""
    if not eps >= 0:  # PyTorch's first check (NaN included)
        raise RuntimeError(f"eps must be non-negative, got: {eps}")
    # Integral operands take the common dtype by PyTorch's promotion (a 0-dim
    # float operand counts); floating ones keep theirs, as in PyTorch.
    common = ember.result_type(x1, x2)
    if not common.is_floating_point:
        from ember.nn._functional_nn import _dtype_name

        name = _dtype_name(ember.empty(0, dtype=common))
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {name}")
    x1 = x1 if x1.is_floating_point() else x1.to(common)
    x2 = x2 if x2.is_floating_point() else x2.to(common)
    if x1.shape != x2.shape:  # operands of one shape are used as they are
        shape = _broadcast(x1, x2)
        x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = ember.linalg_vector_norm(x1, 2, [dim], True).clone()
    n2 = ember.linalg_vector_norm(x2, 2, [dim], True).clone()
    with ember.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _broadcast(a, b):
    from ember.nn._functional_nn import _broadcast_shape

    return _broadcast_shape(a.shape, b.shape)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    from ember.autograd.function import _add_scalar, _composite_node

    dim = max(x1.dim(), x2.dim()) - 1
    # recorded as PyTorch's norm(x, p, dim, keepdim): NormBackward1 over AddBackward1
    return _composite_node(
        "NormBackward1",
        lambda t: ember.linalg_vector_norm(t, p, [dim], keepdim),
        _add_scalar(x1 - x2, eps),
        _saved_p=p,
        _saved_dim=(dim,),
        _saved_keepdim=keepdim,
    )


def pdist(input, p=2):
    """The p-norm distances between the rows of a 2-D input, the upper triangle row by row."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.size(0)
    if n > 1 and input.dtype not in (ember.float32, ember.float64):  # PyTorch's kernel: float and double
        names = {ember.float16: "Half", ember.bfloat16: "BFloat16"}
        raise NotImplementedError(f"\"pdist\" not implemented for '{names[input.dtype]}'")
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    ri = ember.tensor(rows, dtype=ember.int64, device=input.device)
    ci = ember.tensor(cols, dtype=ember.int64, device=input.device)

    def distances(x):
        diff = x.index_select(0, ri) - x.index_select(0, ci)
        if p == 0:  # the count of differing entries, with zero gradients
            return (diff != 0).to(x.dtype).sum(1) + (diff * 0).sum(1)
        return ember.linalg_vector_norm(diff, float(p), [1], False)

    return _recorded("PdistBackward0", distances, input)


# ---- shuffles --------------------------------------------------------------------------------


def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    return _C._VariableFunctions.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    return _C._VariableFunctions.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    """(N, g*k, *) -> (N, k*g, *): the channels of each group interleaved."""
    groups = int(groups)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.size(1)
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.size(0), list(input.shape[2:])
    return _recorded(
        "ChannelShuffleBackward0",
        lambda t: t.reshape([n, groups, c // groups] + rest).transpose(1, 2).reshape(list(t.shape)),
        input,
    )


native_channel_shuffle = channel_shuffle


# ---- bilinear, gumbel softmax, alpha dropout -------------------------------------------------


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.size(i)} and {input2.size(i)}"
            )
    if input1.size(-1) != weight.size(1):
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.size(-1)} but expected {weight.size(1)}"
        )
    if input2.size(-1) != weight.size(2):
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.size(-1)} but expected {weight.size(2)}"
        )
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.size(0)} but expected {weight.size(0)}"
        )
    lead = list(input1.shape[:-1])
    a = input1.reshape(-1, input1.size(-1))
    b = input2.reshape(-1, input2.size(-1))
    o, i, j = weight.shape
    # (B, I) @ (I, O*J) -> (B, O, J), then contracted with input2 over J.
    t = ember.matmul(a, weight.permute(1, 0, 2).reshape(i, o * j)).view(-1, o, j)
    out = ember.matmul(t, b.unsqueeze(-1)).squeeze(-1).reshape(lead + [o])
    return out + bias if bias is not None else out


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau); hard=True gives one-hot outputs with the soft gradients."""
    gumbels = -ember.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = ember.zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


_SELU_ALPHA = 1.7580993408473766


def _alpha_dropout_impl(input, p, training, inplace, feature):
    from ember.nn._functional_nn import _check_dropout_binding

    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    _check_dropout_binding("feature_alpha_dropout" if feature else "alpha_dropout", inplace, input, p, training)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = ember.zeros([], dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise_shape = [input.size(0), input.size(1)] + [1] * (input.dim() - 2)
        noise = ember.empty(noise_shape, dtype=input.dtype, device=input.device)
    else:
        noise = ember.empty_like(input)
    noise.bernoulli_(1 - p)
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = noise.add(-1).mul_(_SELU_ALPHA * a).add_(_SELU_ALPHA * a * p)
    noise.mul_(a)
    out = input.mul_(noise) if inplace else input * noise
    return out.add_(b)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's mean and variance (dropped values go to -alpha*scale)."""
    return _alpha_dropout_impl(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    return _alpha_dropout_impl(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a (N, C, D, H, W) or (C, D, H, W) input."""
    import warnings

    from ember.nn._functional_nn import _check_p, _feature_dropout

    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    batched = inp_dim == 5
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


# ---- rrelu, lp pooling -----------------------------------------------------------------------


_RRELU_BINDINGS = {
    inplace: _argcheck.Binding(
        f"rrelu{'_' if inplace else ''}(Tensor input, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
        "bool training=False, Generator? generator=None)"
    )
    for inplace in (False, True)
}


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with a slope drawn uniformly from [lower, upper] for each non-positive
    element in training (the same draws as PyTorch on the CPU), (lower + upper) / 2 otherwise."""
    _RRELU_BINDINGS[bool(inplace)](input, lower, upper, training)
    _check_converts(lower, "float64")
    _check_converts(upper, "float64")
    # Tensor bounds are read as numbers (PyTorch's Scalar arguments), complex ones by their real part.
    lower, upper = (b.item() if isinstance(b, ember.Tensor) else b for b in (lower, upper))
    lower, upper = _real(lower), _real(upper)
    for name, bound in (("lower", lower), ("upper", upper)):
        if isinstance(bound, float) and not math.isfinite(bound):
            raise RuntimeError(f"rrelu: {name} bound must be finite, got {bound}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training and isinstance(input, ember.Tensor):
        if _dtype_str(input) not in ("float32", "float64", "bfloat16"):
            from ember._ops_math import _not_implemented

            _not_implemented("rrelu_with_noise_out_cpu", input.dtype)
        opmath = "float64" if _dtype_str(input) == "float64" else "float32"
        _check_converts(lower, opmath)
        _check_converts(upper, opmath)
    if not training:
        # PyTorch adds the bounds as numbers of their own kind: two bools add as bools (True + True is True).
        both_bool = isinstance(lower, bool) and isinstance(upper, bool)
        slope = (float(lower or upper) if both_bool else lower + upper) / 2
        if inplace:
            return input.leaky_relu_(slope)
        return _recorded("RreluWithNoiseBackward0", lambda x: ember._C._VariableFunctions.leaky_relu(x, slope), input)
    mask = input <= 0
    k = int(mask.sum())
    # Each slope drawn in double as x * (upper - lower) + lower, then rounded to the input's dtype.
    r = ember.empty([k], dtype=ember.float64).uniform_(0.0, 1.0) * (upper - lower) + lower
    noise = ember.ones_like(input).masked_scatter_(mask, r.to(input.dtype))
    return input.mul_(noise) if inplace else _recorded("RreluWithNoiseBackward0", lambda x: x * noise, input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x**p) ** (1/p), as kernel_size * avg_pool1d(x**p)."""
    from ember.nn.functional import avg_pool1d, max_pool1d, relu

    # A tensor norm_type goes straight to pow (PyTorch compares only numbers with inf).
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (ember.sign(out) * relu(ember.abs(out))).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x**p) ** (1/p), as kw * kh * avg_pool2d(x**p)."""
    from ember.nn.functional import avg_pool2d, max_pool2d, relu
    from ember.nn.modules.utils import _pair

    kw, kh = _pair(kernel_size)
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool2d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (ember.sign(out) * relu(ember.abs(out))).mul(kw * kh).pow(1.0 / norm_type)
