"""Helpers of ember.cuda's modules: device indices and the CUDA backend's C
entry points."""

from __future__ import annotations

from typing import Any

import ember
from ember import _C


def _is_compiled() -> bool:
    """True when Ember was built with its CUDA backend."""
    return bool(_C._cuda_version())


def _get_device_index(device: Any, optional: bool = False, allow_cpu: bool = False) -> int:
    """The index of a CUDA device given as an int, a string, an ember.device or
    an ember.cuda.device; None (or 'cuda' without an index) means the current
    device when `optional`, which is None while no device is available."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = ember.device(device)
    if isinstance(device, ember.device):
        if allow_cpu:
            if device.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {device}")
        elif device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
    if isinstance(device, ember.cuda.device):
        return device.idx
    index = None
    if isinstance(device, ember.device):
        index = -1 if device.type == "cpu" else device.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        index = ember.cuda.current_device() if ember.cuda.is_available() else None
    return index


class _CudaEntryPoints:
    """The backend's C entry points by name. A build without CUDA has none
    (AttributeError, as for a missing attribute of _C); a CUDA build
    initialises CUDA before each, so that without a device each raises the
    reason none is usable."""

    def __getattr__(self, name: str):
        if not _is_compiled():
            raise AttributeError(f"module 'ember._C' has no attribute '{name}'")
        function = getattr(_C, name, None)

        def call(*args, **kwargs):
            ember.cuda._lazy_init()
            if function is None:
                raise RuntimeError(f"ember's CUDA backend does not provide {name} yet")
            return function(*args, **kwargs)

        return call


_cuda = _CudaEntryPoints()


def _dummy_type(name: str) -> type:
    """A class that stands for a CUDA type in a build without CUDA: creating
    one raises."""

    def init(self, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {self.__class__.__name__}")

    return type(name, (object,), {"__init__": init})
