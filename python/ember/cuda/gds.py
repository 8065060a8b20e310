"""ember.cuda.gds: GPUDirect Storage (file <-> device memory without a host
copy). Ember has no GDS support: each entry point raises."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from ember import _C

__all__ = ["gds_register_buffer", "gds_deregister_buffer", "GdsFile"]


def _unsupported(name: str) -> Callable:
    def fail(*args, **kwargs):
        raise RuntimeError(f"torch._C.{name} is not supported on this platform")

    return fail


def _entry(name: str) -> Callable:
    return getattr(_C, name, None) or _unsupported(name)


def gds_register_buffer(s) -> None:
    _entry("_gds_register_buffer")(s)


def gds_deregister_buffer(s) -> None:
    _entry("_gds_deregister_buffer")(s)


class GdsFile:
    """A file opened for direct reads and writes of device storages."""

    def __init__(self, filename: str, flags: int):
        if sys.platform == "win32":
            raise RuntimeError("GdsFile is not supported on this platform.")
        self.filename = filename
        self.flags = flags
        self.handle: int | None = None
        self.fd = os.open(filename, flags | os.O_DIRECT)
        self.register_handle()

    def __del__(self) -> None:
        if getattr(self, "handle", None) is not None:
            self.deregister_handle()
        if hasattr(self, "fd"):
            os.close(self.fd)

    def register_handle(self) -> None:
        if self.handle is not None:
            raise AssertionError("Cannot register a handle that is already registered.")
        self.handle = _entry("_gds_register_handle")(self.fd)

    def deregister_handle(self) -> None:
        if self.handle is None:
            raise AssertionError("Cannot deregister a handle that is not registered.")
        _entry("_gds_deregister_handle")(self.handle)
        self.handle = None

    def load_storage(self, storage, offset: int = 0) -> None:
        if self.handle is None:
            raise AssertionError("Cannot load data from a file that is not registered.")
        _entry("_gds_load_storage")(self.handle, storage, offset)

    def save_storage(self, storage, offset: int = 0) -> None:
        if self.handle is None:
            raise AssertionError("Cannot save data to a file that is not registered.")
        _entry("_gds_save_storage")(self.handle, storage, offset)
