"""Messages between the DataLoader's main process and its workers.

Each worker talks to the main process over its own Unix stream socket. A
message is a header (payload length, number of file descriptors), the
descriptors as SCM_RIGHTS ancillary data, and a pickle. Tensors are not
pickled byte by byte: their storage lives in a shared-memory block (see Note
[Shared-memory storages] in src/ember/python/PyStorage.cpp) whose descriptor
travels with the message; the receiver maps the same pages. A worker's
collate builds batches directly in such blocks, so a batch crosses over
without a copy.
"""

from __future__ import annotations

import array
import io
import os
import pickle
import socket
import struct

import ember
from ember import _C

_HEADER = struct.Struct("<QI")  # payload bytes, descriptors
_MAX_FDS = 250  # per SCM_RIGHTS message (the kernel accepts 253)
_FD_SPACE = socket.CMSG_SPACE(_MAX_FDS * array.array("i").itemsize)


_DTYPE_NAMES = {
    getattr(ember, n): n
    for n in (
        "bool",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
    )
}


class _SharedBlock:
    __slots__ = ("fd", "nbytes")

    def __init__(self, fd, nbytes):
        self.fd = fd
        self.nbytes = nbytes


def _rebuild_tensor(block, dtype_name, offset, size, stride, requires_grad):
    t = _C._tensor_on_storage(block, getattr(ember, dtype_name), offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


class _Pickler(pickle.Pickler):
    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.fds = []
        self._slots = {}

    def reducer_override(self, obj):
        if type(obj) is ember.Tensor and not obj.__dict__:
            return _reduce_tensor(obj)
        return NotImplemented  # subclasses reduce to plain tensors plus their type

    def persistent_id(self, obj):
        if type(obj) is _SharedBlock:
            slot = self._slots.get(obj.fd)
            if slot is None:
                slot = self._slots[obj.fd] = len(self.fds)
                self.fds.append(obj.fd)
            return ("fd", slot, obj.nbytes)
        return None


def _reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    if t.device.type != "cpu":
        return t.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    fd = _C._shm_fd(t)
    if fd < 0:
        _C._share_memory_(t)  # moves the storage (all its views) into shared memory, as PyTorch
        fd = _C._shm_fd(t)
    nbytes = _C._storage_info(t)[2]
    return (
        _rebuild_tensor,
        # the dtype by name: pickling dtype objects searches every module for them
        (
            _SharedBlock(fd, nbytes),
            _DTYPE_NAMES[t.dtype],
            t.storage_offset(),
            tuple(t.shape),
            t.stride(),
            t.requires_grad,
        ),
    )


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, fds):
        super().__init__(file)
        self._fds = fds
        self._mapped = {}

    def persistent_load(self, pid):
        tag, slot, nbytes = pid
        if tag != "fd":
            raise pickle.UnpicklingError(f"unknown persistent id {tag!r}")
        block = self._mapped.get(slot)
        if block is None:
            block = self._mapped[slot] = _C._shm_map(self._fds[slot], nbytes)
        return block


def send(sock, obj):
    """Sends obj (tensors by shared memory) as one message."""
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    payload = buf.getbuffer()
    fds = pickler.fds
    header = _HEADER.pack(len(payload), len(fds))
    if fds:
        sock.sendmsg(
            [header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds[:_MAX_FDS]))]
        )
        for k in range(_MAX_FDS, len(fds), _MAX_FDS):
            sock.sendmsg(
                [b"\0"],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds[k : k + _MAX_FDS]))],
            )
    else:
        sock.sendall(header)
    sock.sendall(payload)
    del payload


def _take_fds(ancdata, flags, out):
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            a = array.array("i")
            a.frombytes(data[: len(data) - len(data) % a.itemsize])
            out.extend(a)
    if flags & socket.MSG_CTRUNC:  # the caller closes what did arrive
        raise RuntimeError("DataLoader: shared-memory descriptors were truncated in transit")


def recv(sock):
    """Receives one message; raises EOFError when the peer has closed."""
    fds = []
    try:
        msg, anc, flags, _ = sock.recvmsg(_HEADER.size, _FD_SPACE)
        _take_fds(anc, flags, fds)
        if not msg:
            raise EOFError
        while len(msg) < _HEADER.size:
            more = sock.recv(_HEADER.size - len(msg))
            if not more:
                raise EOFError
            msg += more
        size, nfds = _HEADER.unpack(msg)
        while len(fds) < nfds:
            part, anc, flags, _ = sock.recvmsg(1, _FD_SPACE)
            _take_fds(anc, flags, fds)
            if not part:
                raise EOFError
        payload = bytearray(size)
        view = memoryview(payload)
        got = 0
        while got < size:
            n = sock.recv_into(view[got:])
            if not n:
                raise EOFError
            got += n
        del view
        return _Unpickler(io.BytesIO(payload), fds).load()
    finally:
        for fd in fds:
            os.close(fd)  # the mappings stay valid
