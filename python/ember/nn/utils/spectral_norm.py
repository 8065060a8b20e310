"""Spectral normalisation by a forward pre-hook: weight / sigma(weight), sigma estimated by power
iteration (the older API; see parametrizations)."""

from __future__ import annotations

import ember
from ember.nn import functional as F
from ember.nn.parameter import Parameter, UninitializedParameter
from ember.nn.utils.weight_norm import _pre_hooks

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _transposed_conv_classes():
    import ember.nn as nn

    return tuple(getattr(nn, n) for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") if hasattr(nn, n))


def _as_matrix(weight, dim):
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.size(0), -1)


class SpectralNorm:
    """The forward pre-hook that sets module.<name> to <name>_orig / sigma, updating u and v in training."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        return _as_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with ember.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(ember.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ember.mv(weight_mat, v), dim=0, eps=self.eps))
                u = u.clone()
                v = v.clone()
        sigma = ember.dot(u, ember.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with ember.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for _, hook in _pre_hooks(module):
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. Make sure to run the "
                "dummy forward before applying spectral normalization"
            )
        with ember.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(_SpectralNormStateDictHook(fn))
        return fn


class _SpectralNormStateDictHook:
    """Notes the format version of the spectral norm in the state dict's
    metadata (metadata['spectral_norm'][name + '.version']), as PyTorch."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        notes = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in notes:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        notes[key] = 1


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides module.<name> by its largest singular value (estimated) before each forward."""
    if dim is None:
        dim = 1 if isinstance(module, _transposed_conv_classes()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undoes spectral_norm: module.<name> becomes a plain parameter holding the normalised weight."""
    for key, hook in _pre_hooks(module):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            for k, h in list(module._state_dict_hooks.items()):
                if isinstance(h, _SpectralNormStateDictHook) and h.fn.name == name:
                    del module._state_dict_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
