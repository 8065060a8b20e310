"""The legacy typed tensors (ember.cuda.FloatTensor, ...) and storages
(ember.cuda.FloatStorage, ...). Without CUDA none can be created, as in
PyTorch's CPU build; a CUDA build initialises CUDA first."""

from __future__ import annotations

import warnings

import ember
from ember.storage import TypedStorage

_TENSOR_TYPES = {
    "BFloat16Tensor": "bfloat16", "BoolTensor": "bool", "ByteTensor": "uint8", "CharTensor": "int8",
    "DoubleTensor": "float64", "FloatTensor": "float32", "HalfTensor": "float16", "IntTensor": "int32",
    "LongTensor": "int64", "ShortTensor": "int16",
}  # fmt: skip
_STORAGE_TYPES = {
    "BFloat16Storage": "bfloat16", "BoolStorage": "bool", "ByteStorage": "uint8", "CharStorage": "int8",
    "ComplexDoubleStorage": "complex128", "ComplexFloatStorage": "complex64", "DoubleStorage": "float64",
    "FloatStorage": "float32", "HalfStorage": "float16", "IntStorage": "int32", "LongStorage": "int64",
    "ShortStorage": "int16",
}  # fmt: skip

__all__ = sorted(_TENSOR_TYPES) + sorted(_STORAGE_TYPES)


class _LegacyTensorType(type):
    """The type of a legacy tensor class: it names a dtype and a device, and
    a tensor is an instance when it has both."""

    @property
    def dtype(cls):
        return getattr(ember, cls._dtype_name)

    @property
    def layout(cls):
        return ember.sparse_coo if cls.is_sparse else ember.strided

    def __instancecheck__(cls, obj):
        return (
            isinstance(obj, ember.Tensor)
            and obj.is_cuda
            and bool(obj.is_sparse) == cls.is_sparse
            and obj.dtype == getattr(ember, cls._dtype_name)
        )

    def __call__(cls, *args, **kwargs):
        qualified = f"torch.{cls.__module__.split('.', 1)[1]}.{cls.__name__}"
        if not ember.cuda._utils._is_compiled():
            raise TypeError(f"type {qualified} not available. Torch not compiled with CUDA enabled.")
        ember.cuda._lazy_init()
        raise RuntimeError(f"ember's CUDA backend cannot create {qualified} yet")


def _tensor_type(name: str, dtype_name: str, module: str, sparse: bool) -> type:
    attributes = {"_dtype_name": dtype_name, "is_cuda": True, "is_sparse": sparse, "__module__": module}
    return _LegacyTensorType(name, (), attributes)


_warned_typed_storage = False


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    global _warned_typed_storage
    if _warned_typed_storage:
        return
    _warned_typed_storage = True
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
        "storage class. This should only matter to you if you are using storages directly.  To access "
        "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


def _reset_warn_typed_storage_removal() -> None:
    global _warned_typed_storage
    _warned_typed_storage = False


class _LegacyStorageType(type):
    @property
    def dtype(cls):
        _warn_typed_storage_removal(stacklevel=3)
        return getattr(ember, cls._dtype_name)


class _CudaLegacyStorage(TypedStorage, metaclass=_LegacyStorageType):
    __slots__ = ()
    is_cuda = True
    is_sparse = False

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal(stacklevel=3)
        ember.cuda._lazy_init()
        raise RuntimeError(f"ember's CUDA backend cannot create {cls.__name__} yet")

    @classmethod
    def from_buffer(cls, *args, **kwargs):
        _warn_typed_storage_removal(stacklevel=3)
        raise RuntimeError("from_buffer: Not available for CUDA storage")

    @classmethod
    def _new_with_weak_ptr(cls, *args, **kwargs):
        raise RuntimeError("_new_with_weak_ptr: Not available for CUDA storage")

    @classmethod
    def _new_shared_filename(cls, manager, obj, size, *, device=None, dtype=None):
        raise RuntimeError("_new_shared_filename: Not available for CUDA storage")


for _name, _dtype in _TENSOR_TYPES.items():
    globals()[_name] = _tensor_type(_name, _dtype, "ember.cuda", sparse=False)
for _name, _dtype in _STORAGE_TYPES.items():
    globals()[_name] = _LegacyStorageType(
        _name, (_CudaLegacyStorage,), {"__slots__": (), "_dtype_name": _dtype, "__module__": "ember.cuda"}
    )
del _name, _dtype
