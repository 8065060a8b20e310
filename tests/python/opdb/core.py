"""The row type of the operator database, sample inputs, and the bridge that
turns a torch sample into the same Ember tensors (values, strides, offset)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import torch

import ember


def cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((line for line in f if line.startswith("flags")), "flags:").split(":")[1].split())
    except OSError:
        return set()

ALL_DTYPES = (
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
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
# Dtypes of limited support (decision 0029): rows name them where PyTorch's CPU kernels take them.
WIDE_UINTS = ("uint16", "uint32", "uint64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
INTS_AND_BOOL = ("bool",) + INTS
ALL_BUT_BOOL = INTS + FLOATS
# Devices a row may name; "meta" has shapes, dtypes and strides but no data.
DEVICE_NAMES = ("cpu", "meta", "cuda")


class Tol(dict):
    """Tolerances per input dtype name, (rtol, atol), with the reason."""

    def __init__(self, values, reason):
        super().__init__(values)
        self.reason = reason


_EPS = {
    "float16": 2.0**-10,
    "bfloat16": 2.0**-7,
    "float32": 2.0**-23,
    "float64": 2.0**-52,
    "complex64": 2.0**-23,
    "complex128": 2.0**-52,
}


def ulps(n, reason):
    """n units in the last place of the result (integer inputs give float32)."""
    return Tol({d: (n * _EPS.get(d, _EPS["float32"]), 0.0) for d in ALL_DTYPES + COMPLEX}, reason)


# Ember's vector math is its own; PyTorch's CPU build uses SLEEF and libm.
# Both are faithful, so results may sit on the two sides of a rounding boundary.
ULP = ulps(1, "own vector math vs PyTorch's SLEEF/libm: up to 1 ulp apart")
ULP2 = ulps(2, "composed of exp/log1p/tanh, each up to 1 ulp from PyTorch's")
# max(a, b) + log1p(e^-|a - b|) cancels where the result is near 0: each side's
# 1-ulp differences are ulps of the operands (about 1), not of the result.
LOG_ADD_EXP = Tol(
    {d: (2 * _EPS.get(d, _EPS["float32"]), 2 * _EPS.get(d, _EPS["float32"])) for d in ALL_DTYPES},
    "max + log1p(e^-|a-b|) cancels near 0: 2 ulps of the result or of 1",
)


@dataclasses.dataclass
class SampleInput:
    """One call: positional and keyword arguments as torch objects (the
    Ember ones are derived from them). grad=False keeps a sample (edge values,
    integer arguments) out of the gradient tests."""

    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    grad: bool = True
    name: str = ""


@dataclasses.dataclass
class OpInfo:
    """One operator row. `name` is the operator's name in ops.yaml; `variant`
    tells several rows of one operator apart. `call` is a dotted path inside
    the library module ("nn.functional.gelu"), ".name" for a Tensor method, or
    a function (lib, *args, **kwargs); None finds the name as PyTorch places it."""

    name: str
    family: str
    samples: Callable[[torch.dtype], list]
    dtypes: Any = FLOATS  # tuple for every device, or {device: tuple}
    variant: str = ""
    call: Any = None
    method: bool = False  # x.name(...) exists and is checked
    supports_out: bool = False
    supports_inplace: bool = False
    supports_grad: bool = False
    supports_gradgrad: bool | None = None  # None: as supports_grad (PyTorch's OpInfo default)
    supports_meta: bool = False
    check_strides: bool = False
    compare_values: bool = True  # False for outputs whose values are unspecified (empty)
    tol: dict = dataclasses.field(default_factory=dict)  # dtype name -> (rtol, atol)
    tol_reason: str = ""
    error_inputs: Callable[[], list] | None = None
    grad_inputs: Callable[[], list] | None = None  # float64 samples for the gradient tests
    no_grad_args: tuple = ()  # positions of float arguments that must not require grad (running stats)
    mutates_input: bool = False  # writes into its first argument: the gradient tests pass a copy
    gradgrad_tol: tuple = ()  # (rtol, atol) of the second derivatives where the formula differs in form
    xfail: dict = dataclasses.field(default_factory=dict)  # "test" or "test/dtype" -> reason

    def __post_init__(self):
        if self.supports_gradgrad is None:
            self.supports_gradgrad = self.supports_grad
        if not self.tol_reason:
            self.tol_reason = getattr(self.tol, "reason", "")
        assert not self.tol or self.tol_reason, f"{self.name}: a tolerance needs its reason"

    @property
    def id(self):
        return self.name + (f".{self.variant}" if self.variant else "")

    def dtypes_on(self, device):
        if isinstance(self.dtypes, dict):
            if device in self.dtypes:
                return tuple(self.dtypes[device])
            return tuple(self.dtypes["cpu"])
        return tuple(self.dtypes)

    def resolve(self, lib):
        """The callable of this operator in `lib` (ember or torch)."""
        if callable(self.call):
            return lambda *a, **k: self.call(lib, *a, **k)
        if isinstance(self.call, str):
            if self.call.startswith("."):
                meth = self.call[1:]
                return lambda x, *a, **k: getattr(x, meth)(*a, **k)
            obj = lib
            for part in self.call.split("."):
                obj = getattr(obj, part)
            return obj
        return find_callable(lib, self.name)

    def grad_callable(self, lib):
        """The callable the gradient tests differentiate: an operator that
        writes into its first argument gets a copy of it (a leaf that requires
        grad cannot be modified in place), as PyTorch's OpInfo tests do."""
        fn = self.resolve(lib)
        if not self.mutates_input:
            return fn
        return lambda x, *a, **k: fn(x.clone(), *a, **k)

    def method_callable(self, inplace=False):
        name = self.name + ("_" if inplace else "")
        return lambda x, *a, **k: getattr(x, name)(*a, **k)


def find_callable(lib, name):
    """Where PyTorch puts an operator: linalg, special, the top-level
    namespace, nn.functional, else only the Tensor method."""
    places = []
    if name.startswith("linalg_"):
        places.append((lib.linalg, name.removeprefix("linalg_")))
    if name.startswith("special_"):
        places.append((lib.special, name.removeprefix("special_")))
    places += [(lib, name), (lib.nn.functional, name)]
    for where, attr in places:
        if hasattr(where, attr):
            return getattr(where, attr)
    return lambda x, *a, **k: getattr(x, name)(*a, **k)


# ---- tensors -------------------------------------------------------------------


def torch_dtype(name):
    return getattr(torch, name)


def dtype_name(dtype):
    return str(dtype).split(".")[-1]


def make(shape, dtype, low=-3.0, high=3.0, seed=0, noncontig=False, values=None):
    """A small deterministic torch tensor; noncontig gives the same shape
    laid out with every other element skipped."""
    if isinstance(dtype, str):
        dtype = torch_dtype(dtype)
    gen = torch.Generator().manual_seed(seed)
    full = tuple(shape[:-1]) + (shape[-1] * 2,) if noncontig and shape else tuple(shape)
    if values is not None:
        t = torch.tensor(values, dtype=torch.float64).reshape(full)
    elif dtype == torch.bool:
        t = torch.rand(full, generator=gen, dtype=torch.float64) > 0.5
    elif dtype.is_floating_point:
        t = torch.rand(full, generator=gen, dtype=torch.float64) * (high - low) + low
    elif dtype.is_complex:
        parts = torch.rand(full + (2,), generator=gen, dtype=torch.float64) * (high - low) + low
        t = torch.view_as_complex(parts)
    else:
        lo = max(math.ceil(low), 0) if dtype == torch.uint8 else math.ceil(low)
        hi = max(min(math.floor(high), 127 if dtype == torch.int8 else 255), lo)
        t = torch.randint(lo, hi + 1, full, generator=gen, dtype=torch.int64)
    t = t.to(dtype)
    return t[..., ::2] if noncontig and shape else t


def transposed(shape, dtype, **kw):
    """A tensor of `shape` (2-d or more) whose last two dims are swapped in memory."""
    swapped = tuple(shape[:-2]) + (shape[-1], shape[-2])
    return make(swapped, dtype, **kw).transpose(-1, -2)


def to_ember(obj, device="cpu", requires_grad=False):
    """A torch sample argument as Ember's: tensors with the same values,
    strides and storage offset; lists and tuples element by element."""
    if isinstance(obj, torch.Tensor):
        return _tensor_to_ember(obj, device, requires_grad)
    if isinstance(obj, torch.dtype):
        return getattr(ember, dtype_name(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_ember(o, device, requires_grad) for o in obj)
    if isinstance(obj, dict):
        return {k: to_ember(v, device, requires_grad) for k, v in obj.items()}
    return obj


def _tensor_to_ember(t, device, requires_grad):
    t = t.detach()
    dt = getattr(ember, dtype_name(t.dtype))
    if t.is_contiguous() or t.numel() == 0:
        e = ember.tensor(t.cpu().tolist(), dtype=dt).reshape(tuple(t.shape))
    else:
        flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
        e = ember.tensor(flat.tolist(), dtype=dt).as_strided(
            tuple(t.shape), t.stride(), t.storage_offset()
        )
    if device != "cpu":
        e = e.to(device)
    if requires_grad and t.dtype.is_floating_point:
        e = e.detach().requires_grad_(True)
    return e


def to_torch(e):
    """An Ember cpu tensor as torch's (values, dtype, shape)."""
    dt = torch_dtype(dtype_name(e.dtype))
    if e.device.type != "cpu":
        e = e.to("cpu")
    return torch.tensor(e.tolist(), dtype=dt).reshape(tuple(e.shape))


def leaf(t, requires_grad):
    """A detached torch leaf with the same strides, optionally requiring grad."""
    if not isinstance(t, torch.Tensor):
        return t
    t = t.detach()
    return t.requires_grad_(True) if requires_grad and t.dtype.is_floating_point else t
