"""Module backward hooks (register_full_backward_hook and
register_full_backward_pre_hook): identity autograd Functions around the
module's tensor inputs and outputs catch the gradients flowing through them."""

from __future__ import annotations

import functools
import warnings

import ember
from ember.autograd.function import Function


class _HookState:
    def __init__(self, module, n_args):
        self.module = module
        self.n_args = n_args
        self.input_mask = None  # which positional args are tensors that need grad
        self.grad_outputs = None

    def _pre_hooks(self, grad_outputs):
        for hook in list(self.module._backward_pre_hooks.values()):
            result = hook(self.module, grad_outputs)
            if result is not None:
                result = result if isinstance(result, tuple) else (result,)
                if len(result) != len(grad_outputs):
                    raise RuntimeError(
                        f"Backward pre hook returned an invalid number of grad_output, got {len(result)}, but "
                        f"expected {len(grad_outputs)}"
                    )
                grad_outputs = result
        return grad_outputs

    def _hooks(self, grad_inputs):
        for hook in list(self.module._backward_hooks.values()):
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is not None:
                result = result if isinstance(result, tuple) else (result,)
                if len(result) != len(grad_inputs):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got {len(result)}, but expected "
                        f"{len(grad_inputs)}"
                    )
                grad_inputs = result
        return grad_inputs


class _InputsHook(Function):
    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        # grad_input has one entry per positional tensor input (None where none flows).
        full = []
        it = iter(grads)
        for needs in state.input_mask:
            full.append(next(it) if needs else None)
        result = state._hooks(tuple(full))
        return (None,) + tuple(g for g, needs in zip(result, state.input_mask) if needs)


class _OutputsHook(Function):
    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        grads = state._pre_hooks(grads)
        state.grad_outputs = grads
        if not any(state.input_mask) and state.module._backward_hooks:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module outputs since no "
                "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.register_full_backward_hook for more details.",
                stacklevel=2,
            )
            state._hooks((None,) * len(state.input_mask))
        return (None,) + tuple(grads)


def call_with_backward_hooks(module, forward, args, kwargs):
    """forward(*args, **kwargs) with the module's backward hooks attached."""
    state = _HookState(module, len(args))
    grad_on = ember.is_grad_enabled()
    mask = [isinstance(a, ember.Tensor) and a.requires_grad and grad_on for a in args]
    state.input_mask = [isinstance(a, ember.Tensor) for a in args]
    wrapped = list(args)
    if any(mask):
        needing = [a for a, m in zip(args, mask) if m]
        outs = _InputsHook.apply(state, *needing)
        it = iter(outs)
        wrapped = [next(it) if m else a for a, m in zip(args, mask)]
        state.input_mask = mask
    else:
        state.input_mask = [False] * len(args)
    output = forward(*wrapped, **kwargs)
    if not grad_on:
        return output
    single = isinstance(output, ember.Tensor)
    outputs = (output,) if single else output
    if not isinstance(outputs, tuple) or not any(isinstance(o, ember.Tensor) and o.requires_grad for o in outputs):
        return output
    tensors = [o for o in outputs if isinstance(o, ember.Tensor)]
    hooked = _OutputsHook.apply(state, *tensors)
    it = iter(hooked)
    result = tuple(next(it) if isinstance(o, ember.Tensor) else o for o in outputs)
    return result[0] if single else result


def call_with_node_hooks(module, forward, args, kwargs):
    """Module.register_backward_hook's hooks: registered on the autograd node
    that made the (first tensor of the) output, they see that node's
    gradients, with PyTorch's warnings where those are not the module's."""
    result = forward(*args, **kwargs)
    var = result
    while not isinstance(var, ember.Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, ember.Tensor))
        else:
            var = var[0]
    grad_fn = var.grad_fn
    if grad_fn is not None:
        _warn_node_hook_misses(args, result, grad_fn)
        for hook in module._backward_hooks.values():
            grad_fn.register_hook(functools.partial(hook, module))
    return result


def _warn_node_hook_misses(inputs, result, grad_fn):
    def warn(message):
        warnings.warn(message, FutureWarning, stacklevel=4)

    if isinstance(result, ember.Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, ember.Tensor) for r in result)):
        warn(
            "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of Tensors is "
            "deprecated and will be removed in future versions. This hook will be missing some of the grad_output. "
            "Please use register_full_backward_hook to get the documented behavior."
        )
        return
    if not all(isinstance(i, ember.Tensor) for i in inputs):
        warn(
            "Using non-full backward hooks on a Module that does not take as input a single Tensor or a tuple of "
            "Tensors is deprecated and will be removed in future versions. This hook will be missing some of the "
            "grad_input. Please use register_full_backward_hook to get the documented behavior."
        )
        return
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and grad_fn not in out_nodes):
        warn(
            "Using a non-full backward hook when outputs are nested in python data structure is deprecated and will "
            "be removed in future versions. This hook will be missing some grad_output."
        )
    elif len(out_nodes) > 1:
        warn(
            "Using a non-full backward hook when outputs are generated by different autograd Nodes is deprecated "
            "and will be removed in future versions. This hook will be missing some grad_output. Please use "
            "register_full_backward_hook to get the documented behavior."
        )
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
        warn(
            "Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and will "
            "be removed in future versions. This hook will be missing some grad_input. Please use "
            "register_full_backward_hook to get the documented behavior."
        )
