"""Weight normalisation by a forward pre-hook: weight = g * v / ||v|| (the older API; see parametrizations)."""

from __future__ import annotations

import warnings

from ember.nn.parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm of v over every dimension but dim, shaped to broadcast against v (dim -1: one norm)."""
    if dim == -1:
        return v.norm(2)
    if dim != 0 and dim != v.dim() - 1:
        return _norm_except_dim(v.transpose(0, dim), 0).transpose(0, dim)
    if dim == 0:
        shape = [v.size(0)] + [1] * (v.dim() - 1)
        return v.contiguous().view(v.size(0), -1).norm(2, 1).view(shape)
    shape = [1] * (v.dim() - 1) + [v.size(-1)]
    return v.contiguous().view(-1, v.size(-1)).norm(2, 0).view(shape)


def _weight_norm(v, g, dim):
    if dim in (0, v.dim() - 1):  # PyTorch's fused kernel: one node
        from ember.autograd.function import _composite_node

        return _composite_node("WeightNormInterfaceBackward0", lambda a, b: a * (b / _norm_except_dim(a, dim)), v, g)
    return v * (g / _norm_except_dim(v, dim))


def _pre_hooks(module):
    for key, entry in module._forward_pre_hooks.items():
        yield key, (entry[0] if isinstance(entry, tuple) else entry)


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=2,  # a line of this file, as PyTorch's: shown once under the default filter
        )
        for _, hook in _pre_hooks(module):
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to run the dummy "
                "forward before applying weight normalization"
            )
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Splits module.<name> into a magnitude <name>_g and a direction <name>_v, recombined before each forward."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes weight_norm: module.<name> becomes a plain parameter again."""
    for key, hook in _pre_hooks(module):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
