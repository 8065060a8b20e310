"""ember.autograd.graph: the backward graph's node type and hooks on the
tensors it saves (saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks), as torch.autograd.graph."""

from __future__ import annotations

import abc
import contextlib

from ember import _C

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class Node(abc.ABC):
    """What every tensor.grad_fn is an instance of."""

    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    @abc.abstractmethod
    def next_functions(self): ...

    @abc.abstractmethod
    def register_hook(self, fn): ...


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

