"""torch.Stream and torch.Event: the device-generic stream and event classes. On the CPU there is one
stream, on which work is complete when a call returns, and events are not supported (as PyTorch's CPU
backend answers)."""

from __future__ import annotations

import ember

__all__ = ["Event", "Stream"]


def _cpu_device(device):
    dev = ember.device("cpu") if device is None else ember.device(device)
    if dev.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    return dev


class Stream:
    """Stream(device, *, priority) -> Stream: an in-order queue of work on a device."""

    __module__ = "torch"

    def __init__(self, device=None, *, priority=0):
        self._device = _cpu_device(device)
        self._priority = priority

    @property
    def device(self):
        return self._device

    @property
    def device_type(self):
        return 0  # DeviceType::CPU

    @property
    def device_index(self):
        return -1

    @property
    def stream_id(self):
        return 0

    def query(self):
        """True: the CPU stream has no pending work."""
        return True

    def synchronize(self):
        """Waits for the stream's work: none is pending on the CPU."""

    def is_capturing(self):
        return False

    def wait_stream(self, stream):
        """Waiting on a stream records an event on it, which the CPU backend does not support."""
        raise RuntimeError("cpu backend doesn't support events.")

    def wait_event(self, event):
        """An event on the CPU is never recorded, so it is complete."""

    def record_event(self, event=None):
        raise RuntimeError("cpu backend doesn't support events.")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __eq__(self, other):
        return isinstance(other, Stream) and self._device == other._device

    def __hash__(self):
        return hash((self._device.type, -1, 0))

    def __repr__(self):
        return "torch.Stream device_type=cpu, device_index=-1, stream_id=0"


class Event:
    """Event(device=None, *, enable_timing=False, blocking=False, interprocess=False): a marker in a
    stream's work."""

    __module__ = "torch"

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self._device = _cpu_device(device)
        self._enable_timing = enable_timing

    @property
    def device(self):
        return self._device

    @property
    def event_id(self):
        return 0

    def query(self):
        """True: an event never recorded is complete."""
        return True

    def record(self, stream=None):
        raise RuntimeError("cpu backend doesn't support events.")

    def wait(self, stream=None):
        """An event never recorded is complete: nothing to wait for."""

    def synchronize(self):
        """An event never recorded is complete."""

    def elapsed_time(self, end_event):
        if not (self._enable_timing and getattr(end_event, "_enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError("cpu backend doesn't support events.")

    def ipc_handle(self):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue if you need this!")

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue if you need this!")

    def __repr__(self):
        flag = 1 if self._enable_timing else 0
        return f"torch.Event device_type=cpu, device_index=-1, event_flag={flag}, event_id=0"
