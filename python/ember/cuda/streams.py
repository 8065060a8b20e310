"""ember.cuda.streams: CUDA streams and events. Ember's CUDA backend has no
streams of its own yet: without CUDA these raise as PyTorch's CPU build
does, and a CUDA build initialises CUDA first (raising without a device)."""

from __future__ import annotations

import ctypes  # noqa: F401 - part of the namespace, as in PyTorch

import ember
from ember.cuda._utils import _cuda, _is_compiled


class _CudaStreamBase:
    def __new__(cls, *args, **kwargs):
        if not _is_compiled():
            raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")
        return _cuda._CudaStreamBase(*args, **kwargs)


class _CudaEventBase:
    """A CUDA event is created on the device when first recorded, so making
    one needs no device (as in PyTorch's CUDA build); using one does."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, external=False):
        if not _is_compiled():
            raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")
        event = super().__new__(cls)
        event._flags = (enable_timing, blocking, interprocess, external)
        return event

    @classmethod
    def from_ipc_handle(cls, device, handle):
        return _cuda._cuda_eventFromIpcHandle(device, handle)

    def record(self, stream=None):
        _cuda._cuda_eventRecord(self, stream)

    def wait(self, stream=None) -> None:
        _cuda._cuda_eventWait(self, stream)

    def query(self) -> bool:
        return True

    def elapsed_time(self, end_event) -> float:
        return _cuda._cuda_eventElapsedTime(self, end_event)

    def synchronize(self) -> None:
        """Nothing to wait for before the event is recorded."""

    def ipc_handle(self):
        return _cuda._cuda_eventIpcHandle(self)


class Stream(_CudaStreamBase):
    """A CUDA stream: an ordered queue of work on one device."""

    def __new__(cls, device=None, priority=0, **kwargs):
        if not _is_compiled():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        if device is None or ("stream_id" in kwargs and "device_index" in kwargs):
            return super().__new__(cls, priority=priority, **kwargs)
        with ember.cuda.device(device):
            return super().__new__(cls, priority=priority, **kwargs)

    def wait_event(self, event) -> None:
        event.wait(self)

    def wait_stream(self, stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        if isinstance(other, Stream):
            return (self.stream_id, self.device_index, self.device_type) == (
                other.stream_id,
                other.device_index,
                other.device_type,
            )
        return False

    def __hash__(self):
        return hash((self.stream_id, self.device_index, self.device_type))

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class ExternalStream(Stream):
    """A stream allocated outside Ember (its lifetime is the caller's)."""

    def __new__(cls, stream_ptr, device=None, **kwargs):
        with ember.cuda.device(device):
            return super().__new__(cls, stream_ptr=stream_ptr, **kwargs)


class Event(_CudaEventBase):
    """A CUDA event: a marker in a stream to wait for or to time."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, external=False):
        return super().__new__(
            cls, enable_timing=enable_timing, blocking=blocking, interprocess=interprocess, external=external
        )

    def __repr__(self) -> str:
        return "<torch.cuda.Event uninitialized>"
