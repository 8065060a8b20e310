"""ember.cuda.memory: the caching allocator's controls and statistics. Before
CUDA is initialised (always, without a usable device) the statistics are
empty and the counters read 0, as in PyTorch."""

from __future__ import annotations

import collections
import contextlib
import ctypes
import warnings
from typing import Any

import ember
from ember.cuda._utils import _cuda, _get_device_index

__all__ = [
    "caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_enable",
    "caching_allocator_disabled", "set_per_process_memory_fraction", "get_per_process_memory_fraction",
    "empty_cache", "memory_stats", "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
    "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
    "host_memory_stats", "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats",
    "reset_peak_host_memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "memory_cached", "max_memory_cached", "memory_snapshot", "memory_summary",
    "list_gpu_processes", "mem_get_info", "get_allocator_backend", "CUDAPluggableAllocator",
    "change_current_allocator", "MemPool", "use_mem_pool",
]  # fmt: skip

Device = ember.device | str | int | None


def is_initialized() -> bool:
    return ember.cuda.is_initialized()


def _allocator_has(name: str) -> bool:
    """Whether the CUDA backend has this caching-allocator entry point."""
    return hasattr(ember._C, name)


def caching_allocator_alloc(size, device: Device = None, stream=None):
    if device is None:
        device = ember.cuda.current_device()
    device = _get_device_index(device)
    if stream is None:
        stream = ember.cuda.current_stream(device)
    if isinstance(stream, ember.cuda.streams.Stream):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError(
            "Invalid type for stream argument, must be `torch.cuda.Stream` or `int` representing a pointer "
            "to an existing stream"
        )
    with ember.cuda.device(device):
        return _cuda._cuda_cudaCachingAllocator_raw_alloc(size, stream)


def caching_allocator_delete(mem_ptr):
    _cuda._cuda_cudaCachingAllocator_raw_delete(mem_ptr)


def caching_allocator_enable(value: bool = True) -> None:
    if is_initialized():
        _cuda._cuda_cudaCachingAllocator_enable(value)


@contextlib.contextmanager
def caching_allocator_disabled():
    previous = _cuda._cuda_cudaCachingAllocator_is_enabled()
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(previous)


def set_per_process_memory_fraction(fraction, device: Device = None) -> None:
    ember.cuda._lazy_init()
    if device is None:
        device = ember.cuda.current_device()
    device = _get_device_index(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _cuda._cuda_setMemoryFraction(fraction, device)


def get_per_process_memory_fraction(device: Device = None) -> float:
    ember.cuda._lazy_init()
    if device is None:
        device = ember.cuda.current_device()
    return _cuda._cuda_getMemoryFraction(_get_device_index(device))


def empty_cache() -> None:
    if is_initialized() and _allocator_has("_cuda_emptyCache"):
        _cuda._cuda_emptyCache()


def _flatten(nested: dict) -> collections.OrderedDict:
    """'a.b.c' keys for a nested dict of statistics, sorted."""
    flat = []

    def walk(prefix, value):
        if isinstance(value, dict):
            for key, item in value.items():
                name = "_".join(str(part) for part in key) if isinstance(key, tuple) else str(key)
                walk(f"{prefix}.{name}" if prefix else name, item)
        else:
            flat.append((prefix, value))

    walk("", nested)
    flat.sort()
    return collections.OrderedDict(flat)


def memory_stats(device: Device = None) -> dict[str, Any]:
    return _flatten(memory_stats_as_nested_dict(device=device))


def memory_stats_as_nested_dict(device: Device = None) -> dict[str, Any]:
    if not is_initialized() or not _allocator_has("_cuda_memoryStats"):
        return {}
    return _cuda._cuda_memoryStats(_get_device_index(device, optional=True))


def _check_index_argument(device, function: str):
    if ember.cuda._utils._is_compiled() and (not isinstance(device, int) or isinstance(device, bool)):
        raise RuntimeError(f"invalid argument to {function}")
    return device


def reset_accumulated_memory_stats(device: Device = None) -> None:
    device = _get_device_index(device, optional=True)
    function = _cuda._cuda_resetAccumulatedMemoryStats
    return function(_check_index_argument(device, "reset_accumulated_memory_stats"))


def reset_peak_memory_stats(device: Device = None) -> None:
    device = _get_device_index(device, optional=True)
    function = _cuda._cuda_resetPeakMemoryStats
    return function(_check_index_argument(device, "reset_peak_memory_stats"))


def host_memory_stats() -> dict[str, Any]:
    return _flatten(host_memory_stats_as_nested_dict())


def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    if not is_initialized() or not _allocator_has("_cuda_hostMemoryStats"):
        return {}
    return _cuda._cuda_hostMemoryStats()


def reset_accumulated_host_memory_stats() -> None:
    return _cuda._cuda_resetAccumulatedHostMemoryStats()


def reset_peak_host_memory_stats() -> None:
    return _cuda._cuda_resetPeakHostMemoryStats()


def reset_max_memory_allocated(device: Device = None) -> None:
    warnings.warn(
        "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device: Device = None) -> None:
    warnings.warn(
        "torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    return reset_peak_memory_stats(device=device)


def memory_allocated(device: Device = None) -> int:
    return memory_stats(device=device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Device = None) -> int:
    return memory_stats(device=device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Device = None) -> int:
    return memory_stats(device=device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Device = None) -> int:
    return memory_stats(device=device).get("reserved_bytes.all.peak", 0)


def memory_cached(device: Device = None) -> int:
    warnings.warn(
        "`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning, stacklevel=2
    )
    return memory_reserved(device=device)


def max_memory_cached(device: Device = None) -> int:
    warnings.warn(
        "`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return max_memory_reserved(device=device)


def memory_snapshot(mempool_id=None, include_traces=True):
    pool = (0, 0) if mempool_id is None else (mempool_id[0], mempool_id[1])
    return _cuda._cuda_memorySnapshot((*pool, include_traces))["segments"]


# ---- memory_summary ---------------------------------------------------------------

_SIZE_UNITS = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
_COUNT_UNITS = [" ", "K", "M"]


def _scaled(value: int, reference: float, units: list[str], step: int, limit: int) -> tuple[int, str]:
    unit = units[0]
    for larger in units[1:]:
        if reference < limit:
            break
        unit = larger
        value //= step
        reference /= step
    return value, unit


def _format_size(value: int, reference: float) -> str:
    value, unit = _scaled(value, reference, _SIZE_UNITS, 1024, 768 * 1024)
    return f"{value:6d} {unit}"


def _format_count(value: int, reference: float) -> str:
    value, unit = _scaled(value, reference, _COUNT_UNITS, 1000, 750 * 1000)
    return f"{value:7d} {unit}"


def memory_summary(device: Device = None, abbreviated: bool = False) -> str:
    """The allocator's statistics as a table (current, peak, allocated and
    freed totals per metric and pool)."""
    device = _get_device_index(device, optional=True)
    stats = memory_stats(device=device)
    metrics = [
        ("allocated_bytes", "Allocated memory", _format_size),
        ("active_bytes", "Active memory", _format_size),
        ("requested_bytes", "Requested memory", _format_size),
        ("reserved_bytes", "GPU reserved memory", _format_size),
        ("inactive_split_bytes", "Non-releasable memory", _format_size),
        ("allocation", "Allocations", _format_count),
        ("active", "Active allocs", _format_count),
        ("segment", "GPU reserved segments", _format_count),
        ("inactive_split", "Non-releasable allocs", _format_count),
    ]
    pools = [("all", "")] if abbreviated else [("all", ""), ("large_pool", "      from large pool"),
                                                ("small_pool", "      from small pool")]  # fmt: skip
    rule = "=" * 75
    thin = "-" * 75
    rows = []
    for key, title, formatter in metrics:
        rows.append(thin)
        for pool, label in pools:
            prefix = f"{key}.{pool}."
            values = [stats[prefix + part] for part in ("current", "peak", "allocated", "freed")]
            name = title if pool == "all" else label
            rows.append(f" {name:<21} | " + " | ".join(formatter(v, v) for v in values) + " ")
    rows.append(thin)
    oversize = (("oversize_allocations", "Oversize allocations"), ("oversize_segments", "Oversize GPU segments"))
    for key, title in oversize:
        values = [stats[f"{key}.{part}"] for part in ("current", "peak", "allocated", "freed")]
        rows.append(f" {title:<21} | " + " | ".join(_format_count(v, v) for v in values) + " ")
    rows.append(rule)
    lines = [
        rule,
        " {:^73} ".format(f"PyTorch CUDA memory summary, device ID {device}"),
        thin,
        "  {:^71} ".format(
            f"CUDA OOMs: {stats['num_ooms']:<12d}|        cudaMalloc retries: {stats['num_alloc_retries']:<8d}"
        ),
        rule,
        "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ",
        *rows,
    ]
    return "|" + "|\n|".join(lines) + "|\n"


def list_gpu_processes(device: Device = None) -> str:
    try:
        import pynvml  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded:
        return "cuda driver can't be loaded, is cuda enabled?"
    index = ember.cuda._get_nvml_device_index(device)
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    processes = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    lines = [f"GPU:{index}"]
    if not processes:
        lines.append("no processes are running")
    for process in processes:
        lines.append(f"process {process.pid:>10d} uses {process.usedGpuMemory / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)


def mem_get_info(device: Device = None) -> tuple[int, int]:
    if device is None:
        device = ember.cuda.current_device()
    device = _get_device_index(device, optional=True)
    return tuple(_cuda._cuda_memGetInfo(device))


def get_allocator_backend() -> str:
    return _cuda._cuda_getAllocatorBackend()


# ---- pluggable allocators and pools -----------------------------------------------


class _CUDAAllocator:
    def __init__(self, allocator):
        self._allocator = allocator

    def allocator(self):
        return self._allocator


class CUDAPluggableAllocator(_CUDAAllocator):
    """An allocator whose alloc and free functions come from a shared
    library (loaded with ctypes)."""

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str):
        library = ctypes.CDLL(path_to_so_file)
        alloc = ctypes.cast(getattr(library, alloc_fn_name), ctypes.c_void_p).value
        free = ctypes.cast(getattr(library, free_fn_name), ctypes.c_void_p).value
        if alloc is None or free is None:
            raise AssertionError("allocation and free functions must be found in the library")
        self._allocator = _cuda._cuda_customAllocator(alloc, free)


def change_current_allocator(allocator: _CUDAAllocator) -> None:
    _cuda._cuda_changeCurrentAllocator(allocator.allocator())


class _MemPoolBase:
    def __init__(self, *args, **kwargs):
        if not ember.cuda._utils._is_compiled():
            raise RuntimeError(f"Tried to instantiate dummy base class {self.__class__.__name__}")
        _cuda._cuda_MemPool(*args, **kwargs)


class MemPool(_MemPoolBase):
    """A pool of device memory that allocations inside `use_mem_pool` draw from."""

    def __init__(self, allocator=None, use_on_oom: bool = False, no_split: bool = False):
        super().__init__(allocator, True, use_on_oom, no_split)


@contextlib.contextmanager
def use_mem_pool(pool: MemPool, device: Device = None):
    index = ember.cuda.current_device() if device is None else _get_device_index(device)
    _cuda._cuda_beginAllocateCurrentThreadToPool(index, pool.id)
    try:
        yield
    finally:
        _cuda._cuda_endAllocateToPool(index, pool.id)
        _cuda._cuda_releasePool(index, pool.id)
