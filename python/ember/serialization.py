"""ember.save and ember.load: PyTorch's zip checkpoint format.

Files written here load with torch.load and files written by torch.save load
here. See Note [Checkpoint format] and Note [Pickled names].
"""

# Note [Checkpoint format]
# A checkpoint is an uncompressed zip archive whose entries share one prefix
# folder (the file name without its extension, or "archive" for file
# objects):
#   <prefix>/data.pkl                the object, pickled with protocol 2
#   <prefix>/.format_version         "1"
#   <prefix>/.storage_alignment      "64"
#   <prefix>/byteorder               "little" (sys.byteorder)
#   <prefix>/data/<key>              the raw bytes of each storage, keys "0", "1", ...
#                                    in order of first use
#   <prefix>/version                 "3\n"
#   <prefix>/.data/serialization_id  40 decimal digits
# Each entry's data starts at a multiple of 64 bytes: the local header carries
# an extra field "FB" of 'Z' bytes as padding. Local headers have general
# purpose flags 0x0808 (UTF-8 names, sizes in a data descriptor after the
# data), zero CRC/sizes/time; empty records have flags 0x0800 and no
# descriptor; a zip64 end-of-directory record is always written. This is the
# layout of PyTorch's writer (miniz), byte for byte.
#
# Inside data.pkl a storage is a persistent id
#   ('storage', torch.FloatStorage, '<key>', 'cpu', <numel>)
# and a tensor the call
#   torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())
# so views of one storage share one data/<key> entry, with their own offset
# and strides. A Parameter is torch._utils._rebuild_parameter(tensor,
# requires_grad, OrderedDict()); a tensor with Python attributes or of another
# subclass goes through torch._tensor._rebuild_from_type_v2.

# Note [Pickled names]
# Ember never imports torch, yet its files must name torch's functions and
# classes. The standard pickler insists that a global it writes can be
# imported under its name, so data.pkl is written by a subclass of the
# pure-Python pickler whose placeholders (_TorchGlobal) write GLOBAL opcodes
# with torch's names directly, and whose save_global writes Ember's public
# objects under torch's names (ember.Tensor -> torch.Tensor, dtypes ->
# torch.float32, ...). Loading maps the names back (_TORCH_TO_EMBER).

from __future__ import annotations

import _compat_pickle
import contextlib
import errno
import io
import os
import pickle
import struct
import sys
import types
import zlib
from collections import Counter, OrderedDict

import ember
from ember import _C, _utils
from ember.storage import TypedStorage, UntypedStorage

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "DEFAULT_PROTOCOL",
]

DEFAULT_PROTOCOL = 2
_STORAGE_ALIGNMENT = 64
_ZIP64_LIMIT = 0xFFFFFFFF


class _TorchGlobal:
    """A placeholder pickled as GLOBAL '<module> <name>' (a torch name)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __call__(self, *args, **kwargs):  # pickle wants reduce callables to be callable
        raise RuntimeError(f"{self.module}.{self.name} is a name for checkpoints only")

    def __repr__(self):
        return f"<{self.module}.{self.name}>"


_REBUILD_TENSOR_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _TorchGlobal("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _TorchGlobal("torch.storage", "UntypedStorage")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _TorchGlobal("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE_V2 = _TorchGlobal("torch._tensor", "_rebuild_from_type_v2")
_REBUILD_META = _TorchGlobal("torch._utils", "_rebuild_meta_tensor_no_storage")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_REBUILD_SPARSE = _TorchGlobal("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _TorchGlobal("torch.serialization", "_get_layout")

# dtype -> the legacy storage class name that persistent ids carry
_STORAGE_NAMES = {
    ember.uint8: "ByteStorage",
    ember.int8: "CharStorage",
    ember.int16: "ShortStorage",
    ember.int32: "IntStorage",
    ember.int64: "LongStorage",
    ember.float16: "HalfStorage",
    ember.float32: "FloatStorage",
    ember.float64: "DoubleStorage",
    ember.bool: "BoolStorage",
    ember.bfloat16: "BFloat16Storage",
    ember.complex64: "ComplexFloatStorage",
    ember.complex128: "ComplexDoubleStorage",
}
_STORAGE_GLOBALS = {dt: _TorchGlobal("torch", name) for dt, name in _STORAGE_NAMES.items()}
_DTYPE_NAMES = {dt: str(dt).split(".", 1)[1] for dt in _STORAGE_NAMES}  # float32, ...
# Dtypes without a legacy storage class: saved over an untyped storage (_rebuild_tensor_v3).
_LIMITED_DTYPE_NAMES = (
    "uint16 uint32 uint64 float8_e5m2 float8_e4m3fn float8_e5m2fnuz float8_e4m3fnuz float8_e8m0fnu complex32 "
    "float4_e2m1fn_x2 bits1x8 bits2x4 bits4x2 bits8 bits16 uint1 uint2 uint3 uint4 uint5 uint6 uint7 "
    "int1 int2 int3 int4 int5 int6 int7"
).split()


def _export_names():
    """Ember objects -> the torch names they are written under."""
    from ember.nn import Parameter

    return {
        id(ember.Tensor): ("torch", "Tensor"),
        id(ember.Size): ("torch", "Size"),
        id(ember.device): ("torch", "device"),
        id(Parameter): ("torch.nn.parameter", "Parameter"),
        id(_utils._rebuild_tensor_v2): ("torch._utils", "_rebuild_tensor_v2"),
        id(_utils._rebuild_parameter): ("torch._utils", "_rebuild_parameter"),
        id(_utils._rebuild_parameter_with_state): ("torch._utils", "_rebuild_parameter_with_state"),
        id(_utils._rebuild_from_type_v2): ("torch._tensor", "_rebuild_from_type_v2"),
        id(_utils._rebuild_meta_tensor_no_storage): ("torch._utils", "_rebuild_meta_tensor_no_storage"),
    }


# ---- writing -----------------------------------------------------------------------


class _StorageRef:
    __slots__ = ("dtype", "key", "location", "numel")

    def __init__(self, dtype, key, location, numel):
        self.dtype = dtype
        self.key = key
        self.location = location
        self.numel = numel


class _CheckpointPickler(pickle._Pickler):
    """Pickles tensors as PyTorch does (Note [Pickled names])."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # key -> (tensor keeping the storage alive, nbytes)
        self._keys = {}  # storage identity -> key
        self._storage_dtypes = {}  # data address -> dtype
        self._exports = _export_names()
        from ember.nn import Parameter

        self._parameter = Parameter

    # torch names
    def _write_global(self, module, name):
        self.write(pickle.GLOBAL + bytes(module, "utf-8") + b"\n" + bytes(name, "utf-8") + b"\n")

    def _save_torch_global(self, obj):
        self._write_global(obj.module, obj.name)
        self.memoize(obj)

    dispatch[_TorchGlobal] = _save_torch_global

    def _save_dtype(self, obj):
        self._write_global("torch", _DTYPE_NAMES[obj])
        self.memoize(obj)

    dispatch[type(ember.float32)] = _save_dtype

    def save_global(self, obj, name=None):
        alias = self._exports.get(id(obj))
        if alias is None:
            return super().save_global(obj, name)
        self._write_global(*alias)
        self.memoize(obj)

    # the base class maps functions to its own save_global; route them to ours
    dispatch[types.FunctionType] = lambda self, obj: self.save_global(obj)

    # tensors and storages
    def reducer_override(self, obj):
        if isinstance(obj, ember.Tensor):
            return self._reduce_tensor(obj)
        if type(obj) is ember.Size:
            return (_TORCH_SIZE, (tuple(obj),))
        if type(obj) is ember.layout:
            return (_GET_LAYOUT, (str(obj),))
        return NotImplemented

    def _reduce_tensor(self, t):
        sparse = _sparse_parts(t)
        if sparse is not None:
            # torch._utils._rebuild_sparse_tensor(torch.serialization._get_layout(name), parts)
            return (_REBUILD_SPARSE, sparse)
        if isinstance(t, self._parameter):
            state = _utils._get_obj_state(t)
            if not state:
                return (_REBUILD_PARAMETER, (t.detach(), t.requires_grad, OrderedDict()))
            return (
                _REBUILD_PARAMETER_WITH_STATE,
                (t.detach(), t.requires_grad, OrderedDict(), state),
            )
        state = _utils._get_obj_state(t)
        if t.is_meta and type(t) is ember.Tensor and not state:
            # No data to store: dtype, size and strides only, as PyTorch writes it.
            return (_REBUILD_META, (t.dtype, tuple(t.shape), t.stride(), t.requires_grad))
        args = (
            self._storage_ref(t),
            t.storage_offset(),
            tuple(t.shape),
            t.stride(),
            t.requires_grad,
            OrderedDict(),
        )
        metadata = _utils.get_tensor_metadata(t)
        if t.dtype not in _STORAGE_GLOBALS:
            # Dtypes without a legacy storage class (uint16, float8 ...): PyTorch's
            # _rebuild_tensor_v3 over an untyped storage, the dtype named last.
            args = (*args, _TorchGlobal("torch", str(t.dtype).split(".", 1)[1]))
            if metadata:
                args = (*args, metadata)
            if type(t) is ember.Tensor and not state:
                return (_REBUILD_TENSOR_V3, args)
            return (_REBUILD_FROM_TYPE_V2, (_REBUILD_TENSOR_V3, type(t), args, state))
        if metadata:
            args = (*args, metadata)
        if type(t) is ember.Tensor and not state:
            return (_REBUILD_TENSOR_V2, args)
        return (_REBUILD_FROM_TYPE_V2, (_REBUILD_TENSOR_V2, type(t), args, state))

    def _storage_ref(self, t):
        ident, data_ptr, nbytes, device = _C._storage_info(t)
        if data_ptr != 0:
            seen = self._storage_dtypes.setdefault(data_ptr, t.dtype)
            if seen != t.dtype:
                raise RuntimeError(
                    "Cannot save multiple tensors or storages that view the same data as different types"
                )
        key = self._keys.setdefault(ident, str(len(self._keys)))
        if key not in self.storages:
            self.storages[key] = (t, nbytes)
        if device == "cpu":
            device = "cpu"  # one string object, memoized by the pickler as in PyTorch's files
        if t.dtype not in _STORAGE_GLOBALS:
            return _StorageRef(None, key, device, nbytes)  # untyped: its size in bytes
        return _StorageRef(t.dtype, key, device, nbytes // t.dtype.itemsize)

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            kind = _UNTYPED_STORAGE if obj.dtype is None else _STORAGE_GLOBALS[obj.dtype]
            return ("storage", kind, obj.key, obj.location, obj.numel)
        return None


class _ZipWriter:
    """Writes the archive layout of Note [Checkpoint format] to a binary stream."""

    def __init__(self, stream, prefix):
        self.stream = stream
        self.prefix = prefix
        self.pos = 0
        self.entries = []  # (name bytes, crc, size, header offset)
        self._id_hash = 0

    def _write(self, data):
        self.stream.write(data)
        self.pos += len(data) if not isinstance(data, memoryview) else data.nbytes

    def write_record(self, name, data):
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        size = len(view)
        full = f"{self.prefix}/{name}".encode()
        offset = self.pos
        zip64 = b""
        if size >= _ZIP64_LIMIT or offset >= _ZIP64_LIMIT:
            zip64 = struct.pack("<HH", 1, 0)  # filled below
            body = b""
            if size >= _ZIP64_LIMIT:
                body += struct.pack("<QQ", size, size)
            if offset >= _ZIP64_LIMIT:
                body += struct.pack("<Q", offset)
            zip64 = struct.pack("<HH", 1, len(body)) + body
        start = offset + 30 + len(full) + len(zip64) + 4
        pad = (-start) % _STORAGE_ALIGNMENT
        extra = zip64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x0808 if size else 0x0800
        header = struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 0, flags, 0, 0, 0, 0, 0, 0, len(full), len(extra)
        )
        self._write(header + full + extra)
        if size:
            self._write(view)
        crc = zlib.crc32(view) & 0xFFFFFFFF
        if not size:
            pass  # an empty record has no data descriptor (and flags 0x0800 in the directory)
        elif size >= _ZIP64_LIMIT or offset >= _ZIP64_LIMIT:
            self._write(struct.pack("<IIQQ", 0x08074B50, crc, size, size))
        else:
            self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        self.entries.append((full, crc, size, offset))
        self._id_hash = (self._id_hash * 1000003 + crc + size) % (10**20)

    def finish(self):
        cd_start = self.pos
        for full, crc, size, offset in self.entries:
            body = b""
            csize = usize = size
            hoff = offset
            if size >= _ZIP64_LIMIT:
                body += struct.pack("<QQ", size, size)
                csize = usize = 0xFFFFFFFF
            if offset >= _ZIP64_LIMIT:
                body += struct.pack("<Q", offset)
                hoff = 0xFFFFFFFF
            extra = struct.pack("<HH", 1, len(body)) + body if body else b""
            self._write(
                struct.pack(
                    "<IHHHHHHIIIHHHHHII",
                    0x02014B50,
                    0,
                    0,
                    0x0808 if size else 0x0800,
                    0,
                    0,
                    0,
                    crc,
                    csize,
                    usize,
                    len(full),
                    len(extra),
                    0,
                    0,
                    0,
                    0,
                    hoff,
                )
                + full
                + extra
            )
        cd_size = self.pos - cd_start
        n = len(self.entries)
        eocd64 = self.pos
        self._write(
            struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 45, 0, 0, n, n, cd_size, cd_start)
        )
        self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
        self._write(
            struct.pack(
                "<IHHHHIIH",
                0x06054B50,
                0,
                0,
                min(n, 0xFFFF),
                min(n, 0xFFFF),
                min(cd_size, 0xFFFFFFFF),
                min(cd_start, 0xFFFFFFFF),
                0,
            )
        )

    def serialization_id(self):
        return f"{self._id_hash:020d}{int.from_bytes(os.urandom(8), 'little') % 10**20:020d}"


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        base = os.path.basename(os.fspath(f))
        dot = base.rfind(".")
        return base[:dot] if dot >= 0 else base
    return "archive"


@contextlib.contextmanager
def _atomic_file(path):
    """A sibling temporary file renamed over `path` once fully written, so
    that an interrupted save never leaves a truncated checkpoint behind."""
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {os.path.dirname(path)} does not exist.")
    if os.path.isdir(path):
        raise RuntimeError(f"open file failed with strerror: {os.strerror(errno.EISDIR)}")
    target = os.path.realpath(path)  # a symlink keeps pointing at the new file
    tmp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as stream:
            yield stream
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def save(
    obj,
    f,
    pickle_module=pickle,
    pickle_protocol=DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
):
    """Saves obj to f (a path or a writable binary file object) in PyTorch's
    zip checkpoint format (Note [Checkpoint format])."""
    if pickle_module is not pickle:
        raise NotImplementedError("ember.save supports only the standard pickle module")
    if not _use_new_zipfile_serialization:
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as stream:
                _legacy_save(obj, stream, pickle_protocol)
        else:
            _legacy_save(obj, f, pickle_protocol)
        return
    buf = io.BytesIO()
    pickler = _CheckpointPickler(buf, pickle_protocol)
    pickler.dump(obj)
    storages = pickler.storages
    del pickler
    if isinstance(f, (str, os.PathLike)):
        with _atomic_file(f) as stream:
            _write_archive(stream, _archive_name(f), buf, storages, _disable_byteorder_record)
    else:
        if not hasattr(f, "write"):
            raise AttributeError(
                "expected 'f' to be string, path, or a file-like object with a 'write' attribute"
            )
        _write_archive(f, _archive_name(f), buf, storages, _disable_byteorder_record)
        if hasattr(f, "flush"):
            f.flush()


# Note [Legacy format]
# Before the zip format (torch.save(..., _use_new_zipfile_serialization=False),
# and files from PyTorch < 1.6): a stream of pickles - the magic number, the
# protocol version 1001, a dict of system facts, the object (persistent ids
# ('storage', torch.FloatStorage, '<key>', 'cpu', numel, None), the key being
# the storage's address as a string), the sorted list of keys - then for each
# key the element count (int64, little endian) and the raw bytes.

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


class _LegacyPickler(_CheckpointPickler):
    def _storage_ref(self, t):
        ident, data_ptr, nbytes, device = _C._storage_info(t)
        if data_ptr != 0:
            seen = self._storage_dtypes.setdefault(data_ptr, t.dtype)
            if seen != t.dtype:
                raise RuntimeError(
                    "Cannot save multiple tensors or storages that view the same data as different types"
                )
        key = str(ident)
        if key not in self.storages:
            self.storages[key] = (t, nbytes)
        if device == "cpu":
            device = "cpu"
        return _StorageRef(t.dtype, key, device, nbytes // t.dtype.itemsize)

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return (
                "storage",
                _STORAGE_GLOBALS[obj.dtype],
                str(obj.key),
                obj.location,
                obj.numel,
                None,
            )
        return None


def _legacy_save(obj, stream, protocol):
    sys_info = {
        "protocol_version": _LEGACY_PROTOCOL,
        "little_endian": sys.byteorder == "little",
        "type_sizes": {"short": 2, "int": 4, "long": 4},
    }
    pickle.dump(_LEGACY_MAGIC, stream, protocol=protocol)
    pickle.dump(_LEGACY_PROTOCOL, stream, protocol=protocol)
    pickle.dump(sys_info, stream, protocol=protocol)
    pickler = _LegacyPickler(stream, protocol)
    pickler.dump(obj)
    storages = pickler.storages
    del pickler
    keys = sorted(storages)
    pickle.dump(keys, stream, protocol=protocol)
    for key in keys:
        t, nbytes = storages[key]
        stream.write(struct.pack("<q", nbytes // t.dtype.itemsize))
        if nbytes:
            stream.write(_storage_data(t))
    if hasattr(stream, "flush"):
        stream.flush()


def _storage_data(t):
    """The bytes of t's whole storage, as an ndarray (copied to the CPU if needed)."""
    data = _C._storage_bytes(t)
    if data.device.type != "cpu":
        data = data.to("cpu")
    return data.numpy()


def _write_archive(stream, prefix, pickled, storages, disable_byteorder):
    w = _ZipWriter(stream, prefix)
    w.write_record("data.pkl", pickled.getbuffer())
    w.write_record(".format_version", b"1")
    w.write_record(".storage_alignment", str(_STORAGE_ALIGNMENT).encode())
    if not disable_byteorder:
        w.write_record("byteorder", sys.byteorder.encode())
    for key, (t, nbytes) in storages.items():
        w.write_record(f"data/{key}", _storage_data(t) if nbytes else b"")
    w.write_record("version", b"3\n")
    w.write_record(".data/serialization_id", w.serialization_id().encode())
    w.finish()


# ---- reading -----------------------------------------------------------------------

_UNSAFE_MESSAGE = (
    "Re-running `ember.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source."
)

_marked_safe_globals = set()


def add_safe_globals(safe_globals):
    """Allows these classes/functions (or (object, "module.name") pairs) in
    weights_only loads."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals | set(safe_globals)


def get_safe_globals():
    return list(_marked_safe_globals)


def clear_safe_globals():
    global _marked_safe_globals
    _marked_safe_globals = set()


class safe_globals:
    """Context manager: add_safe_globals for the duration of a block."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        global _marked_safe_globals
        _marked_safe_globals = _marked_safe_globals - set(self.safe_globals)


def _user_allowed_globals():
    out = {}
    for g in _marked_safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(g)}"
                )
            if type(g[1]) is not str:
                raise TypeError(
                    f"Expected second item in tuple to be str of callable full path, but got: {type(g[1])}"
                )
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out


def _dtype_of_storage(name):
    for dt, n in _STORAGE_NAMES.items():
        if n == name:
            return dt
    return None


class _StorageType:
    """What a checkpoint's torch.FloatStorage & co. unpickle to: a dtype holder."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})"


def _rebuild_device(*args):
    return ember.device(*args)


def _sparse_parts(t):
    """(layout, parts) of a sparse tensor as PyTorch pickles it, or None."""
    from ember._sparse_compressed import SparseCompressedTensor
    from ember._sparse_coo import SparseCOOTensor

    if isinstance(t, SparseCOOTensor):
        return ember.sparse_coo, (t._sp_indices, t._sp_values.detach(), ember.Size(t.shape), t._sp_coalesced)
    if isinstance(t, SparseCompressedTensor):
        return t._sc_layout, (t._sc_cidx, t._sc_pidx, t._sc_values.detach(), ember.Size(t.shape))
    return None


def _rebuild_sparse_tensor(layout, data):
    from ember._sparse_compressed import _rebuild_sparse_tensor as rebuild

    return rebuild(layout, data)


def _get_layout(name):
    """torch.serialization._get_layout: a layout from its printed name."""
    from ember._layout import _layout_by_name

    return _layout_by_name(name.split(".", 1)[1])


def _torch_to_ember():
    """Torch names in checkpoints -> Ember objects (the safe ones: a weights_only
    load accepts these and nothing else, plus user-allowed globals)."""
    from ember.nn import Parameter

    table = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": ember.Size,
        "torch.Tensor": ember.Tensor,
        "torch.device": ember.device,
        "_codecs.encode": __import__("_codecs").encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor": _utils._rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _utils._rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _utils._rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _utils._rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _utils._rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,
        "torch._utils._rebuild_meta_tensor_no_storage": _utils._rebuild_meta_tensor_no_storage,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch.serialization._get_layout": _get_layout,
        "torch.storage.UntypedStorage": UntypedStorage,
        "torch.storage.TypedStorage": TypedStorage,
        "torch.UntypedStorage": UntypedStorage,
    }
    for dt, name in _STORAGE_NAMES.items():
        table[f"torch.{name}"] = _StorageType(dt)
        table[f"torch.{_DTYPE_NAMES[dt]}"] = dt
    for name in _LIMITED_DTYPE_NAMES:
        table[f"torch.{name}"] = getattr(ember, name)
    return table


_SAFE = None


def _safe_table():
    global _SAFE
    if _SAFE is None:
        _SAFE = _torch_to_ember()
    return _SAFE


def _map_torch_name(module, name):
    """A torch global that is not in the safe table -> the Ember object of the
    same name, if Ember has one (ember.nn.modules.linear.Linear, ...)."""
    if module == "torch" or module.startswith("torch."):
        import importlib

        try:
            mod = importlib.import_module("ember" + module[5:])
            obj = mod
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        except (ImportError, AttributeError):
            raise pickle.UnpicklingError(f"Ember has no equivalent of {module}.{name}") from None
    return None


def _allowed_torch_name(module, name):
    """A torch global of a checkpoint PyTorch wrote (torch.nn.modules.linear.Linear)
    whose Ember object the user allowed (safe_globals([nn.Linear]))."""
    try:
        obj = _map_torch_name(module, name)
    except pickle.UnpicklingError:
        return None
    if obj is not None and any(obj is g for g in _marked_safe_globals):
        return obj
    return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, persistent_load, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent_load = persistent_load
        self._weights_only = weights_only

    def persistent_load(self, pid):
        return self._persistent_load(pid)

    def find_class(self, module, name):
        # Python 2 names that protocol-2 pickles carry (__builtin__.set, ...)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        safe = _safe_table().get(full)
        if safe is not None:
            return safe
        if self._weights_only:
            if module in ("sys", "os", "posix", "nt"):
                raise pickle.UnpicklingError(
                    f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
                )
            user = _user_allowed_globals().get(full)
            if user is None:
                user = _allowed_torch_name(module, name)
            if user is not None:
                return user
            shown = full.removeprefix("builtins.")
            raise pickle.UnpicklingError(
                f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
                f"`ember.serialization.add_safe_globals([{shown}])` or the "
                f"`ember.serialization.safe_globals([{shown}])` context manager to allowlist this global "
                "if you trust this class/function."
            )
        mapped = _map_torch_name(module, name)
        if mapped is not None:
            return mapped
        return super().find_class(module, name)


def _weights_only_message(message):
    if "was not an allowed global by default" in message:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "do those steps only if you trust the source of the checkpoint. "
            f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
            "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
            + message
        )
    return f"Weights only load failed. {_UNSAFE_MESSAGE}\n\n{message}"


def _restore_location(map_location):
    def default(storage, location):
        if location == "cpu" or location.startswith("cpu:"):
            return storage
        if location.startswith("cuda"):
            if not ember.cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but ember.cuda.is_available() is False. "
                    "If you are running on a CPU-only machine, please use ember.load with "
                    "map_location=ember.device('cpu') to map your storages to the CPU."
                )
            return storage.to(device=ember.device(location))
        if location == "meta":
            return UntypedStorage(storage.nbytes(), device="meta")
        raise RuntimeError(
            f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with {location})"
        )

    if map_location is None:
        return default
    if isinstance(map_location, dict):
        return lambda storage, location: default(storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)):
        loc = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda storage, location: default(storage, loc)
    if isinstance(map_location, ember.device):
        return lambda storage, location: default(storage, str(map_location))

    def call(storage, location):
        result = map_location(storage, location)
        return default(storage, location) if result is None else result

    return call


class _ZipReader:
    """Reads records of a checkpoint archive; storages are read straight into
    tensor memory (or mapped from the file, mmap=True)."""

    def __init__(self, stream, mapped=None):
        import zipfile  # imported on first use, not with ember

        self.stream = stream
        try:
            self.zf = zipfile.ZipFile(stream)
        except zipfile.BadZipFile as e:
            # A truncated archive has lost its central directory (at the end).
            why = "failed finding central directory" if "not a zip file" in str(e) else str(e)
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {why}") from None
        names = self.zf.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pkl:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        self.prefix = pkl[0][: -len("data.pkl")]
        self.names = set(names)
        self.mapped = mapped

    def has_record(self, name):
        return self.prefix + name in self.names

    def get_record(self, name):
        return self.zf.read(self.prefix + name)

    def _data_offset(self, info):
        self.stream.seek(info.header_offset)
        header = self.stream.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(
                f"PytorchStreamReader failed reading file {info.filename}: bad local header"
            )
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + name_len + extra_len

    def read_storage(self, name, nbytes):
        info = self.zf.getinfo(self.prefix + name)
        if info.file_size != nbytes:
            raise RuntimeError(
                f"PytorchStreamReader: record {name} holds {info.file_size} bytes, expected {nbytes}"
            )
        if info.compress_type != 0:  # not zipfile.ZIP_STORED
            raw = self.zf.read(info)
            return UntypedStorage.from_buffer(raw) if nbytes else UntypedStorage(0)
        offset = self._data_offset(info)
        if self.mapped is not None:
            import numpy as np

            arr = np.frombuffer(self.mapped, dtype=np.uint8, count=nbytes, offset=offset)
            return UntypedStorage._wrap(_C.from_numpy(arr))
        storage = UntypedStorage(nbytes)
        if nbytes:
            self.stream.seek(offset)
            target = memoryview(storage._bytes.numpy())
            got = 0
            readinto = getattr(self.stream, "readinto", None)
            while got < nbytes:
                if readinto is not None:
                    n = readinto(target[got:])
                else:
                    chunk = self.stream.read(nbytes - got)
                    n = len(chunk)
                    target[got : got + n] = chunk
                if not n:
                    raise RuntimeError(
                        f"PytorchStreamReader failed reading file {name}: file read failed"
                    )
                got += n
        return storage


def _env_flag(name):
    """TORCH_FORCE_<name> or EMBER_FORCE_<name> set to a true value."""
    values = (os.getenv(prefix + name, "0").lower() for prefix in ("TORCH_FORCE_", "EMBER_FORCE_"))
    return any(v in ("1", "y", "yes", "true") for v in values)


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def load(
    f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args
):
    """Loads an object saved with ember.save or torch.save.

    weights_only (default True) unpickles only tensors, parameters, containers
    and the other allow-listed types (add_safe_globals for more)."""
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = pickle_module is None
    # PyTorch's switches, under its names or Ember's.
    force_on, force_off = _env_flag("WEIGHTS_ONLY_LOAD"), _env_flag("NO_WEIGHTS_ONLY_LOAD")
    if force_on and force_off:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
            "should be set, but both were set."
        )
    if force_on:
        weights_only = True
    elif force_off and weights_only_not_set:
        import warnings

        warnings.warn(
            "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
            "`weights_only` argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
            UserWarning,
            stacklevel=2,
        )
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.load supports only the standard pickle module")
    if pickle_load_args and weights_only:
        import warnings

        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")

    if _is_path(f):
        with open(f, "rb") as stream:
            return _load_stream(stream, f, map_location, weights_only, mmap, pickle_load_args)
    if mmap:
        raise ValueError("f must be a file path in order to use the mmap argument")
    return _load_stream(f, None, map_location, weights_only, False, pickle_load_args)


def _load_stream(stream, path, map_location, weights_only, use_mmap, pickle_load_args):
    if not (hasattr(stream, "seekable") and hasattr(stream, "readinto")):
        stream = io.BytesIO(stream.read())  # a minimal file-like object (read/seek/tell)
    start = stream.tell()

    # An archive is known by its first bytes, as PyTorch does: a truncated one
    # (no central directory) is a broken archive, not a legacy pickle.
    magic = stream.read(4)
    stream.seek(start)
    if magic != b"PK\x03\x04":
        if use_mmap:
            raise RuntimeError(
                "mmap can only be used with files saved with "
                f"`torch.save({path}, _use_new_zipfile_serialization=True), "
                "please torch.save your checkpoint with this option in order to use mmap."
            )
        if weights_only:
            try:
                return _legacy_load(stream, map_location, True, pickle_load_args)
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
        return _legacy_load(stream, map_location, False, pickle_load_args)
    stream.seek(start)
    mapped = None
    if use_mmap:
        import mmap as _mmap

        mapped = _mmap.mmap(stream.fileno(), 0, access=_mmap.ACCESS_COPY)
    reader = _ZipReader(stream, mapped)
    if reader.has_record("constants.pkl"):
        raise RuntimeError("ember.load: this is a TorchScript archive, which Ember cannot load")
    if weights_only:
        try:
            return _load_archive(reader, map_location, True, pickle_load_args)
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
    return _load_archive(reader, map_location, False, pickle_load_args)


def _load_archive(reader, map_location, weights_only, pickle_load_args):
    restore = _restore_location(map_location)
    byteorder = b"little"
    if reader.has_record("byteorder"):
        byteorder = reader.get_record("byteorder")
        if byteorder not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + byteorder.decode())
    swap = byteorder.decode() != sys.byteorder
    loaded = {}

    def persistent_load(pid):
        if not isinstance(pid, tuple) or not pid:
            raise pickle.UnpicklingError(
                f"persistent_load id must be tuple or int, but got {type(pid)}"
            )
        typename = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if typename != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {typename}"
            )
        storage_type, key, location, numel = pid[1:]
        location = location.decode("ascii") if isinstance(location, bytes) else location
        if storage_type is UntypedStorage:
            dtype = ember.uint8
        elif isinstance(storage_type, _StorageType):
            dtype = storage_type.dtype
        else:
            raise pickle.UnpicklingError(f"unknown storage type {storage_type!r}")
        if key in loaded:
            return loaded[key]
        nbytes = numel * dtype.itemsize
        storage = reader.read_storage(f"data/{key}", nbytes)
        if swap and dtype.itemsize > 1:
            _byteswap(storage, dtype)
        storage = restore(storage, location)
        if isinstance(storage, TypedStorage):
            storage = storage._untyped_storage
        typed = TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)
        loaded[key] = typed
        return typed

    data = io.BytesIO(reader.get_record("data.pkl"))
    unpickler = _Unpickler(data, persistent_load, weights_only, **pickle_load_args)
    result = unpickler.load()
    return result


def _legacy_load(stream, map_location, weights_only, pickle_load_args):
    """Reads Note [Legacy format]."""
    restore = _restore_location(map_location)

    def small_pickle():
        return _Unpickler(stream, _no_persistent_ids, weights_only, **pickle_load_args).load()

    magic = small_pickle()
    if magic != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = small_pickle()
    if version != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {version}")
    sys_info = small_pickle()
    swap = not sys_info.get("little_endian", True)
    storages = {}  # key -> (UntypedStorage, dtype); filled after the object is built

    def persistent_load(pid):
        typename = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if typename == "module" and not weights_only:
            return pid[1]  # a module class saved with its source
        if typename != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {typename}"
            )
        storage_type, key, location, numel, view_metadata = pid[1:]
        location = location.decode("ascii") if isinstance(location, bytes) else location
        dtype = ember.uint8 if storage_type is UntypedStorage else storage_type.dtype
        if key not in storages:
            storage = UntypedStorage(numel * dtype.itemsize)
            if restore(storage, location) is not storage:
                raise NotImplementedError(
                    "ember.load: legacy-format checkpoints load only to the CPU"
                )
            storages[key] = (storage, dtype)
        storage, dtype = storages[key]
        if view_metadata is not None:
            raise NotImplementedError(
                "ember.load: storage views of the pre-1.0 legacy format are not supported"
            )
        return TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)

    result = _Unpickler(stream, persistent_load, weights_only, **pickle_load_args).load()
    keys = small_pickle()
    for key in keys:
        storage, dtype = storages[key]
        (numel,) = struct.unpack("<q", stream.read(8))
        if numel * dtype.itemsize != storage.nbytes():
            raise RuntimeError(
                f"storage {key}: the file holds {numel} elements, the checkpoint names {len(storage) // dtype.itemsize}"
            )
        if numel:
            target = memoryview(storage._bytes.numpy())
            got = 0
            while got < len(target):
                n = stream.readinto(target[got:])
                if not n:
                    raise RuntimeError("unexpected end of file in a legacy checkpoint")
                got += n
            if swap and dtype.itemsize > 1:
                _byteswap(storage, dtype)
    return result


def _no_persistent_ids(pid):
    raise pickle.UnpicklingError("unsupported persistent id encountered")


def _byteswap(storage, dtype):
    arr = storage._bytes.numpy()
    import numpy as np

    view = arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize])
    view.byteswap(inplace=True)


def get_unsafe_globals_in_checkpoint(f):
    """The globals in a checkpoint that a weights_only load would reject."""
    import pickletools

    def names(stream):
        reader = _ZipReader(stream)
        out = set()
        for op, arg, _ in pickletools.genops(reader.get_record("data.pkl")):
            if op.name == "GLOBAL":
                out.add(arg.replace(" ", "."))
        return out

    if _is_path(f):
        with open(f, "rb") as stream:
            found = names(stream)
    else:
        found = names(f)
    allowed = set(_safe_table()) | set(_user_allowed_globals())
    return sorted(found - allowed)
