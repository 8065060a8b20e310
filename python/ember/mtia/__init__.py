"""ember.mtia: Meta's training and inference accelerators. This build has no
MTIA backend; the module answers as PyTorch's does without one: no device,
empty memory statistics, seeds queued for an initialisation that never
comes, and each call that needs the backend raising PyTorch's error."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable  # noqa: F401

import ember
from ember import Event, Stream, Tensor  # noqa: F401
from ember.mtia import memory, mtia_graph  # noqa: F401
from ember._absent_backend import queue_reseed, queue_seed
from ember.mtia._common import _lazy_init, device_index, no_backend
from ember.mtia.memory import max_memory_allocated, memory_allocated, memory_stats, reset_peak_memory_stats
from ember.mtia.mtia_graph import MTIAGraph, graph, graph_pool_handle

__all__ = [
    "init",
    "is_available",
    "is_initialized",
    "synchronize",
    "device_count",
    "current_device",
    "current_stream",
    "default_stream",
    "memory_stats",
    "max_memory_allocated",
    "memory_allocated",
    "reset_peak_memory_stats",
    "get_device_capability",
    "get_device_properties",
    "record_memory_history",
    "snapshot",
    "attach_out_of_memory_observer",
    "empty_cache",
    "set_device",
    "set_stream",
    "stream",
    "device",
    "set_rng_state",
    "get_rng_state",
    "set_rng_state_all",
    "get_rng_state_all",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "is_bf16_supported",
    "MTIAGraph",
    "graph",
    "graph_pool_handle",
]

Device = ember.device | str | int | None
default_generators: tuple = ()


class DeferredMtiaCallError(Exception):
    pass


def init() -> None:
    _lazy_init()


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def is_fbcode() -> bool:
    return False


def is_prod() -> bool:
    return False


def current_device() -> int:
    no_backend("getCurrentDevice")


def current_stream(device: Device = None):
    device_index(device, optional=True)
    _lazy_init()


default_stream = current_stream


def synchronize(device: Device = None) -> None:
    with ember.mtia.device(device):
        _lazy_init()


def set_device(device: Device) -> None:
    if device_index(device) >= 0:
        no_backend("setCurrentDevice")


def get_device_capability(device: Device = None):
    device_index(device, optional=True)
    no_backend("getDeviceCapability")


def get_device_properties(device: Device = None):
    device_index(device, optional=True)
    no_backend("getDeviceProperties")


def empty_cache() -> None:
    no_backend("emptyCache")


def record_memory_history(enabled: str | None = "all", stacks: str = "python", max_entries: int = 0) -> None:
    pass


def snapshot() -> dict:
    no_backend("memorySnapshot")


def attach_out_of_memory_observer(observer) -> None:
    no_backend("attachOutOfMemoryObserver")


class device:
    """Context manager making an MTIA device current (a no-op for a negative
    index)."""

    def __init__(self, device: Any):
        if isinstance(device, (str, ember.device)) and ember.device(device).type not in ("mtia", "cpu"):
            raise ValueError(f"Expected a mtia or cpu device, but got: {device}")
        self.idx = device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            no_backend("maybeExchangeDevice")

    def __exit__(self, *exc):
        return False


class StreamContext:
    """Context manager selecting an MTIA stream."""

    def __init__(self, stream: Any):
        current_device()


def stream(stream: Any) -> StreamContext:
    return StreamContext(stream)


def set_stream(stream: Any) -> None:
    if stream is not None:
        _lazy_init()


def get_rng_state(device: Device = "mtia"):
    _lazy_init()


def get_rng_state_all() -> list:
    return []


def set_rng_state(new_state: Tensor, device: Device = "mtia") -> None:
    device_index(device, optional=True)


def set_rng_state_all(new_states: list) -> None:
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


manual_seed = manual_seed_all = queue_seed
seed = seed_all = queue_reseed


def initial_seed() -> int:
    _lazy_init()
