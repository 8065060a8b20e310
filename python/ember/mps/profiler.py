"""The MPS profiler (signposts and Metal captures): needs the backend."""

from __future__ import annotations

import contextlib

from ember._absent_backend import missing_entry
from ember.mps._common import no_backend

__all__ = ["start", "stop", "profile", "metal_capture", "is_metal_capture_enabled", "is_capturing_metal"]

is_metal_capture_enabled = missing_entry("_mps_isCaptureEnabled")
is_capturing_metal = missing_entry("_mps_isCapturing")


def start(mode: str = "interval", wait_until_completed: bool = False) -> None:
    no_backend("profilerStartTrace")


def stop() -> None:
    no_backend("profilerStopTrace")


@contextlib.contextmanager
def profile(mode: str = "interval", wait_until_completed: bool = False):
    try:
        start(mode, wait_until_completed)
        yield
    finally:
        stop()


@contextlib.contextmanager
def metal_capture(fname: str):
    if not is_metal_capture_enabled():
        raise RuntimeError("Metal capture is not enabled")
    yield
