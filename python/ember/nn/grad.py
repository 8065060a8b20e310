"""Gradients of convolutions with respect to their input or weight, as torch.nn.grad."""

from __future__ import annotations

import ember

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _conv(dims):
    return {1: ember.nn.functional.conv1d, 2: ember.nn.functional.conv2d, 3: ember.nn.functional.conv3d}[dims]


def _grad(dims, x, weight, grad_output, stride, padding, dilation, groups, of_input):
    x = x.detach().requires_grad_(of_input)
    weight = weight.detach().requires_grad_(not of_input)
    with ember.enable_grad():
        out = _conv(dims)(x, weight, None, stride, padding, dilation, groups)
        return ember.autograd.grad(out, x if of_input else weight, grad_output)[0]


def _input_grad(dims):
    def fn(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        x = ember.zeros(list(input_size), dtype=grad_output.dtype, device=grad_output.device)
        return _grad(dims, x, weight, grad_output, stride, padding, dilation, groups, True)

    fn.__name__ = f"conv{dims}d_input"
    fn.__doc__ = f"The gradient of conv{dims}d with respect to an input of size input_size."
    return fn


def _weight_grad(dims):
    def fn(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        w = ember.zeros(list(weight_size), dtype=input.dtype, device=input.device)
        return _grad(dims, input, w, grad_output, stride, padding, dilation, groups, False)

    fn.__name__ = f"conv{dims}d_weight"
    fn.__doc__ = f"The gradient of conv{dims}d with respect to a weight of size weight_size."
    return fn


conv1d_input, conv2d_input, conv3d_input = (_input_grad(d) for d in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_grad(d) for d in (1, 2, 3))
