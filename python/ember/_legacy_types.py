"""PyTorch's legacy tensor types and typed storages: ember.FloatTensor(2, 3),
ember.LongTensor([1, 2]), isinstance(x, ember.FloatTensor), x.new(...),
set_default_tensor_type, ember.FloatStorage & co."""

from __future__ import annotations

import builtins
import warnings

from ember import _C
from ember._out_forms import _CPP_NAMES  # how PyTorch names the dtypes in its mismatch error

# legacy name prefix -> dtype name
_NAMES = {
    "Byte": "uint8",
    "Char": "int8",
    "Short": "int16",
    "Int": "int32",
    "Long": "int64",
    "Half": "float16",
    "Float": "float32",
    "Double": "float64",
    "Bool": "bool",
    "BFloat16": "bfloat16",
}


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def _options_text(dtype, device):
    return (
        f"TensorOptions(dtype={_CPP_NAMES[_dtype_name(dtype)]}, device={device}, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))"
    )


def legacy_new(dtype, device, args, kwargs):
    """What ember.FloatTensor(*args) and x.new(*args) build: an uninitialised
    tensor of a size, a tensor of data, or an alias of a tensor of the same type."""
    import ember

    extra = set(kwargs) - {"device"}
    if extra:
        raise TypeError(f"new() got an unexpected keyword argument '{sorted(extra)[0]}'")
    if kwargs.get("device") is not None:
        device = ember.device(kwargs["device"])
    if not args:
        return ember.empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], ember.Size):
        return ember.empty(args[0], dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], _C.TensorBase):
        other = args[0]
        if other.dtype != dtype or other.device != device:
            raise TypeError(
                f"expected {_options_text(dtype, device)} (got {_options_text(other.dtype, other.device)})"
            )
        return other.view(other.shape)
    if all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args):
        for a in args:
            if a < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {a}: {list(args)}")
        return ember.empty(args, dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(data, (builtins.float, builtins.bool, builtins.complex)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return ember.tensor(data, dtype=dtype, device=device)
    if isinstance(args[0], builtins.int):
        for i, a in enumerate(args):
            if not isinstance(a, builtins.int):
                raise TypeError(
                    f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                    f'"type must be tuple of ints,but got {type(a).__name__}"'
                )
    names = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({names})")


class tensortype(type):  # noqa: N801  PyTorch's name for the metaclass of the legacy types
    """The metaclass of ember.FloatTensor & co.: calling one builds a tensor of
    its dtype, isinstance checks a tensor's dtype (and that it is on the CPU)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.TensorBase) and obj.device.type == "cpu" and obj.dtype == cls.dtype

    def __call__(cls, *args, **kwargs):
        import ember

        return legacy_new(cls.dtype, ember.device("cpu"), args, kwargs)

    @property
    def dtype(cls):
        import ember

        return getattr(ember, cls._dtype_name)

    @property
    def is_cuda(cls):
        return False

    @property
    def is_sparse(cls):
        return False

    @property
    def layout(cls):
        import ember

        return ember.strided


def _make_tensor_type(prefix, dtype_name):
    cls = tensortype(prefix + "Tensor", (), {"_dtype_name": dtype_name, "__module__": "torch"})
    return cls


TENSOR_TYPES = {prefix + "Tensor": _make_tensor_type(prefix, name) for prefix, name in _NAMES.items()}


def tensor_type_of(dtype):
    """The legacy type class of a dtype (ember.FloatTensor for float32)."""
    name = _dtype_name(dtype)
    for cls in TENSOR_TYPES.values():
        if cls._dtype_name == name:
            return cls
    raise TypeError(f"no legacy tensor type for {dtype}")


def _resolve_type_name(t):
    import ember

    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module not in ("torch", "ember"):
            raise ValueError(f"invalid type: '{t}'")
        if not hasattr(ember, name):
            raise AttributeError(f"module 'torch' has no attribute '{name}'")
        t = getattr(ember, name)
    return t


def set_default_tensor_type(t):
    """Deprecated: sets the default floating dtype from a legacy type or its name."""
    import ember

    t = _resolve_type_name(t)
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use torch.set_default_dtype() "
        "and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    ember.set_default_dtype(t.dtype)
    ember.Storage = STORAGE_TYPES[t.__name__.replace("Tensor", "Storage")]


# ---- typed storages ---------------------------------------------------------------------


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, obj):
        from ember.storage import TypedStorage

        if cls.__dict__.get("_dtype_name") is None:
            return super().__instancecheck__(obj)
        return isinstance(obj, TypedStorage) and _dtype_name(obj.dtype) == cls._dtype_name

    def __call__(cls, *args, **kwargs):
        from ember.storage import TypedStorage, _warn_typed_storage

        if kwargs.pop("dtype", None) is not None:
            raise RuntimeError("__new__ received an unexpected kwarg 'dtype'")
        _warn_typed_storage(stacklevel=2)
        return TypedStorage(*args, dtype=cls.dtype, _internal=True, **kwargs)

    @property
    def dtype(cls):
        import ember

        return getattr(ember, cls._dtype_name)


def _make_storage_types():
    from ember.storage import TypedStorage

    class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
        _dtype_name = None

    out = {}
    # Complex dtypes have storage classes but no legacy tensor types.
    for prefix, name in {**_NAMES, "ComplexFloat": "complex64", "ComplexDouble": "complex128"}.items():
        out[prefix + "Storage"] = _LegacyStorageMeta(
            prefix + "Storage", (_LegacyStorage,), {"_dtype_name": name, "__module__": "torch", "__slots__": ()}
        )
    return out


STORAGE_TYPES = {}


def install(namespace, tensor_class):
    """Adds the legacy types and storages to the package and Tensor.new/storage/storage_type."""
    STORAGE_TYPES.update(_make_storage_types())
    namespace.update(TENSOR_TYPES)
    namespace.update(STORAGE_TYPES)
    namespace["Storage"] = STORAGE_TYPES["FloatStorage"]
    namespace["set_default_tensor_type"] = set_default_tensor_type

    def new(self, *args, **kwargs):
        return legacy_new(self.dtype, self.device, args, kwargs)

    def storage(self):
        from ember.storage import TypedStorage, _warn_typed_storage

        _warn_typed_storage(stacklevel=3)
        return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)

    def storage_type(self):
        name = _dtype_name(self.dtype)
        for cls in STORAGE_TYPES.values():
            if cls._dtype_name == name:
                return cls
        raise TypeError(f"no legacy storage type for {self.dtype}")

    tensor_class.new = new
    tensor_class.storage = storage
    tensor_class.storage_type = storage_type
