"""Reducers that send tensors and storages between processes as handles to
shared memory (registered with multiprocessing's ForkingPickler)."""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.reduction import ForkingPickler

import ember
from ember import _C

__all__ = [
    "init_reductions",
    "rebuild_storage_fd",
    "rebuild_storage_filename",
    "rebuild_tensor",
    "reduce_storage",
    "reduce_tensor",
    "reduce_typed_storage",
]


def _dtype_name(dtype):
    # by name: pickling a dtype object makes pickle search every module for it
    return str(dtype).split(".")[1]


def _share(byte_like):
    """The handle of a CPU storage for the current strategy, as (rebuild, args)."""
    from ember.multiprocessing import get_sharing_strategy

    if get_sharing_strategy() == "file_system":
        name = _C._share_filename_(byte_like)
        _C._shm_add_ref(byte_like, 1)  # held by the message until it is received
        return _open_filename, (name,)
    fd = _C._share_fd_(byte_like)
    return _open_fd, (multiprocessing.reduction.DupFd(fd),)


def _open_fd(df, nbytes):
    fd = df.detach()
    try:
        return _C._shm_map(fd, nbytes, True, False)  # pages mapped as they are touched
    finally:
        os.close(fd)


def _open_filename(name, nbytes):
    block = _C._shm_open_named(name, nbytes)
    _C._shm_add_ref(block, -1)  # the message's reference
    return block


def reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    if tensor.device.type != "cpu":
        return tensor.__reduce_ex__(4)  # by value
    opener, handle = _share(tensor)
    nbytes = _C._storage_info(tensor)[2]
    meta = (
        _dtype_name(tensor.dtype),
        tensor.storage_offset(),
        tuple(tensor.shape),
        tensor.stride(),
        tensor.requires_grad,
    )
    return rebuild_tensor, (type(tensor), opener, (*handle, nbytes), meta)


def rebuild_tensor(cls, opener, handle, meta):
    dtype_name, offset, size, stride, requires_grad = meta
    block = opener(*handle)
    t = _C._tensor_on_storage(block, getattr(ember, dtype_name), offset, size, stride)
    if cls is ember.nn.Parameter:
        return ember.nn.Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_storage(storage):
    if storage.device.type != "cpu":
        return storage.__reduce__()
    opener, handle = _share(storage._bytes)
    return rebuild_storage, (type(storage), opener, (*handle, storage.nbytes()))


def rebuild_storage(cls, opener, handle):
    return cls._wrap(opener(*handle))


def rebuild_storage_fd(cls, df, size):
    return cls._wrap(_open_fd(df, size))


def rebuild_storage_filename(cls, manager, handle, size):
    name = handle.decode() if isinstance(handle, bytes) else handle
    return cls._wrap(_open_filename(name, size))


def reduce_typed_storage(storage):
    return rebuild_typed_storage, (storage._untyped_storage, _dtype_name(storage.dtype))


def rebuild_typed_storage(untyped, dtype_name):
    from ember.storage import TypedStorage

    return TypedStorage(wrap_storage=untyped, dtype=getattr(ember, dtype_name))


def init_reductions():
    from ember.storage import TypedStorage, UntypedStorage

    ForkingPickler.register(ember.Tensor, reduce_tensor)
    ForkingPickler.register(ember.nn.Parameter, reduce_tensor)
    ForkingPickler.register(UntypedStorage, reduce_storage)
    ForkingPickler.register(TypedStorage, reduce_typed_storage)
