"""ember.accelerator: the current accelerator, as torch.accelerator. A build
whose CUDA backend sees no device has none: is_available() is False,
current_accelerator() is None, device_count() is 0, and everything that
needs a device raises PyTorch's RuntimeError. With a device, each call is
the CUDA backend's."""

from __future__ import annotations

import warnings

import ember

__all__ = [
    "Graph",
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "empty_host_cache",
    "get_device_capability",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    return ember.cuda.is_available()


def current_accelerator(check_available: bool = False):
    if ember.cuda.is_available():
        return ember.device("cuda")
    return None


def device_count() -> int:
    return ember.cuda.device_count() if is_available() else 0


def _require():
    if not is_available():
        raise RuntimeError(_NONE)


def _index(device, optional=True):
    """A device index of the accelerator (its current one for None)."""
    _require()
    if device is None:
        return ember.cuda.current_device()
    if isinstance(device, int):
        return device
    device = ember.device(device)
    if device.type != "cuda":
        raise ValueError(f"{device} doesn't match the current accelerator cuda.")
    return ember.cuda.current_device() if device.index is None else device.index


def current_device_index() -> int:
    _require()
    return ember.cuda.current_device()


def set_device_index(device, /) -> None:
    ember.cuda.set_device(_index(device))


def current_device_idx() -> int:
    warnings.warn(
        "`torch.accelerator.current_device_idx` is deprecated. Use `torch.accelerator.current_device_index` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return current_device_index()


def set_device_idx(device, /) -> None:
    warnings.warn(
        "`torch.accelerator.set_device_idx` is deprecated. Use `torch.accelerator.set_device_index` instead.",
        FutureWarning,
        stacklevel=2,
    )
    set_device_index(device)


class device_index:  # noqa: N801 - PyTorch's name
    """Makes `device` the current device index inside the block (nothing for None)."""

    def __init__(self, device, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info) -> None:
        if self.idx is not None:
            set_device_index(self.prev_idx)


def current_stream(device=None, /):
    return ember.cuda.current_stream(_index(device))


def set_stream(stream) -> None:
    if not isinstance(stream, ember.Stream):
        raise TypeError(
            "_accelerator_setStream(): incompatible function arguments. The following argument types are "
            f"supported:\n    1. (arg0: torch.Stream) -> None\n\nInvoked with: {stream!r}"
        )
    _require()
    ember.cuda.set_stream(stream)


def synchronize(device=None, /) -> None:
    ember.cuda.synchronize(_index(device))


def get_device_capability(device=None, /) -> dict:
    """The dtypes tensors on the device can hold ({"supported_dtypes": ...})."""
    _index(device)
    names = (
        "bool uint8 int8 int16 int32 int64 uint16 uint32 uint64 float16 bfloat16 float32 float64 "
        "complex32 complex64 complex128"
    )
    return {"supported_dtypes": {getattr(ember, n) for n in names.split()}}


def get_memory_info(device_index=None, /) -> tuple:
    """(free, total) bytes of the device."""
    return tuple(ember.cuda.mem_get_info(_index(device_index)))


def empty_cache() -> None:
    _require()
    ember.cuda.empty_cache()


def empty_host_cache() -> None:
    _require()
    ember.cuda.empty_cache()


def memory_stats(device_index=None, /):
    return ember.cuda.memory_stats(_index(device_index))


def memory_allocated(device_index=None, /) -> int:
    return ember.cuda.memory_allocated(_index(device_index))


def max_memory_allocated(device_index=None, /) -> int:
    return ember.cuda.max_memory_allocated(_index(device_index))


def memory_reserved(device_index=None, /) -> int:
    return ember.cuda.memory_reserved(_index(device_index))


def max_memory_reserved(device_index=None, /) -> int:
    return ember.cuda.max_memory_reserved(_index(device_index))


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    ember.cuda.reset_accumulated_memory_stats(_index(device_index))


def reset_peak_memory_stats(device_index=None, /) -> None:
    ember.cuda.reset_peak_memory_stats(_index(device_index))


class Graph:
    """An accelerator graph: the CUDA backend's CUDAGraph."""

    def __new__(cls, *args, **kwargs):
        _require()
        return ember.cuda.CUDAGraph(*args, **kwargs)
