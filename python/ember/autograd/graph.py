"""ember.autograd.graph: the backward graph's node type and hooks on the
tensors it saves (saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks), as torch.autograd.graph."""

from __future__ import annotations

import abc
import contextlib
import functools
import threading
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from ember import _C

__all__ = [
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "allow_mutation_on_saved_tensors",
]


class Node(abc.ABC):
    """What every tensor.grad_fn is an instance of."""

    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    @abc.abstractmethod
    def next_functions(self): ...

    @abc.abstractmethod
    def register_hook(self, fn): ...

    @abc.abstractmethod
    def register_prehook(self, fn): ...


Node.register(_C._FunctionBase)

_disabled_message = None


class saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """Within the context, each tensor a backward node saves goes through
    pack_hook(tensor) -> anything, and comes back through unpack_hook(packed)
    -> tensor when backward needs it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_message is not None:
            raise RuntimeError(_disabled_message)
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Saved tensors are kept on the CPU and moved back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Entering saved_tensors_hooks inside raises RuntimeError(error_message)."""
    global _disabled_message
    prev, _disabled_message = _disabled_message, error_message
    try:
        yield
    finally:
        _disabled_message = prev


def _wrap_node_hook(hook):
    """(handle, call) for node.register_hook / register_prehook: call runs hook
    while the handle is active and checks how many gradients it returned."""
    from ember.utils.hooks import RemovableHandle

    handle = RemovableHandle()

    def call(grads, *rest):
        if not handle.active:
            return None
        result = hook(grads, *rest)
        if result is None:
            return None
        if not isinstance(result, (tuple, list)):
            raise TypeError(f"hook '{getattr(hook, '__name__', hook)}' must return a tuple of gradients or None")
        if len(result) != len(grads):
            raise RuntimeError(
                f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number of values "
                f"(got {len(result)}, but expected {len(grads)})"
            )
        return tuple(result)

    return handle, call


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed in the graph: the node and the
    index of the tensor among that node's forward outputs."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The gradient edge of `tensor`: its grad_fn, or the accumulator of a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require gradients",
        )
    node, output_nr = _C._gradient_edge(tensor)
    return GradientEdge(node, output_nr)


def increment_version(tensor) -> None:
    """Marks `tensor` (or each tensor of an iterable) as modified in place, for
    writes autograd cannot see (through data_ptr, say): backward then rejects
    saved copies of its old value."""
    from ember import Tensor

    tensors = (tensor,) if isinstance(tensor, Tensor) else tuple(tensor)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version expects a Tensor or an iterable of Tensors, got {type(t).__name__}")
        _C._increment_version(t)


class _MultiHandle:
    """The handle of register_multi_grad_hook: removes every tensor hook."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def _grad_fn_or_acc(tensor):
    return _C._gradient_edge(tensor)[0]


def register_multi_grad_hook(tensors: Sequence, fn: Callable, *, mode: Literal["all", "any"] = "all"):
    """mode "all": fn(grads) once per backward, after the gradient of every
    tensor of `tensors` that backward computes (None for the others); mode
    "any": fn(grad) with the first of them. Returns a handle."""
    supported_modes = ("all", "any")
    lock = threading.Lock()
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if mode == "all":
        counts: dict[int, int] = {}
        buffers: dict[int, list] = {}
        expected: dict[int, int] = {}
        nodes = [_grad_fn_or_acc(t) if t.requires_grad else None for t in tensors]

        def inner_hook(index):
            def hook(grad):
                task = _C._current_graph_task_id()
                with lock:
                    seen = counts.get(task, 0)
                    counts[task] = seen + 1
                    if seen == 0:
                        buffers[task] = [None] * len(nodes)
                        expected[task] = sum(n is not None and _C._will_engine_execute_node(n) for n in nodes)
                    buffers[task][index] = grad
                    done = seen + 1 == expected[task]
                    grads = buffers.pop(task) if done else None
                    if done:
                        del counts[task], expected[task]
                if done:
                    fn(grads)

            return hook

        handles = tuple(t.register_hook(inner_hook(i)) for i, t in enumerate(tensors) if t.requires_grad)
    else:
        ran: dict[int, bool] = {}

        @functools.wraps(fn)
        def first_only(grad):
            task = _C._current_graph_task_id()
            with lock:
                prev, ran[task] = ran.get(task, False), True
            if not prev:
                fn(grad)

        handles = tuple(t.register_hook(first_only) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


class _AllowMutationOnSavedContext:
    """State of allow_mutation_on_saved_tensors: the copies of the tensors
    saved while it is open."""

    def __init__(self) -> None:
        self.cloned: list = []
        self.active = True

    def clear(self) -> None:
        self.cloned.clear()


_mutation_context = None


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside the block, tensors saved for backward may be modified in place
    afterwards: backward sees the values they had when they were saved. Run
    forward and backward inside the same block."""
    global _mutation_context
    if _mutation_context is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    # Ember has no hook on in-place writes, so each saved tensor's value is
    # copied when it is saved (PyTorch copies it when it is first modified).
    def pack(tensor):
        from ember import no_grad

        with no_grad():
            copy = tensor.detach().clone()
        ctx.cloned.append(copy)
        return ctx, copy

    def unpack(packed):
        owner, copy = packed
        if not owner.active:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                "in which the graph was originally recorded."
            )
        return copy

    _mutation_context = ctx
    try:
        with saved_tensors_hooks(pack, unpack):
            yield ctx
    finally:
        ctx.active = False
        ctx.clear()
        _mutation_context = None
