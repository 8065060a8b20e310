"""ember.xpu: Intel GPUs. This build has no XPU backend, so the module answers
as PyTorch's does without one: no device, empty memory statistics, seeds kept
for a lazy initialisation that never comes, and each call that needs a device
raising PyTorch's AssertionError."""

from __future__ import annotations

from typing import Any

from ember._absent_backend import DeviceContext
from ember.xpu import graphs, memory, random, streams
from ember.xpu._common import _lazy_init, not_compiled
from ember.xpu.graphs import XPUGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables
from ember.xpu.memory import (
    MemPool,
    XPUPluggableAllocator,
    change_current_allocator,
    empty_cache,
    get_per_process_memory_fraction,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    use_mem_pool,
)
from ember.xpu.random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from ember.xpu.streams import Event, Stream

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "XPUPluggableAllocator",
    "XPUGraph",
    "can_device_access_peer",
    "change_current_allocator",
    "clock_rate",
    "current_device",
    "current_stream",
    "default_generators",
    "device",
    "device_of",
    "device_count",
    "device_memory_used",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_gencode_flags",
    "get_per_process_memory_fraction",
    "get_rng_state",
    "get_rng_state_all",
    "get_stream_from_external",
    "graph",
    "graph_pool_handle",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_current_stream_capturing",
    "is_initialized",
    "is_tf32_supported",
    "make_graphed_callables",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "memory_usage",
    "MemPool",
    "power_draw",
    "use_mem_pool",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "streams",
    "synchronize",
    "temperature",
    "utilization",
]

default_generators: tuple = ()


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def init() -> None:
    _lazy_init()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def get_arch_list() -> list:
    return []


def get_gencode_flags() -> str:
    return ""


def current_device() -> int:
    _lazy_init()


def set_device(device: Any) -> None:
    _lazy_init()


def synchronize(device: Any = None) -> None:
    _lazy_init()


def current_stream(device: Any = None):
    _lazy_init()


def get_stream_from_external(data_ptr: int, device: Any = None):
    _lazy_init()


def get_device_name(device: Any = None) -> str:
    _lazy_init()


def get_device_capability(device: Any = None) -> dict:
    _lazy_init()


def get_device_properties(device: Any = None):
    _lazy_init()


def can_device_access_peer(device: Any, peer: Any) -> bool:
    _lazy_init()


def _needs_pyzes(device: Any = None) -> float:
    raise ImportError("pyzes is required; install it with 'pip install pyzes'.")


clock_rate = device_memory_used = memory_usage = power_draw = temperature = utilization = _needs_pyzes


class device(DeviceContext):
    """Context manager making an XPU device current."""

    kind = "xpu"

    def _exchange(self, index):
        raise NotImplementedError("PyTorch was compiled without XPU support")


class device_of(device):
    """Context manager making the XPU device of a tensor current."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if getattr(obj, "is_xpu", False) else -1)


class StreamContext:
    """Context manager selecting an XPU stream (None selects nothing)."""

    def __init__(self, stream: Any):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _lazy_init()

    def __exit__(self, *exc):
        return False


def stream(stream: Any) -> StreamContext:
    return StreamContext(stream)


def set_stream(stream: Any) -> None:
    if stream is not None:
        _lazy_init()
