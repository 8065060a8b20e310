"""Pieces shared by the modules of device backends this build does not have
(ember.xpu, ember.mps, ember.mtia): they answer as PyTorch's modules answer in
a build without that backend — no devices, empty statistics, and each call
that needs the device raising the error PyTorch raises there."""

from __future__ import annotations

from typing import Any

import ember


def dummy_type(name: str) -> type:
    """A class standing for one the backend would provide: it exists (for
    isinstance and subclassing) and refuses to be instantiated."""

    def refuse(self, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {name}")

    return type(name, (), {"__init__": refuse})


def dummy_function(name: str):
    """A function the backend would provide; calling it refuses."""

    def refuse(*args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {name}")

    refuse.__name__ = name
    return refuse


def missing_entry(name: str):
    """A backend entry point absent from this build: calling it raises the
    AttributeError of a missing ember._C attribute."""

    def call(*args, **kwargs):
        raise AttributeError(f"module 'ember._C' has no attribute '{name}'")

    call.__name__ = name
    return call


def queue_seed(seed: int) -> None:
    """manual_seed(_all) before a lazy initialisation that never comes: the
    seed is checked (int(seed)) and kept for it, so nothing happens."""
    int(seed)


def queue_reseed() -> None:
    """seed(_all) likewise: nothing to reseed yet."""


def device_index(kind: str, device: Any, optional: bool = False) -> int | None:
    """The index of a `kind` device given as an int, a string, an
    ember.device or one of the module's device contexts."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = ember.device(device)
    if isinstance(device, ember.device):
        if device.type != kind:
            raise ValueError(f"Expected a {kind} device, but got: {device}")
        index = device.index
    elif isinstance(device, DeviceContext):
        return device.idx
    else:
        index = None
    if index is None and not optional:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    return index


class DeviceContext:
    """Context manager making a device of the backend current; entering it
    raises what the backend's device exchange raises without the backend
    (a negative index is a no-op where the backend treats it so)."""

    kind = ""

    def __init__(self, device: Any):
        self.idx = device_index(self.kind, device, optional=True)
        self.prev_idx = -1

    def _exchange(self, index):
        raise NotImplementedError

    def __enter__(self):
        self.prev_idx = self._exchange(self.idx)

    def __exit__(self, type: Any, value: Any, traceback: Any):
        self.idx = self._exchange(self.prev_idx)
        return False
