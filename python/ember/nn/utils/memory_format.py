"""Converting convolution weights to another memory format, module by module."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, class_names):
    import ember.nn as nn

    classes = tuple(getattr(nn, n) for n in class_names if hasattr(nn, n))
    if isinstance(module, classes):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, class_names)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Every Conv2d / ConvTranspose2d weight under module in memory_format (e.g. channels_last)."""
    return _convert(module, memory_format, ("Conv2d", "ConvTranspose2d"))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Every Conv3d / ConvTranspose3d weight under module in memory_format (e.g. channels_last_3d)."""
    return _convert(module, memory_format, ("Conv3d", "ConvTranspose3d"))
