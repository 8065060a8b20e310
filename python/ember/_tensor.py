"""ember.Tensor: the Python face of the C++ tensor (methods beyond _C.TensorBase)."""

from __future__ import annotations

import functools

from ember import _C
from ember import _numpy as _np
from ember._conversions import ConversionMethods
from ember._inplace_compare import InplaceComparisonMethods
from ember._inplace_views import InplaceViewMethods
from ember._warnings import user_stacklevel


class Tensor(ConversionMethods, InplaceViewMethods, InplaceComparisonMethods, _C.TensorBase):
    __module__ = "ember"  # printed as <class 'ember.Tensor'>, as PyTorch prints torch.Tensor

    def __new__(cls, *args, **kwargs):
        """The legacy constructor: Tensor(2, 3) is uninitialised, Tensor([1, 2])
        holds data, both of the default dtype."""
        from ember._legacy_types import legacy_new

        t = legacy_new(_C.get_default_dtype(), _C._get_default_device(), args, kwargs)
        return t if cls is Tensor else Tensor._make_subclass(cls, t, False)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """What a subclass gets by default: func runs as on plain tensors and
        the tensors it returns come back as instances of the subclass."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        from ember.overrides import DisableTorchFunctionSubclass, get_default_nowrap_functions

        with DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in get_default_nowrap_functions():
                return ret
            return _convert(ret, cls)

    def __rdiv__(self, other):
        """other / self (the reflected division, by PyTorch's name for it)."""
        return _C.TensorBase.__rtruediv__(self, other)

    def unflatten(self, dim, sizes):
        """dim split into sizes (a tuple of ints, or of (name, size) pairs)."""
        # As PyTorch's method: sizes' truth value is tested before any type check.
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        return _C.TensorBase.unflatten(self, dim, sizes)

    def as_subclass(self, cls):
        """A `cls` instance sharing this tensor's data and place in the autograd graph."""
        return _C._as_subclass(self, cls)

    @property
    def layout(self):
        from ember._layout import strided

        return strided

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor w.r.t. the graph leaves."""
        from ember import autograd

        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """Runs hook(grad) when this tensor's gradient is computed; it may return a replacement."""
        from ember.utils.hooks import RemovableHandle

        handle = RemovableHandle()

        @functools.wraps(hook)  # errors about the hook name it, not this wrapper
        def call(grad):
            return hook(grad) if handle.active else None

        _C.TensorBase.register_hook(self, call)
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Runs hook(tensor) on a leaf after its .grad was accumulated."""
        from ember.utils.hooks import RemovableHandle

        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        handle = RemovableHandle()

        def call(tensor):
            if handle.active:
                result = hook(tensor)
                if result is not None:  # PyTorch's checks of what the hook returned
                    if not isinstance(result, _C.TensorBase):
                        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")

        _C.TensorBase._register_post_accumulate_grad_hook(self, call)
        return handle

    def __repr__(self, *, tensor_contents=None):
        from ember import _tensor_str

        return _tensor_str._str(self, tensor_contents=tensor_contents)

    def __format__(self, spec):
        if self.dim() == 0 and not self.is_meta:
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
            return _C._to_numpy(t.resolve_conj().resolve_neg())
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

    def storage(self):
        """The storage read as elements of this tensor's dtype (deprecated, as in PyTorch)."""
        from ember.storage import TypedStorage, _warn_typed_storage_removal

        _warn_typed_storage_removal()
        return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype)

    def share_memory_(self):
        """Moves the storage into shared memory for the current sharing strategy
        (a no-op if it is there already)."""
        from ember.multiprocessing import get_sharing_strategy

        if self.device.type == "cpu":
            if get_sharing_strategy() == "file_system":
                _C._share_filename_(self)
            else:
                _C._share_fd_(self)
        return self

    def is_shared(self):
        return _C._is_shared(self)

    def where(self, condition, y):
        """self where condition is true, else y (ember.where with self second)."""
        from ember import _C as C

        return C._VariableFunctions.where(condition, self, y)

    def polygamma(self, n):
        """ember.polygamma(n, self): the method takes n second."""
        return _C._VariableFunctions.polygamma(n, self)

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element):
        """`element in t`: whether any element of t equals it."""
        import numbers

        if not isinstance(element, (_C.TensorBase, numbers.Number)):
            raise RuntimeError(
                f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
            )
        return bool((element == self).any().item())

    @property
    def T(self):  # noqa: N802
        global _T_WARNED
        if self.dim() != 2 and not _T_WARNED:
            _T_WARNED = True
            import warnings

            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                UserWarning,
                stacklevel=3,  # the caller of the property (ember.overrides wraps its getter)
            )
        return self.permute(tuple(reversed(range(self.dim()))))

    @property
    def mT(self):  # noqa: N802
        if self.dim() == 0:
            _warn_0d("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.")
            return self
        if self.dim() < 2:
            raise RuntimeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
            )
        return self.transpose(-2, -1)

    @property
    def H(self):  # noqa: N802
        if self.dim() == 0:
            _warn_0d("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
            return self.conj()
        if self.dim() != 2:
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
                + (" For batches of matrices, consider using tensor.mH" if self.dim() > 2 else "")
            )
        # The conjugate transpose: a lazy conjugate of the transposed view.
        return self.transpose(-2, -1).conj()

    @property
    def mH(self):  # noqa: N802
        if self.dim() == 0:
            _warn_0d("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().")
            return self.conj()
        if self.dim() < 2:
            raise RuntimeError(
                f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
            )
        return self.transpose(-2, -1).conj()

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """See ember.norm."""
        import ember

        return ember.norm(self, p, dim, keepdim, dtype=dtype)


_LEGACY = {}


def _legacy_name(dtype):
    if not _LEGACY:
        _fill_legacy()
    return _LEGACY[dtype]


_T_WARNED = False


def _warn_0d(message):
    import warnings

    warnings.warn(message, UserWarning, stacklevel=3)


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


_NDARRAY_LIST_WARNED = []


def _from_data(data, dtype):
    """_C._tensor_from_data(data, dtype), with PyTorch's once-a-process warning when the
    sequence holds NumPy arrays (found along its first elements) with values to copy."""
    if not _NDARRAY_LIST_WARNED:
        first = data
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        if first is not data and _np.is_ndarray(first) and first.size:
            import warnings

            _NDARRAY_LIST_WARNED.append(True)
            warnings.warn(
                "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting the "
                "list to a single numpy.ndarray with numpy.array() before converting to a tensor. (Triggered "
                "internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
    return _C._tensor_from_data(data, dtype)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Builds a new tensor from data, always copying: nested lists or tuples of
    numbers, tensors and NumPy values (read in C++ with PyTorch's shape and
    dtype inference: Python floats give the default dtype, ints int64, bools
    bool, NumPy values and tensors keep theirs, mixed leaves promote), a
    NumPy array or scalar, or a tensor."""
    import ember

    if not _LEGACY:
        _fill_legacy()
    if isinstance(data, Tensor):
        import warnings

        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        out = data.detach().clone()
        if dtype is not None:
            out = out.to(dtype)
    elif _np.is_ndarray(data) or _np.is_numpy_scalar(data):
        out = _np.from_ndarray(data, dtype, copy=True)
    elif not isinstance(data, (list, tuple)) and hasattr(data, "__array__"):
        return tensor(data.__array__(), dtype=dtype, device=device, requires_grad=requires_grad)
    else:
        out = _from_data(data, dtype)
    if device is None and not isinstance(data, Tensor):
        device = _default_device_if_set()
    if device is not None:
        out = out.to(ember.device(device))
    if requires_grad:
        if not (out.dtype.is_floating_point or out.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
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
    if _np.is_numpy_scalar(data):
        out = _np.from_ndarray(data, dtype, copy=True)
    else:
        out = _from_data(data, dtype)
    device = device if device is not None else _default_device_if_set()
    if device is not None:
        out = out.to(ember.device(device))
    return out


def _convert(ret, cls):
    # Tensors in a result come back as cls (Tensor.__torch_function__).
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        return type(ret)(_convert(r, cls) for r in ret)
    return ret


def _default_device_if_set():
    """ember.set_default_device's device, or None for the CPU."""
    d = _C._get_default_device()
    return None if d.type == "cpu" else d


# Devices and layouts without a backend here: a tensor is never on or in them.
for _name in ("is_mps", "is_xpu", "is_xla", "is_ipu", "is_maia", "is_mtia", "is_mkldnn", "is_nested", "is_quantized",
              "is_vulkan"):  # fmt: skip
    setattr(Tensor, _name, property(lambda self: False, doc=f"False: {_name[3:]} tensors do not exist here."))
del _name


def _copy_to(kind):
    def to_device(self, device=None, non_blocking=False, memory_format=None):
        import ember

        index = device if isinstance(device, int) else None
        target = ember.device(kind, index) if device is None or isinstance(device, int) else device
        kwargs = {} if memory_format is None else {"memory_format": memory_format}
        return self.to(target, non_blocking=non_blocking, **kwargs)

    to_device.__name__ = kind
    to_device.__doc__ = f"A copy on the {kind} device (which this build has no backend for: it raises)."
    return to_device


for _name in ("xpu", "mtia", "ipu"):
    setattr(Tensor, _name, _copy_to(_name))
del _name
