"""Storages: the raw bytes under tensors (torch.storage's UntypedStorage and
TypedStorage, reduced to what serialization and data sharing need)."""

from __future__ import annotations

import warnings

from ember import _C

__all__ = ["UntypedStorage", "TypedStorage"]

_typed_storage_warned = False


def _warn_typed_storage_removal(stacklevel=2):
    """Warns (once per process) that TypedStorage is deprecated."""
    global _typed_storage_warned
    if not _typed_storage_warned:
        _typed_storage_warned = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and "
            "UntypedStorage will be the only storage class. This should only matter "
            "to you if you are using storages directly.  To access UntypedStorage "
            "directly, use tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


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
            raise ValueError(f"Expected byte_order to be 'native', 'little' or 'big', but got {byte_order}")
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

    def __setitem__(self, idx, value):
        if isinstance(idx, int):
            n = len(self)
            if not -n <= idx < n:
                raise IndexError(f"index {idx} out of range for storage of size {n}")
        elif not isinstance(idx, slice):
            raise TypeError("storage indices must be integers")
        self._bytes[idx] = value

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
        self._bytes.share_memory_()
        return self

    def _share_fd_cpu_(self):
        """(fd, size): the memory file behind this storage, moved there first if needed."""
        return _C._share_fd_(self._bytes), self.nbytes()

    def _share_filename_cpu_(self):
        """(manager handle, segment name, size): the named segment behind this storage."""
        return b"", _C._share_filename_(self._bytes).encode(), self.nbytes()

    @classmethod
    def _new_shared_fd_cpu(cls, fd, size):
        return cls._wrap(_C._shm_map(fd, size, True, False))

    @classmethod
    def _new_shared_filename_cpu(cls, manager, name, size):
        if isinstance(name, bytes):
            name = name.decode()
        return cls._wrap(_C._shm_open_named(name, size))

    @classmethod
    def _new_shared(cls, size, *, device=None):
        """A new storage of size bytes in shared memory."""
        return cls(size, device=device).share_memory_()

    def _shared_incref(self):
        _C._shm_add_ref(self._bytes, 1)

    def _shared_decref(self):
        _C._shm_add_ref(self._bytes, -1)
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

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        import ember

        if not _internal:
            _warn_typed_storage(stacklevel=3)
        self.dtype = ember.get_default_dtype() if dtype is None else dtype
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage(): No positional arguments are allowed with wrap_storage")
            self._untyped_storage = wrap_storage
        elif not args:
            self._untyped_storage = UntypedStorage(0, device=device)
        elif len(args) == 1 and isinstance(args[0], int):
            self._untyped_storage = UntypedStorage(args[0] * self.dtype.itemsize, device=device)
        elif len(args) == 1:
            data = ember.tensor(args[0], dtype=self.dtype, device=device).reshape(-1)
            self._untyped_storage = UntypedStorage._wrap(_C._storage_bytes(data))
        else:
            raise TypeError("TypedStorage(): too many positional arguments")

    def _flat(self):
        """A 1-D tensor of dtype over the whole storage."""
        return self._untyped_storage._tensor(self.dtype, 0, (self._size(),), (1,))

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            from ember._legacy_types import tensor_type_of

            return "torch." + tensor_type_of(self.dtype).__name__.replace("Tensor", "Storage")
        raise NotImplementedError("TypedStorage.type(dtype) is not supported")

    def __getitem__(self, idx):
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        n = self._size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._flat()[idx].item()

    def __setitem__(self, idx, value):
        self._flat()[idx] = value

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._flat().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        src = source._flat() if isinstance(source, TypedStorage) else source
        self._flat().copy_(src)
        return self

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def cpu(self):
        return TypedStorage(wrap_storage=self._untyped_storage.cpu(), dtype=self.dtype, _internal=True)

    def clone(self):
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype, _internal=True)

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
        return self._flat().tolist()

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = body + "\n" if body else ""
        return f"{head}[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"


def _warn_typed_storage(stacklevel=2):
    import warnings

    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
        "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
        "directly, use tensor.untyped_storage() instead of tensor.storage()",
        UserWarning,
        stacklevel=stacklevel + 1,
    )
