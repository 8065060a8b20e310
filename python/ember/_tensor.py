"""ember.Tensor: the Python face of the C++ tensor (methods beyond _C.TensorBase)."""

from __future__ import annotations

from numbers import Number

from ember import _C
from ember import _numpy as _np


class Tensor(_C.TensorBase):
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor w.r.t. the graph leaves."""
        from ember import autograd

        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def __repr__(self, *, tensor_contents=None):
        from ember import _tensor_str

        return _tensor_str._str(self, tensor_contents=tensor_contents)

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        from ember import _utils

        return _utils._reduce_tensor(self)

    # ---- NumPy interop (memory is shared, see src/ember/python/PyNumpy.cpp) ----
    __array_priority__ = 1000  # NumPy defers binary operators to Tensor

    def numpy(self, *, force=False):
        """The tensor as an ndarray sharing its memory. force=True detaches and
        copies to the CPU first when needed."""
        if force:
            t = self.detach()
            if t.device.type != "cpu":
                t = t.to("cpu")
            return _C._to_numpy(t)
        return _C._to_numpy(self)

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=bool(copy))
        elif copy:
            arr = arr.copy()
        return arr

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # numpy.sin(tensor) -> tensor
        if array.dtype == bool:
            array = array.astype("uint8")
        return _C.from_numpy(array)

    # ---- storage ----
    def untyped_storage(self):
        from ember.storage import UntypedStorage

        return UntypedStorage._wrap(_C._storage_bytes(self))

    def share_memory_(self):
        """Moves the storage into shared memory (a no-op if it is there already)."""
        _C._share_memory_(self)
        return self

    def is_shared(self):
        return _C._is_shared(self)

    def where(self, condition, y):
        """self where condition is true, else y (ember.where with self second)."""
        from ember import _C as C

        return C._VariableFunctions.where(condition, self, y)

    @property
    def T(self):  # noqa: N802
        return self.permute(*reversed(range(self.dim())))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """See ember.norm."""
        import ember

        return ember.norm(self, p, dim, keepdim, dtype=dtype)

    def type(self, dtype=None):
        if dtype is None:
            return "torch." + _LEGACY[self.dtype]
        raise NotImplementedError("Tensor.type(dtype) is not supported yet")


_LEGACY = {}


def _fill_legacy():
    import ember

    names = {
        ember.uint8: "ByteTensor",
        ember.int8: "CharTensor",
        ember.int16: "ShortTensor",
        ember.int32: "IntTensor",
        ember.int64: "LongTensor",
        ember.float16: "HalfTensor",
        ember.float32: "FloatTensor",
        ember.float64: "DoubleTensor",
        ember.bool: "BoolTensor",
        ember.bfloat16: "BFloat16Tensor",
    }
    _LEGACY.update(names)


def _promote(a, b):
    """PyTorch's promote_types for the dtypes tensor() infers (None: nothing seen)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    ka, kb = _category(a), _category(b)
    if ka != kb:
        return a if ka > kb else b
    sa, sb = a.itemsize, b.itemsize
    if ka == 2:
        if sa == sb:  # float16 with bfloat16
            import ember

            return ember.float32
        return a if sa > sb else b
    if sa == sb == 1:  # uint8 with int8
        import ember

        return ember.int16
    return a if sa > sb else b


def _category(dtype):
    if dtype.is_floating_point:
        return 2
    import ember

    return 0 if dtype == ember.bool else 1


def _numpy_scalar_dtype(value):
    import numpy as np

    return _C.from_numpy(np.asarray(value)).dtype


def _infer(data, shape, flat, depth=0):
    """Walks nested sequences: records the shape, flattens into Python numbers,
    and returns the inferred dtype (None when no value was seen)."""
    import ember

    if isinstance(data, Tensor):
        if data.dim() != 0:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if len(shape) != depth:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {type(data).__name__})")
        flat.append(data.item())
        return data.dtype
    if isinstance(data, Number):
        if len(shape) != depth:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {type(data).__name__})")
        if _np.is_numpy_scalar(data):  # NumPy scalars keep their dtype
            flat.append(data.item())
            return _numpy_scalar_dtype(data)
        flat.append(data)
        if isinstance(data, bool):
            return ember.bool
        if isinstance(data, int):
            return ember.int64
        if isinstance(data, float):
            return ember.get_default_dtype()
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if _np.is_numpy_scalar(data):  # numpy.bool_ is no Number
        if len(shape) != depth:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {type(data).__name__})")
        flat.append(data.item())
        return _numpy_scalar_dtype(data)
    if isinstance(data, (str, bytes)) or not hasattr(data, "__len__"):
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if _np.is_ndarray(data):
        if data.ndim == 0:
            return _infer(data[()], shape, flat, depth)
        t = _C.from_numpy(_np.numpy_compatible(data))
        for i, n in enumerate(data.shape):
            if len(shape) == depth + i:
                shape.append(n)
            elif shape[depth + i] != n:
                raise ValueError(f"expected sequence of length {shape[depth + i]} at dim {depth + i} (got {n})")
        flat.extend(data.ravel().tolist())
        return t.dtype
    n = len(data)
    if len(shape) == depth:
        shape.append(n)
    elif shape[depth] != n:
        raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {n})")
    dtype = None
    for item in data:
        dtype = _promote(dtype, _infer(item, shape, flat, depth + 1))
    return dtype


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """Builds a tensor from nested lists/tuples of numbers, NumPy arrays or
    scalars, inferring the dtype as PyTorch does (bool < int64 < default float;
    NumPy values keep their dtype). Always copies."""
    import ember

    if not _LEGACY:
        _fill_legacy()
    if isinstance(data, Tensor):
        out = data.detach().clone()
        if dtype is not None:
            out = out.to(dtype)
    elif _np.is_ndarray(data) or _np.is_numpy_scalar(data):
        out = _np.from_ndarray(data, dtype, copy=True)
    else:
        if hasattr(data, "__array__") and not isinstance(data, (list, tuple)):
            data = data.__array__()
            return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        shape: list[int] = []
        flat: list = []
        inferred = _infer(data, shape, flat)
        if dtype is None:
            dtype = inferred if inferred is not None else ember.get_default_dtype()
        out = _C._tensor_from_flat(flat, tuple(shape), dtype)
    if device is not None:
        out = out.to(ember.device(device))
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data, dtype=None, device=None):
    """data as a tensor, sharing memory where possible: a Tensor of the wanted
    dtype and device is returned as is; a NumPy array shares its memory unless
    a conversion is needed."""
    import ember

    if isinstance(data, Tensor):
        out = data
        if dtype is not None and out.dtype != dtype:
            out = out.to(dtype)
        if device is not None and out.device != ember.device(device):
            out = out.to(ember.device(device))
        return out
    if _np.is_ndarray(data):
        out = _np.from_ndarray(data, dtype, copy=False)
        if device is not None:
            out = out.to(ember.device(device))
        return out
    return tensor(data, dtype=dtype, device=device)
