"""XPU memory statistics: empty without a device."""

from __future__ import annotations

import collections
import contextlib
import ctypes
from typing import Any

from ember._absent_backend import dummy_type, missing_entry
from ember.xpu._common import _lazy_init

__all__ = [
    "MemPool",
    "XPUPluggableAllocator",
    "change_current_allocator",
    "empty_cache",
    "get_per_process_memory_fraction",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_per_process_memory_fraction",
    "use_mem_pool",
]

MemPool = dummy_type("MemPool")
reset_accumulated_memory_stats = missing_entry("_xpu_resetAccumulatedMemoryStats")
reset_peak_memory_stats = missing_entry("_xpu_resetPeakMemoryStats")
change_current_allocator = missing_entry("_xpu_changeCurrentAllocator")


def empty_cache() -> None:
    pass


def memory_stats_as_nested_dict(device: Any = None) -> dict:
    return {}


def memory_stats(device: Any = None) -> dict:
    return collections.OrderedDict()


def memory_allocated(device: Any = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Any = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Any = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Any = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_snapshot(mempool_id: Any = None) -> list:
    return []


def mem_get_info(device: Any = None):
    _lazy_init()


def get_per_process_memory_fraction(device: Any = None) -> float:
    _lazy_init()


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    _lazy_init()


class XPUPluggableAllocator:
    """An allocator from a shared library's allocation and free functions."""

    def __init__(self, path_to_lib_file: str, alloc_fn_name: str, free_fn_name: str):
        ctypes.CDLL(path_to_lib_file)
        _lazy_init()


@contextlib.contextmanager
def use_mem_pool(pool: Any, device: Any = None):
    _lazy_init()
    yield
