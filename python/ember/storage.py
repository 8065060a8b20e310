"""Storages: the raw bytes under tensors (torch.storage's UntypedStorage and
TypedStorage, reduced to what serialization and data sharing need)."""

from __future__ import annotations

from ember import _C

__all__ = ["UntypedStorage", "TypedStorage"]


class UntypedStorage:
    """The bytes of one storage. Tensors viewing the same storage return
    storages with the same data_ptr(); the object itself is a fresh handle."""

    __slots__ = ("_bytes",)

    def __init__(self, size=0, *, device=None):
        import ember

        self._bytes = ember.empty(int(size), dtype=ember.uint8, device=device)

    @classmethod
    def _wrap(cls, byte_tensor):
        s = cls.__new__(cls)
        s._bytes = byte_tensor  # a 1-D uint8 tensor over the whole storage
        return s

    @classmethod
    def from_buffer(cls, buffer, *, byte_order="native"):
        """A storage holding a copy of the bytes of a buffer-protocol object."""
        import numpy as np

        if byte_order not in ("native", "little", "big"):
            raise ValueError(
                f"Expected byte_order to be 'native', 'little' or 'big', but got {byte_order}"
            )
        arr = np.frombuffer(buffer, dtype=np.uint8)
        return cls._wrap(_C.from_numpy(arr.copy()))

    def nbytes(self):
        return self._bytes.numel()

    def size(self):
        return self._bytes.numel()

    def __len__(self):
        return self._bytes.numel()

    def element_size(self):
        return 1

    def data_ptr(self):
        return _C._storage_info(self._bytes)[1]

    @property
    def _cdata(self):
        return _C._storage_info(self._bytes)[0]

    @property
    def device(self):
        return self._bytes.device

    @property
    def is_cuda(self):
        return self._bytes.device.type == "cuda"

    def tolist(self):
        return self._bytes.tolist()

    def __getitem__(self, idx):
        if isinstance(idx, int):
            n = len(self)
            if not -n <= idx < n:
                raise IndexError(f"index {idx} out of range for storage of size {n}")
            return self._bytes.tolist()[idx]
        raise TypeError("storage indices must be integers")

    def __iter__(self):
        return iter(self.tolist())

    def cpu(self):
        if self._bytes.device.type == "cpu":
            return self
        return UntypedStorage._wrap(self._bytes.to("cpu"))

    def to(self, *, device=None, non_blocking=False):
        import ember

        device = ember.device(device) if device is not None else self.device
        if device == self.device:
            return self
        return UntypedStorage._wrap(self._bytes.to(device))

    def clone(self):
        return UntypedStorage._wrap(self._bytes.clone())

    def is_shared(self):
        return _C._is_shared(self._bytes)

    def share_memory_(self):
        _C._share_memory_(self._bytes)
        return self

    def _tensor(self, dtype, offset, size, stride):
        """A tensor of dtype viewing these bytes (offset, size, stride in elements)."""
        return _C._tensor_on_storage(self._bytes, dtype, offset, size, stride)

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = body + "\n" if body else ""
        return f"{head}[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"

    def __reduce__(self):
        # Plain pickling copies the bytes (ember.save writes storages itself).
        return (_rebuild_untyped_storage, (bytes(self.cpu()._bytes.numpy()),))


def _rebuild_untyped_storage(data):
    return UntypedStorage.from_buffer(data)


class TypedStorage:
    """An UntypedStorage read as elements of one dtype (what a checkpoint's
    persistent ids name, e.g. torch.FloatStorage)."""

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, *, wrap_storage, dtype):
        self._untyped_storage = wrap_storage
        self.dtype = dtype

    def _size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self):
        return self._size()

    def __len__(self):
        return self._size()

    def element_size(self):
        return self.dtype.itemsize

    @property
    def device(self):
        return self._untyped_storage.device

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def untyped(self):
        return self._untyped_storage

    def tolist(self):
        return self._untyped_storage._tensor(self.dtype, 0, (self._size(),), (1,)).tolist()

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = body + "\n" if body else ""
        return f"{head}[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"
