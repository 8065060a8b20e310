"""Activation checkpointing (torch.utils.checkpoint): run a piece of the
model without keeping its intermediate tensors, and run it again during
backward to get them. The RNG state is restored for the second run, so
dropout draws the same masks.

use_reentrant=True runs the piece without a graph and records one node
(CheckpointFunctionBackward) that runs it again and backpropagates through
it. use_reentrant=False records the usual graph but drops what its nodes
save (saved_tensors_hooks), recomputing it the first time backward needs it:
it works with autograd.grad, keyword arguments and inputs that need no
gradient, as PyTorch's."""

from __future__ import annotations

import contextlib
import warnings

import ember
from ember.autograd.function import Function

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "get_device_states",
    "set_device_states",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "DefaultDeviceType",
    "set_checkpoint_debug_enabled",
]


class CheckpointError(RuntimeError):
    pass


def detach_variable(inputs):
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, ember.Tensor):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, ember.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def get_device_states(*args):
    """No accelerator state to save on a CPU-only build: ([], [])."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    return None


class DefaultDeviceType:
    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_early_stop = True
_debug = False


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    global _early_stop
    prev, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    global _debug
    prev, _debug = _debug, enabled
    try:
        yield
    finally:
        _debug = prev


class CheckpointFunction(Function):
    """Runs run_function without a graph; backward runs it again with one."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = ember.get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, ember.Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with ember.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with ember.random.fork_rng(devices=[], enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                ember.set_rng_state(ctx.fwd_cpu_state)
            with ember.enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, ember.Tensor):
            outputs = (outputs,)
        pairs = [
            (o, g) for o, g in zip(outputs, args) if isinstance(o, ember.Tensor) and o.requires_grad
        ]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        ember.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(inp.grad if isinstance(inp, ember.Tensor) else None for inp in detached)
        return (None, None) + grads


def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs):
    """Runs function with the graph recorded but its saved tensors dropped
    (saved_tensors_hooks); the first time backward needs one, function runs
    again (same RNG state) and the recomputed tensors are handed out in the
    order they were saved."""
    rng_state = ember.get_rng_state() if preserve_rng_state else None
    recomputed = []
    done = [False]
    count = [0]

    def pack(_tensor):
        count[0] += 1
        return count[0] - 1

    def recompute():
        def keep(t):
            recomputed.append(t)
            return len(recomputed) - 1

        with ember.random.fork_rng(devices=[], enabled=preserve_rng_state):
            if rng_state is not None:
                ember.set_rng_state(rng_state)
            with ember.enable_grad(), ember.autograd.graph.saved_tensors_hooks(keep, recomputed.__getitem__):
                function(*args, **kwargs)
        done[0] = True

    def unpack(index):
        if not done[0]:
            recompute()
        if index >= len(recomputed):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {count[0]}\n"
                f"Number of tensors saved during recomputation: {len(recomputed)}"
            )
        return recomputed[index]

    with ember.autograd.graph.saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=noop_context_fn,
    determinism_check="default",
    debug=False,
    preserve_rng_state=True,
    **kwargs,
):
    """function(*args, **kwargs), recomputed during backward instead of keeping its activations."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    forward_ctx, _ = context_fn()
    with forward_ctx:
        return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a sequence of modules in `segments` checkpointed chunks (the last one kept)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
            "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
            "variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    if isinstance(functions, ember.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)
