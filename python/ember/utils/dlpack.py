"""DLPack: tensors shared with other array libraries without a copy (torch.utils.dlpack).

The capsules themselves are made and read in C++ (Note [DLPack capsules]); this module speaks the
Python protocol: ``__dlpack__(max_version=...)`` and ``__dlpack_device__()``."""

from __future__ import annotations

import enum
from typing import Any

import ember
from ember import _C

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor) -> Any:
    """An unversioned DLPack capsule ("dltensor") over tensor's memory."""
    return _C._to_dlpack(tensor)


def from_dlpack(ext_tensor: Any) -> ember.Tensor:
    """A tensor over the memory of ext_tensor: an object with ``__dlpack__`` (asked for a DLPack 1.x
    capsule first, an older one where it does not take max_version) or a capsule itself."""
    if hasattr(ext_tensor, "__dlpack__"):
        kwargs: dict[str, Any] = {"max_version": (1, 0)}
        device = ext_tensor.__dlpack_device__()
        if device[0] in (DLDeviceType.kDLCUDA, DLDeviceType.kDLROCM):
            kwargs["stream"] = 1 if device[0] == DLDeviceType.kDLCUDA else 0
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
        except TypeError:
            kwargs.pop("max_version")
            capsule = ext_tensor.__dlpack__(**kwargs)
    else:
        capsule = ext_tensor
    return _C._from_dlpack(capsule)


def _tensor_dlpack(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule over this tensor's memory: versioned ("dltensor_versioned") when the consumer
    accepts DLPack 1.x (max_version), a copy when copy=True or dl_device names another device."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if self.device.type == "cpu" and stream not in (None, -1):
        raise AssertionError("stream should be None on cpu.")
    tensor, copied = self, False
    if dl_device is not None and tuple(dl_device) != tuple(self.__dlpack_device__()):
        kind = DLDeviceType(dl_device[0])
        if copy is False:
            raise BufferError(f"cannot export to {kind.name} without a copy")
        target = "cpu" if kind in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost) else f"cuda:{dl_device[1]}"
        tensor, copied = self.to(target), True
    elif copy:
        tensor, copied = self.clone(), True
    versioned = max_version is not None and max_version[0] >= 1
    return _C._to_dlpack(tensor, versioned, copied)


def _tensor_dlpack_device(self):
    """(device type, device index) as DLPack numbers them."""
    if self.device.type == "cuda":
        return (DLDeviceType.kDLCUDA, self.device.index or 0)
    if self.device.type == "cpu":
        return (DLDeviceType.kDLCPU, 0)
    raise ValueError(f"Unknown device type {self.device.type} for Dlpack")
