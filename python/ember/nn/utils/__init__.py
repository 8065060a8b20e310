"""ember.nn.utils: gradient clipping, flat parameter vectors, packed sequences, weight reparametrizations,
pruning, fusion and stateless calls, as torch.nn.utils."""

from ember.nn.utils import fusion, memory_format, parametrizations, parametrize, rnn, stateless  # noqa: F401
from ember.nn.utils import prune  # noqa: F401  (PyTorch's is reached after `import torch.nn.utils.prune`)
from ember.nn.utils.clip_grad import (
    _clip_grads_with_norm_ as clip_grads_with_norm_,
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    get_total_norm,
)
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from ember.nn.utils.fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from ember.nn.utils.init import skip_init
from ember.nn.utils.memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from ember.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from ember.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grads_with_norm_",
    "clip_grad_value_",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "skip_init",
    "spectral_norm",
    "stateless",
    "vector_to_parameters",
    "weight_norm",
]
