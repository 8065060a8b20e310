"""ember.accelerator: the current accelerator, as torch.accelerator. A build
whose CUDA backend sees no device has none (is_available() is False)."""

from __future__ import annotations

import ember

__all__ = ["current_accelerator", "current_device_index", "device_count", "is_available", "set_device_index",
           "synchronize"]


def is_available() -> bool:
    return ember.cuda.is_available()


def current_accelerator(check_available: bool = False):
    if ember.cuda.is_available():
        return ember.device("cuda")
    return None


def device_count() -> int:
    return ember.cuda.device_count()


def _require():
    if not is_available():
        raise RuntimeError("Accelerator is not available")


def current_device_index() -> int:
    _require()
    return ember.cuda.current_device()


def set_device_index(device) -> None:
    _require()
    ember.cuda.set_device(device)


def synchronize(device=None) -> None:
    _require()
    ember.cuda.synchronize(device)
