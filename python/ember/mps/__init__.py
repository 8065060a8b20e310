"""ember.mps: Apple's Metal devices. This build has no MPS backend; the module
answers as PyTorch's does without one: no device, and each call that needs
the backend raising PyTorch's RuntimeError."""

from __future__ import annotations

from typing import Any

from ember import Tensor  # noqa: F401
from ember.mps import event, profiler
from ember.mps._common import no_backend
from ember.mps.event import Event

__all__ = [
    "compile_shader",
    "load_metallib",
    "device_count",
    "get_rng_state",
    "manual_seed",
    "seed",
    "set_rng_state",
    "synchronize",
    "empty_cache",
    "set_per_process_memory_fraction",
    "current_allocated_memory",
    "driver_allocated_memory",
    "Event",
    "profiler",
    "recommended_max_memory",
    "is_available",
]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize() -> None:
    no_backend("deviceSynchronize")


def get_rng_state(device: Any = "mps"):
    no_backend("getDefaultGenerator")


def set_rng_state(new_state: Any, device: Any = "mps") -> None:
    no_backend("getDefaultGenerator")


def manual_seed(seed: int) -> None:
    """Without the backend there is no generator to seed (as PyTorch)."""


def seed() -> None:
    no_backend("getDefaultGenerator")


def empty_cache() -> None:
    no_backend("emptyCache")


def set_per_process_memory_fraction(fraction) -> None:
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    no_backend("setMemoryFraction")


def current_allocated_memory() -> int:
    no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    no_backend("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    no_backend("getRecommendedMaxMemory")


def compile_shader(source: str):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    raise RuntimeError("MPS is not available")
