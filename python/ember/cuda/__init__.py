"""ember.cuda: the CUDA device API. Without a usable device it answers as
PyTorch does: a build without CUDA as PyTorch's CPU build, a CUDA build that
sees no device as PyTorch's CUDA build on such a machine."""

from __future__ import annotations

import importlib  # noqa: F401 - part of the namespace, as in PyTorch
import os
import threading
import traceback
import warnings
from collections.abc import Callable  # noqa: F401 - part of the namespace
from functools import lru_cache  # noqa: F401 - part of the namespace
from typing import TYPE_CHECKING, Any, NewType, Optional, cast  # noqa: F401

import ember
from ember import _C
from ember.cuda._utils import _cuda, _dummy_type, _get_device_index, _is_compiled

Device = ember.device | str | int | None


class AcceleratorError(RuntimeError):
    """An error the accelerator's runtime reported."""


# torch.OutOfMemoryError: the caching allocator raises it from C++.
OutOfMemoryError = _C.OutOfMemoryError


class DeferredCudaCallError(Exception):
    pass


class CudaError(RuntimeError):
    def __init__(self, code: int) -> None:
        message = _cudart.cudaGetErrorString(_cudart.cudaError(code))
        super().__init__(f"{message} ({code})")


class cudaStatus:
    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


has_half: bool = True
has_magma: bool = False
default_generators: tuple = ()

# The CUDA runtime module cudart() returns; Ember's backend exposes none.
_cudart = None

# ---- initialisation ---------------------------------------------------------------

_initialized = False
_initialization_lock = threading.Lock()
_tls = threading.local()
_queued_calls: list = []
_queued_seeds: dict = {}


def is_initialized() -> bool:
    return _initialized


def _lazy_call(callable, **kwargs) -> None:
    """Runs `callable` now if CUDA is initialised, else at initialisation (a
    seed call replaces the previous one of its kind)."""
    with _initialization_lock:
        if is_initialized():
            callable()
        elif kwargs.get("seed_all") or kwargs.get("seed"):
            _queued_seeds["seed_all" if kwargs.get("seed_all") else "seed"] = (callable, traceback.format_stack())
        else:
            _queued_calls.append((callable, traceback.format_stack()))


def init() -> None:
    _lazy_init()


def _lazy_init() -> None:
    global _initialized
    if is_initialized() or hasattr(_tls, "is_initializing"):
        return
    with _initialization_lock:
        if is_initialized():
            return
        if not _is_compiled():
            raise AssertionError("Torch not compiled with CUDA enabled")
        _C._cuda_init()
        _tls.is_initializing = True
        calls = list(_queued_seeds.values()) + _queued_calls
        try:
            for queued_call, origin in calls:
                try:
                    queued_call()
                except Exception as e:
                    raise DeferredCudaCallError(
                        f"CUDA call failed lazily at initialization with error: {e}\n\n"
                        f"CUDA call was originally invoked at:\n\n{''.join(origin)}"
                    ) from e
        finally:
            delattr(_tls, "is_initializing")
        _initialized = True


def cudart():
    _lazy_init()
    return _cudart


def check_error(res: int) -> None:
    if res != _cudart.cudaError.success:
        raise CudaError(res)


# ---- availability and devices -----------------------------------------------------


def is_available() -> bool:
    if not _is_compiled():
        return False
    return _C._cuda_device_count() > 0


def device_count() -> int:
    if not _is_compiled():
        return 0
    return _C._cuda_device_count()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    if not is_available():
        return False
    if get_device_properties(current_device()).major >= 8:
        return True
    return bool(including_emulation)


def is_tf32_supported() -> bool:
    return is_bf16_supported(including_emulation=False)


def get_arch_list() -> list[str]:
    if not is_available():
        return []
    flags = _C._cuda_arch_flags()
    return flags.split() if flags else []


def get_gencode_flags() -> str:
    archs = [arch.split("_") for arch in get_arch_list()]
    return " ".join(f"-gencode compute=compute_{arch},code={kind}_{arch}" for kind, arch in archs)


def current_device() -> int:
    _lazy_init()
    return _cuda._cuda_getDevice()


def set_device(device: Device) -> None:
    index = _get_device_index(device)
    if index >= 0:
        _cuda._cuda_setDevice(index)


def _exchange_device(index: int) -> int:
    if index < 0:
        return -1
    if not _is_compiled():
        raise RuntimeError("PyTorch was compiled without CUDA support")
    previous = current_device()
    if previous != index:
        _cuda._cuda_setDevice(index)
    return previous


_maybe_exchange_device = _exchange_device


class device:
    """Context manager that makes `device` the current CUDA device (a no-op
    for None or a negative index)."""

    def __init__(self, device: Any):
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, type: Any, value: Any, traceback: Any):
        self.idx = _maybe_exchange_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of a tensor or storage current
    (a no-op for one not on a CUDA device)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class _CudaDeviceProperties:
    """What the runtime reports of one device."""

    def __init__(self, name: str, major: int, minor: int, total_memory: int, multi_processor_count: int):
        self.name = name
        self.major = major
        self.minor = minor
        self.total_memory = total_memory
        self.multi_processor_count = multi_processor_count

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def get_device_properties(device: Device = None) -> _CudaDeviceProperties:
    _lazy_init()
    index = _get_device_index(device, optional=True)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(*_cuda._cuda_getDeviceProperties(index))


def get_device_name(device: Device = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: Device = None) -> tuple[int, int]:
    properties = get_device_properties(device)
    return properties.major, properties.minor


def can_device_access_peer(device: Device, peer_device: Device) -> bool:
    _lazy_init()
    index = _get_device_index(device, optional=True)
    peer = _get_device_index(peer_device)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    if peer < 0 or peer >= device_count():
        raise AssertionError("Invalid peer device id")
    return _cuda._cuda_canDeviceAccessPeer(index, peer)


def synchronize(device: Device = None) -> None:
    _lazy_init()
    with ember.cuda.device(device):
        return _cuda._cuda_synchronize()


def ipc_collect() -> None:
    _lazy_init()
    return _cuda._cuda_ipc_collect()


def current_blas_handle():
    _lazy_init()
    return _cuda._cuda_getCurrentBlasHandle()


def current_solver_handle():
    _lazy_init()
    return _cuda._cuda_getCurrentSolverHandle()


_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode: int | str) -> None:
    _lazy_init()
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _cuda._cuda_set_sync_debug_mode(debug_mode)


def get_sync_debug_mode() -> int:
    _lazy_init()
    return _cuda._cuda_get_sync_debug_mode()


# ---- streams ----------------------------------------------------------------------


class StreamContext:
    """Context manager that makes `stream` current (a no-op for None or
    while no device is available)."""

    cur_stream: ember.cuda.Stream | None

    def __init__(self, stream: ember.cuda.Stream | None):
        self.stream = stream
        self.idx = _get_device_index(None, True)
        if self.idx is None:
            self.idx = -1
        self.src_prev_stream = None
        self.dst_prev_stream = None

    def __enter__(self):
        target = self.stream
        if target is None or self.idx == -1:
            return
        self.src_prev_stream = current_stream(None)
        if self.src_prev_stream.device != target.device:
            with device(target.device):
                self.dst_prev_stream = current_stream(target.device)
        set_stream(target)

    def __exit__(self, type: Any, value: Any, traceback: Any):
        target = self.stream
        if target is None or self.idx == -1:
            return
        if self.src_prev_stream.device != target.device:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)


def stream(stream: ember.cuda.Stream | None) -> StreamContext:
    return StreamContext(stream)


def set_stream(stream: Stream):
    if stream is None:
        return
    _cuda._cuda_setStream(stream_id=stream.stream_id, device_index=stream.device_index, device_type=stream.device_type)


def _stream_of(data) -> Stream:
    stream_id, device_index, device_type = data
    return Stream(stream_id=stream_id, device_index=device_index, device_type=device_type)


def current_stream(device: Device = None) -> Stream:
    _lazy_init()
    return _stream_of(_cuda._cuda_getCurrentStream(_get_device_index(device, optional=True)))


def default_stream(device: Device = None) -> Stream:
    _lazy_init()
    return _stream_of(_cuda._cuda_getDefaultStream(_get_device_index(device, optional=True)))


def get_stream_from_external(data_ptr: int, device: Device = None) -> Stream:
    _lazy_init()
    return _stream_of(_cuda._cuda_getStreamFromExternal(data_ptr, _get_device_index(device, optional=True)))


# ---- NVML queries (nvidia-ml-py) ---------------------------------------------------

try:
    import pynvml  # type: ignore[import-not-found]

    _HAS_PYNVML = True
    _PYNVML_ERR = None
except ModuleNotFoundError as _err:
    _HAS_PYNVML = False
    _PYNVML_ERR = _err


def _get_nvml_device_index(device: Device) -> int:
    index = _get_device_index(device, optional=True)
    visible = os.getenv("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return index
    ordinals = [int(part) for part in visible.split(",") if part.strip().lstrip("-").isdigit()]
    if index < 0 or index >= len(ordinals):
        raise RuntimeError(f"device {index} is not visible (CUDA_VISIBLE_DEVICES={visible})")
    return ordinals[index]


def _get_pynvml_handler(device: Device = None):
    if not _HAS_PYNVML:
        message = "nvidia-ml-py does not seem to be installed or it can't be imported."
        raise ModuleNotFoundError(message) from _PYNVML_ERR
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded as e:
        raise RuntimeError("cuda driver can't be loaded, is cuda enabled?") from e
    return pynvml.nvmlDeviceGetHandleByIndex(_get_nvml_device_index(device))


def device_memory_used(device: Device = None) -> int:
    handle = _get_pynvml_handler()
    handle = pynvml.nvmlDeviceGetHandleByIndex(_get_nvml_device_index(device))
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used


def memory_usage(device: Device = None) -> int:
    handle = _get_pynvml_handler()
    handle = pynvml.nvmlDeviceGetHandleByIndex(_get_nvml_device_index(device))
    return pynvml.nvmlDeviceGetUtilizationRates(handle).memory


def utilization(device: Device = None) -> int:
    handle = _get_pynvml_handler()
    handle = pynvml.nvmlDeviceGetHandleByIndex(_get_nvml_device_index(device))
    return pynvml.nvmlDeviceGetUtilizationRates(handle).gpu


def temperature(device: Device = None) -> int:
    handle = _get_pynvml_handler(device)
    return pynvml.nvmlDeviceGetTemperature(handle, 0)


def power_draw(device: Device = None) -> int:
    handle = _get_pynvml_handler(device)
    return pynvml.nvmlDeviceGetPowerUsage(handle)


def clock_rate(device: Device = None) -> int:
    handle = _get_pynvml_handler(device)
    return pynvml.nvmlDeviceGetClockInfo(handle, 1)


# ---- random number generators (helpers of ember.cuda.random) ----------------------


def _get_device(device: int | str | ember.device) -> ember.device:
    if isinstance(device, str):
        return ember.device(device)
    if isinstance(device, int):
        return ember.device("cuda", device)
    return device


def _get_generator(device: ember.device):
    index = device.index if device.index is not None else current_device()
    return ember.cuda.default_generators[index]


from ember.cuda.memory import (  # noqa: E402
    CUDAPluggableAllocator,
    MemPool,
    caching_allocator_alloc,
    caching_allocator_delete,
    caching_allocator_disabled,
    caching_allocator_enable,
    change_current_allocator,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    list_gpu_processes,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    use_mem_pool,
)
from ember.cuda.random import (  # noqa: E402
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
from ember.cuda.streams import Event, ExternalStream, Stream  # noqa: E402
from ember.cuda.graphs import (  # noqa: E402
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from ember.cuda._legacy import (  # noqa: E402
    BFloat16Storage,
    BFloat16Tensor,
    BoolStorage,
    BoolTensor,
    ByteStorage,
    ByteTensor,
    CharStorage,
    CharTensor,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    DoubleTensor,
    FloatStorage,
    FloatTensor,
    HalfStorage,
    HalfTensor,
    IntStorage,
    IntTensor,
    LongStorage,
    LongTensor,
    ShortStorage,
    ShortTensor,
)
from ember.cuda.green_contexts import GreenContext  # noqa: E402
from ember.cuda import (  # noqa: E402
    amp,
    gds,
    graphs,
    green_contexts,
    jiterator,
    memory,
    nccl,
    nvtx,
    profiler,
    random,
    sparse,
    streams,
    tunable,
)

__all__ = [
    "BFloat16Storage", "BFloat16Tensor", "BoolStorage", "BoolTensor", "ByteStorage", "ByteTensor",
    "CUDAGraph", "CUDAPluggableAllocator", "CharStorage", "CharTensor", "ComplexDoubleStorage",
    "ComplexFloatStorage", "CudaError", "DeferredCudaCallError", "DoubleStorage", "DoubleTensor", "Event",
    "ExternalStream", "FloatStorage", "FloatTensor", "GreenContext", "HalfStorage", "HalfTensor",
    "IntStorage", "IntTensor", "LongStorage", "LongTensor", "MemPool", "ShortStorage", "ShortTensor",
    "Stream", "StreamContext", "amp", "caching_allocator_alloc", "caching_allocator_delete",
    "caching_allocator_disabled", "caching_allocator_enable", "can_device_access_peer",
    "change_current_allocator", "check_error", "clock_rate", "cudaStatus", "cudart", "current_blas_handle",
    "current_device", "current_solver_handle", "current_stream", "default_generators", "default_stream",
    "device", "device_count", "device_memory_used", "device_of", "empty_cache", "get_allocator_backend",
    "get_arch_list", "get_device_capability", "get_device_name", "get_device_properties", "get_gencode_flags",
    "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all", "get_stream_from_external",
    "get_sync_debug_mode", "graph", "graph_pool_handle", "graphs", "has_half", "has_magma",
    "host_memory_stats", "host_memory_stats_as_nested_dict", "init", "initial_seed", "ipc_collect",
    "is_available", "is_bf16_supported", "is_current_stream_capturing", "is_initialized", "is_tf32_supported",
    "jiterator", "list_gpu_processes", "make_graphed_callables", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "mem_get_info", "memory",
    "memory_allocated", "memory_cached", "memory_reserved", "memory_snapshot", "memory_stats",
    "memory_stats_as_nested_dict", "memory_summary", "memory_usage", "nccl", "nvtx", "power_draw", "profiler",
    "random", "reset_accumulated_host_memory_stats", "reset_accumulated_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_host_memory_stats",
    "reset_peak_memory_stats", "seed", "seed_all", "set_device", "set_per_process_memory_fraction",
    "set_rng_state", "set_rng_state_all", "set_stream", "set_sync_debug_mode", "sparse", "stream", "streams",
    "synchronize", "temperature", "tunable", "use_mem_pool", "utilization",
]  # fmt: skip
