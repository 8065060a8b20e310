"""Tensor methods that convert or create from a tensor (x.float(), x.type(),
x.new_zeros(...)), memory formats, and the alias names PyTorch gives to
existing operators (torch.multiply is torch.mul)."""

from __future__ import annotations

import builtins
import types

from ember import _C, _argcheck
from ember._warnings import user_stacklevel

# The memory formats are C objects (ember._C), so the C++ bindings read them directly.
memory_format = _C.memory_format
preserve_format = _C.preserve_format
contiguous_format = _C.contiguous_format
channels_last = _C.channels_last
channels_last_3d = _C.channels_last_3d


def _dtype_by_legacy_name():
    import ember

    names = {
        "ByteTensor": ember.uint8,
        "CharTensor": ember.int8,
        "ShortTensor": ember.int16,
        "IntTensor": ember.int32,
        "LongTensor": ember.int64,
        "HalfTensor": ember.float16,
        "FloatTensor": ember.float32,
        "DoubleTensor": ember.float64,
        "BoolTensor": ember.bool,
        "BFloat16Tensor": ember.bfloat16,
    }
    return {prefix + k: v for k, v in names.items() for prefix in ("torch.", "ember.")}


class ConversionMethods:
    """Mixed into ember.Tensor."""

    def type(self, dtype=None, non_blocking=False, **kwargs):
        from ember._tensor import _legacy_name

        if dtype is None:
            device = "" if self.device.type == "cpu" else self.device.type + "."
            return "torch." + device + _legacy_name(self.dtype)
        if isinstance(dtype, str):
            if ".cuda." in dtype:
                raise RuntimeError("ember was built without the CUDA tensor types requested by " + repr(dtype))
            table = _dtype_by_legacy_name()
            if dtype not in table:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = table[dtype]
        elif isinstance(dtype, builtins.type) and dtype.__name__.endswith("Tensor"):
            dtype = _dtype_by_legacy_name()["torch." + dtype.__name__]
        return self.to(dtype, non_blocking=non_blocking)

    # ---- CUDA and pinned memory ----

    def cuda(self, device=None, non_blocking=False, memory_format=preserve_format):
        import ember

        ember.cuda._lazy_init()
        if device is None:
            device = ember.device("cuda", ember.cuda.current_device())
        elif isinstance(device, int):
            device = ember.device("cuda", device)
        else:
            device = ember.device(device)
            if device.type != "cuda":
                raise RuntimeError("Invalid device, must be cuda device")
            if device.index is None:
                device = ember.device("cuda", ember.cuda.current_device())
        if self.device == device and memory_format is preserve_format:
            return self
        return self.to(device, non_blocking=non_blocking, memory_format=memory_format)

    def is_pinned(self, device=None) -> bool:
        import ember

        if self.device.type != "cpu" or not ember.cuda.is_available():
            return False  # no driver or device: nothing is pinned, as PyTorch reports
        return _C._cuda_isPinned(self)

    def pin_memory(self, device=None):
        import ember

        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        ember.cuda._lazy_init()
        if self.is_pinned():
            return self
        return _C._cuda_pinMemory(self)

    def record_stream(self, stream) -> None:
        if self.device.type != "cuda":
            raise RuntimeError(f"record_stream expects a CUDA tensor, got one on {self.device}")
        _C._cuda_recordStream(self, stream.cuda_stream)

    # ---- new tensors with this tensor's dtype and device by default ----
    def _new_options(self, dtype, device):
        return (self.dtype if dtype is None else dtype), (self.device if device is None else device)

    def new_tensor(self, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        # PyTorch's binding: new_tensor(data, *, dtype, device, requires_grad), nothing else.
        import ember

        if "data" in kwargs:
            args = (*args, kwargs.pop("data"))
        for name in kwargs:
            raise TypeError(f"new_tensor() got an unexpected keyword argument '{name}'")
        if len(args) != 1:
            if not args:
                raise TypeError('new_tensor() missing 1 required positional arguments: "data"')
            raise TypeError(f"new_tensor() takes 1 positional argument but {len(args)} were given")
        data = args[0]

        dtype, device = self._new_options(dtype, device)
        if isinstance(data, _C.TensorBase):
            import warnings

            warnings.warn(
                "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
            return data.detach().to(dtype=dtype, device=device, copy=True).requires_grad_(requires_grad)
        return ember.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **_):
        import ember

        dtype, device = self._new_options(dtype, device)
        return ember.empty(
            *size, dtype=dtype, device=device, requires_grad=requires_grad, layout=layout, pin_memory=pin_memory
        )

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **_):
        import ember

        dtype, device = self._new_options(dtype, device)
        return ember.zeros(
            *size, dtype=dtype, device=device, requires_grad=requires_grad, layout=layout, pin_memory=pin_memory
        )

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **_):
        import ember

        dtype, device = self._new_options(dtype, device)
        return ember.ones(
            *size, dtype=dtype, device=device, requires_grad=requires_grad, layout=layout, pin_memory=pin_memory
        )

    def new_full(
        self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **_
    ):
        import ember

        dtype, device = self._new_options(dtype, device)
        return ember.full(
            size,
            fill_value,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
            layout=layout,
            pin_memory=pin_memory,
        )

    # ---- facts about the tensor ----
    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def nbytes(self):
        return self.numel() * self.element_size()

    @property
    def itemsize(self):
        return self.element_size()

    # ---- complex numbers (docs/decisions/0028-complex-dtypes.md, 0029-conj-bit.md) ----
    @property
    def real(self):
        return _C._VariableFunctions.real(self)

    @real.setter
    def real(self, value):
        self.real.copy_(value)

    @property
    def imag(self):
        return _C._VariableFunctions.imag(self)

    @imag.setter
    def imag(self, value):
        self.imag.copy_(value)

    def __complex__(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return builtins.complex(self.item())

    def is_nonzero(self):
        n = self.numel()
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self.item())

    def is_same_size(self, other):
        _argcheck.tensor("is_same_size", "other", 1, other)
        return tuple(self.shape) == tuple(other.shape)

    def __index__(self):
        if self.is_floating_point() or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    def ravel(self):
        return self.reshape(-1)


# PyTorch's alternative names: alias -> operator (functions and methods).
ALIASES = {
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
    "multiply": "mul",
    "subtract": "sub",
    "divide": "div",
    "negative": "neg",
    "absolute": "abs",
    "fix": "trunc",
    "concat": "cat",
    "concatenate": "cat",
    "arctan2": "atan2",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
}


# In-place operators PyTorch also offers as functions (torch.exp_(x) is x.exp_()).
INPLACE_FUNCTIONS = (
    "abs_ acos_ acosh_ addmv_ asin_ asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ conj_physical_ cos_ cosh_ "
    "deg2rad_ "
    "detach_ erf_ erfc_ exp2_ exp_ expm1_ floor_ frac_ gcd_ i0_ index_put_ lcm_ ldexp_ log10_ log1p_ log2_ log_ "
    "logit_ nan_to_num_ neg_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ tan_ tanh_ "
    "trunc_ xlogy_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ negative_ fix_"
).split()


def install_aliases(namespace, tensor_class):
    """Adds the in-place functions and every alias whose operator exists, to
    the module namespace and to the Tensor class (with its in-place form)."""
    for name in INPLACE_FUNCTIONS:
        method = getattr(_C.TensorBase, name, None)
        if method is not None and name not in namespace:
            namespace[name] = method
    for alias, name in ALIASES.items():
        for suffix in ("", "_"):
            if hasattr(tensor_class, name + suffix) and not hasattr(tensor_class, alias + suffix):
                method = getattr(tensor_class, name + suffix)
                setattr(tensor_class, alias + suffix, _renamed(method, alias + suffix, tensor_class))
        for suffix in ("", "_"):
            if name + suffix in namespace and alias + suffix not in namespace:
                if suffix == "" or alias + suffix in INPLACE_FUNCTIONS:
                    fn = namespace[name + suffix]
                    # torch.arctan_ is Tensor.arctan_, as torch.atan_ is Tensor.atan_.
                    if isinstance(fn, types.MethodDescriptorType):
                        namespace[alias + suffix] = getattr(tensor_class, alias + suffix)
                    else:
                        namespace[alias + suffix] = _renamed(fn, alias + suffix, tensor_class)


def clip_with_out(clip, clamp):
    """torch.clip: clamp's alias, out= included (PyTorch binds clip.out to clamp's kernel)."""

    def clip_out(*args, **kwargs):
        if "out" not in kwargs:
            return clip(*args, **kwargs)
        try:
            return clamp(*args, **kwargs)
        except TypeError as e:
            if str(e).startswith("clamp()"):
                raise TypeError("clip()" + str(e)[len("clamp()") :]) from None
            raise

    clip_out.__name__ = clip_out.__qualname__ = "clip"
    return clip_out


def _renamed(fn, name, owner):
    """`fn` under its alias's own name (a builtin; a method is held by `owner`)
    or `fn` itself."""
    if isinstance(fn, (types.BuiltinFunctionType, types.MethodDescriptorType)):
        return _C._renamed_builtin(fn, name, owner)
    return fn
