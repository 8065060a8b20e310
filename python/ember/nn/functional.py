"""ember.nn.functional: the functions behind the modules, as torch.nn.functional."""

from __future__ import annotations

import warnings

import ember
from ember._warnings import user_stacklevel as _user_stacklevel

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _legacy_reduction(size_average, reduce) -> str:
    """The reduction the legacy size_average/reduce arguments name, with PyTorch's deprecation warning."""
    return _Reduction.legacy_get_string(size_average, reduce)


def linear(input, weight, bias=None):
    """y = input @ weight.T + bias (addmm for 2-D input, as PyTorch)."""
    if input.dim() == 2 and bias is not None:
        return ember.addmm(bias, input, weight.t())
    if bias is not None and input.dim() == 3 and input.is_contiguous():
        b, n, k = input.shape
        out = ember.addmm(bias, input.view(b * n, k), weight.t())
        return out.view(b, n, out.size(1))
    out = ember.matmul(input, weight.t())
    if bias is not None:
        out = out + bias
    return out


def relu(input, inplace: bool = False):
    return input.relu_() if inplace else ember.relu(input)


def sigmoid(input):
    return ember.sigmoid(input)


def tanh(input):
    return ember.tanh(input)


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=_user_stacklevel(),
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = ember.broadcast_tensors(input, target)
    if weight is not None:
        # PyTorch's weighted form: the mean divides by the weights' sum.
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        weighted = ember.pow(expanded_input - expanded_target, 2) * weight
        if reduction == "none":
            return weighted
        if reduction == "sum":
            return ember.sum(weighted)
        if reduction == "mean":
            return ember.sum(weighted) / ember.sum(weight)
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return ember._C._VariableFunctions.mse_loss(expanded_input, expanded_target, _reduction_enum(reduction))


from ember.nn._functional_layers import *  # noqa: E402,F401,F403  convolution, pooling, normalisation
from ember.nn._functional_spatial import *  # noqa: E402,F401,F403  padding, interpolation, unfold/fold
from ember.nn._functional_attention import *  # noqa: E402,F401,F403  attention
from ember.nn._functional_nn import *  # noqa: E402,F401,F403  activations, dropout, embedding, one_hot, losses
from ember.nn._functional_extra import *  # noqa: E402,F401,F403  rms/instance norm, shuffles, distances
from ember.nn._functional_losses import *  # noqa: E402,F401,F403  margin, embedding and likelihood losses
from ember.nn._functional_pooling import *  # noqa: E402,F401,F403  adaptive max, unpooling, conv_transpose1d
from ember.nn._functional_bags import *  # noqa: E402,F401,F403  embedding_bag
from ember.nn._functional_3d import *  # noqa: E402,F401,F403  conv3d, 3-d pooling
from ember.nn._functional_sampling import *  # noqa: E402,F401,F403  conv_transpose3d, conv_tbc, grid sampling
from ember.nn._functional_ctc import *  # noqa: E402,F401,F403  ctc_loss, fractional max pooling
from ember.nn._functional_linear_ce import *  # noqa: E402,F401,F403  linear_cross_entropy

# PyTorch's private helpers that programs call (custom attention, norm and loss layers).
from ember.nn import _reduction as _Reduction  # noqa: E402
from ember.nn._functional_attention import _canonical_mask, _in_projection_packed, _none_or_dtype  # noqa: E402,F401
from ember.nn._functional_attention import _check_attention_ranks as _mha_shape_check  # noqa: E402,F401
from ember.nn._functional_layers import _verify_batch_size  # noqa: E402,F401
from ember.nn._functional_nn import _softmax_dim as _get_softmax_dim  # noqa: E402,F401
from ember.nn.modules.utils import _pair, _single, _triple  # noqa: E402,F401


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """Query, key and value through their own projections."""
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)
from ember.nn._functional_matmul import *  # noqa: E402,F401,F403  grouped_mm, scaled_mm
from ember.nn import grad  # noqa: E402,F401  the gradients of convolutions, as F.grad
from ember._tensor import Tensor  # noqa: E402,F401
from ember.overrides import (  # noqa: E402,F401
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)

# grid_sample's modes by the integers its kernel takes.
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def assert_int_or_pair(arg, arg_name, message):
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)
