"""ember.cuda.streams: CUDA streams and events. Without CUDA these raise as
PyTorch's CPU build does; a CUDA build initialises CUDA first (raising
without a device)."""

from __future__ import annotations

import ctypes  # noqa: F401 - part of the namespace, as in PyTorch

import ember
from ember.cuda._utils import _cuda, _is_compiled


class _CudaStreamBase:
    """A stream as (stream_id, device_index, device_type); stream_id is the
    cudaStream_t (0: the legacy default stream)."""

    def __new__(cls, priority=0, stream_id=None, device_index=None, device_type=None, stream_ptr=None):
        if not _is_compiled():
            raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")
        if stream_id is not None and device_index is not None:
            data = (stream_id, device_index, 1 if device_type is None else device_type)
        elif stream_ptr is not None:
            data = _cuda._cuda_getStreamFromExternal(stream_ptr, ember.cuda.current_device())
        else:
            data = _cuda._cuda_streamFromPool(priority, -1)
        stream = super().__new__(cls)
        stream.stream_id, stream.device_index, stream.device_type = data
        return stream

    @property
    def cuda_stream(self) -> int:
        return self.stream_id

    @property
    def device(self):
        return ember.device("cuda", self.device_index)

    @property
    def priority(self) -> int:
        return _cuda._cuda_streamPriority(self.stream_id, self.device_index)

    @staticmethod
    def priority_range():
        return _cuda._cuda_streamPriorityRange()

    def query(self) -> bool:
        return _cuda._cuda_streamQuery(self.stream_id, self.device_index)

    def synchronize(self) -> None:
        _cuda._cuda_streamSynchronize(self.stream_id, self.device_index)


class _CudaEventBase:
    """A CUDA event is created on the device when first recorded, so making
    one needs no device (as in PyTorch's CUDA build); using one does."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, external=False):
        if not _is_compiled():
            raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")
        event = super().__new__(cls)
        event._flags = (bool(enable_timing), bool(blocking), bool(interprocess))
        event._handle = None
        event._device = -1
        return event

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None:
            try:
                ember._C._cuda_eventDestroy(self._device, handle)
            except Exception:
                pass

    @classmethod
    def from_ipc_handle(cls, device, handle):
        return _cuda._cuda_eventFromIpcHandle(device, handle)

    @property
    def cuda_event(self) -> int:
        return 0 if self._handle is None else self._handle

    @property
    def device(self):
        return None if self._handle is None else ember.device("cuda", self._device)

    def record(self, stream=None):
        if stream is None:
            stream = ember.cuda.current_stream()
        if self._handle is None:
            self._handle = _cuda._cuda_eventCreate(stream.device_index, *self._flags)
            self._device = stream.device_index
        elif self._device != stream.device_index:
            raise RuntimeError(
                f"Event device {self._device} does not match recording stream's device {stream.device_index}."
            )
        _cuda._cuda_eventRecord(self._device, self._handle, stream.stream_id)

    def wait(self, stream=None) -> None:
        if self._handle is None:
            return
        if stream is None:
            stream = ember.cuda.current_stream()
        _cuda._cuda_eventWait(self._device, self._handle, stream.stream_id)

    def query(self) -> bool:
        return True if self._handle is None else _cuda._cuda_eventQuery(self._handle)

    def elapsed_time(self, end_event) -> float:
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _cuda._cuda_eventElapsedTime(self._handle, end_event._handle)

    def synchronize(self) -> None:
        if self._handle is not None:
            _cuda._cuda_eventSynchronize(self._handle)

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
        if self._handle is None:
            return "<torch.cuda.Event uninitialized>"
        return f"<torch.cuda.Event {self._handle:#x}>"
