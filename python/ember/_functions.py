"""Functions of the torch namespace built from operators in Python:
type facts (finfo, iinfo, is_tensor ...), broadcasting helpers, stacking
helpers and meshgrid."""

from __future__ import annotations

import math
import warnings

from ember import _C, _argcheck
from ember._warnings import user_stacklevel

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


# ---- type facts ---------------------------------------------------------------------------
_FLOAT_FACTS = {
    # name: (bits, eps, max, tiny, resolution)
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14, 0.001),
    "bfloat16": (16, 2.0**-7, 3.3895313892515355e38, 2.0**-126, 0.01),
    "float32": (32, 2.0**-23, 3.4028234663852886e38, 2.0**-126, 1e-06),
    "float64": (64, 2.0**-52, 1.7976931348623157e308, 2.0**-1022, 1e-15),
    "float8_e4m3fn": (8, 2.0**-3, 448.0, 2.0**-6, 1.0),
    "float8_e4m3fnuz": (8, 2.0**-3, 240.0, 2.0**-7, 1.0),
    "float8_e5m2": (8, 2.0**-2, 57344.0, 2.0**-14, 1.0),
    "float8_e5m2fnuz": (8, 2.0**-3, 57344.0, 2.0**-15, 1.0),
    "float8_e8m0fnu": (8, 1.0, 2.0**127, 2.0**-127, 1.0),
}
_INT_FACTS = {
    "uint8": (8, 0, 255),
    "int8": (8, -(2**7), 2**7 - 1),
    "int16": (16, -(2**15), 2**15 - 1),
    "int32": (32, -(2**31), 2**31 - 1),
    "int64": (64, -(2**63), 2**63 - 1),
    "uint16": (16, 0, 2**16 - 1),
    "uint32": (32, 0, 2**32 - 1),
    "uint64": (64, 0, 2**64 - 1),
}


def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


class finfo:  # noqa: N801
    """Machine limits of a floating point dtype."""

    __module__ = "ember"

    def __init__(self, type=None):  # noqa: A002
        name = _dtype_name(type if type is not None else _C.get_default_dtype())
        name = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}.get(name, name)
        if name not in _FLOAT_FACTS:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'"
            )
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOAT_FACTS[name]
        # float8_e8m0fnu has no sign: its smallest value is its tiny one
        self.min = self.tiny if name == "float8_e8m0fnu" else -self.max
        self.smallest_normal = self.tiny
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801
    """Machine limits of an integer dtype."""

    __module__ = "ember"

    def __init__(self, type):  # noqa: A002
        name = _dtype_name(type)
        if name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if name not in _INT_FACTS:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        self.bits, self.min, self.max = _INT_FACTS[name]
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def is_tensor(obj):
    return isinstance(obj, _C.TensorBase)


def is_floating_point(input):  # noqa: A002
    return input.is_floating_point()


def is_complex(input):  # noqa: A002
    return input.is_complex()


def is_conj(input):  # noqa: A002
    return input.is_conj()


def result_type(tensor, other):
    """The dtype an elementwise operation on tensor and other computes in."""
    for x in (tensor, other):
        if not isinstance(x, (_C.TensorBase, int, float, complex)):
            names = ", ".join("Tensor" if isinstance(v, _C.TensorBase) else type(v).__name__ for v in (tensor, other))
            raise TypeError(f"result_type() received an invalid combination of arguments - got ({names})")
    return _C._result_type(tensor, other)


def is_nonzero(input):  # noqa: A002
    return _argcheck.tensor("is_nonzero", "input", 1, input).is_nonzero()


def numel(input):  # noqa: A002
    return input.numel()


def is_inference(input):  # noqa: A002
    """Whether input was made in inference mode (or is a view of such a tensor)."""
    return _argcheck.tensor("is_inference", "input", 1, input).is_inference()


# ---- broadcasting ---------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    """The shape all the given shapes broadcast to, as an ember.Size (None entries skipped, an int is a 1-d shape)."""
    import collections.abc

    import ember

    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    for shape in shapes:
        if not isinstance(shape, collections.abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    if not shapes:
        return ember.Size([])
    # Every dim starts at 1; a shape's size replaces a 1, else must equal it or be 1.
    result = [1] * max(len(shape) for shape in shapes)
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            size = shape[i]
            if size == result[i]:
                continue
            if result[i] == 1:
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                result[i] = size
            if size == 1:
                continue
            if result[i] != size:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {i}! Mismatching argument at index "
                    f"{index} had {shape}; but expected shape should be broadcastable to {result}"
                )
    return ember.Size(result)


def broadcast_tensors(*tensors):
    # PyTorch passes the positional arguments as its one tensor list: a
    # single list or tuple argument is an element that is not a tensor.
    _argcheck.tensor_elements(tensors)
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def broadcast_to(input, size):  # noqa: A002
    return _argcheck.tensor("broadcast_to", "input", 1, input).expand(size)


# ---- dimensions and stacking ---------------------------------------------------------------
def _atleast(tensors, rank, raise_rank):
    if len(tensors) == 1:
        tensors = tensors[0]
        if isinstance(tensors, _C.TensorBase):
            return raise_rank(tensors) if tensors.dim() < rank else tensors
    _argcheck.tensor_elements(tensors)
    return tuple(raise_rank(t) if t.dim() < rank else t for t in tensors)


# As PyTorch: a 0-d tensor is reshaped, others take new dims by unsqueeze.
def atleast_1d(*tensors):
    return _atleast(tensors, 1, lambda t: t.reshape(1))


def atleast_2d(*tensors):
    return _atleast(tensors, 2, lambda t: t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0))


def atleast_3d(*tensors):
    def raise_rank(t):
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(-1)

    return _atleast(tensors, 3, raise_rank)


def _tensor_sequence(name, tensors):
    """PyTorch's TypeError for a `tensors` argument that is not a sequence of
    tensors, its RuntimeError for an empty one."""
    import ember

    if not isinstance(tensors, (tuple, list)):
        kind = type(tensors).__name__
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {kind}")
    if not tensors:
        raise RuntimeError(f"{'vstack' if name == 'row_stack' else name} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, ember.Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def hstack(tensors, *, out=None):
    import ember

    _tensor_sequence("hstack", tensors)
    tensors = atleast_1d(*tensors) if len(tensors) != 1 else (atleast_1d(tensors[0]),)
    dim = 0 if tensors[0].dim() == 1 else 1
    return ember.cat(tensors, dim) if out is None else ember.cat(tensors, dim, out=out)


def vstack(tensors, *, out=None, _name="vstack"):
    import ember

    tensors = [atleast_2d(t) for t in _tensor_sequence(_name, tensors)]
    return ember.cat(tensors, 0) if out is None else ember.cat(tensors, 0, out=out)


def row_stack(tensors, *, out=None):
    return vstack(tensors, out=out, _name="row_stack")


def dstack(tensors, *, out=None):
    import ember

    tensors = [atleast_3d(t) for t in _tensor_sequence("dstack", tensors)]
    return ember.cat(tensors, 2) if out is None else ember.cat(tensors, 2, out=out)


def column_stack(tensors, *, out=None):
    import ember

    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in _tensor_sequence("column_stack", tensors)]
    return ember.cat(cols, 1) if out is None else ember.cat(cols, 1, out=out)


def meshgrid(*tensors, indexing=None):
    import ember

    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    # The binding's argument types come first.
    for i, t in enumerate(tensors):
        if not isinstance(t, ember.Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if indexing is not None and not isinstance(indexing, str):
        raise TypeError(f"meshgrid(): argument 'indexing' must be str, not {type(indexing).__name__}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        indexing = "ij"
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = [t.numel() for t in flat]
    grids = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = -1
        grids.append(t.view(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def detach(input):  # noqa: A002
    return input.detach()


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):  # noqa: A002
    """The operator as torch binds it at the top level: its Python binding
    reads the schema's default reduction (Mean) as 0, so an unreduced loss
    (nn.functional's keeps 'mean')."""
    return _C._VariableFunctions.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


# ---- facts about this build ---------------------------------------------------------------
# LAPACK and the FFT are built in; MKL is not (the BLAS is OpenBLAS).
has_lapack = True
has_spectral = True
has_mkl = False


has_openmp = "USE_OPENMP=ON" in _C._build_settings


def init_num_threads():
    """Sets up the calling thread's intra-op threads (they start on first use here)."""


def is_distributed(input):
    """Always False: a tensor is never split across processes."""
    _argcheck.tensor("is_distributed", "input", 1, input)
    return False


def compiled_with_cxx11_abi():
    """Whether the library is built with libstdc++'s C++11 ABI (it is)."""
    return bool(_C._GLIBCXX_USE_CXX11_ABI)


def is_vulkan_available():
    """False: there is no Vulkan backend."""
    return False


def cudnn_is_acceptable(input):  # noqa: A002
    """Whether cuDNN would take this tensor: enabled, available, a CUDA tensor of float64, float32 or float16."""
    _argcheck.tensor("cudnn_is_acceptable", "self", 1, input)
    from ember.backends import cudnn

    return bool(
        cudnn.enabled and input.is_cuda and str(input.dtype) in ("torch.float64", "torch.float32", "torch.float16")
        and cudnn.is_available()
    )  # fmt: skip


def get_device_module(device=None):
    """The module of a device type: ember.cpu, ember.cuda; None gives the
    current accelerator's, or ember.cpu without one."""
    import ember

    hash(device)  # PyTorch caches the function: an unhashable argument is a TypeError
    if device is None:
        kind = "cuda" if ember.cuda.is_available() else "cpu"
    elif isinstance(device, ember.device):
        kind = device.type
    elif isinstance(device, str):
        kind = ember.device(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = getattr(ember, kind, None)
    if kind == "meta" or module is None:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'torch.{kind}'.")
    return module


# ---- small composites -------------------------------------------------------------------------
def view_as_real_copy(input):
    return _C._VariableFunctions.view_as_real(input).clone()


def view_as_complex_copy(input):
    return _C._VariableFunctions.view_as_complex(input).clone()


def empty_permuted(
    size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
):
    """An uninitialised tensor of `size` whose memory runs in the order of
    `physical_layout` (its last dimension innermost)."""
    import ember

    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; i.e. "
            f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}"
        )
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but got {d} at index {i}).  "
                "NB: negative dims not currently supported; file an issue if you want it."
            )
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    stride = [0] * len(size)
    step = 1
    for d in reversed(order):
        stride[d] = step
        step *= max(size[d], 1)
    return ember.empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad)


# ---- control flow, run eagerly ----------------------------------------------------------------
def _leaves(tree):
    """The leaves of nested tuples, lists and dicts."""
    if isinstance(tree, (tuple, list)):
        for item in tree:
            yield from _leaves(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from _leaves(item)
    else:
        yield tree


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands)."""
    import ember

    # A Python constant picks the branch at once; anything else is checked first.
    if not isinstance(pred, (bool, int, float)):
        if not isinstance(pred, ember.Tensor):
            raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        if not callable(true_fn) or not callable(false_fn):
            raise RuntimeError("Expect both branches to be callable.")
        if not isinstance(operands, (tuple, list)) or any(not isinstance(t, ember.Tensor) for t in _leaves(operands)):
            raise RuntimeError(
                "Expect operands to be a tuple of possibly nested dict/list/tuple that only "
                f"consists of tensor leaves, but got {operands}."
            )
        pred = bool(pred.item())
    return true_fn(*operands) if pred else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs body_fn on the carried values while cond_fn holds; returns them."""
    import ember

    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    leaves = list(_leaves(carried_inputs))
    if any(not isinstance(t, (ember.Tensor, int)) for t in leaves):
        kinds = tuple(type(t) for t in leaves if not isinstance(t, (ember.Tensor, int)))
        raise AssertionError(f"{leaves} can only be of (Tensor, int, SymInt) but got {kinds}")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while True:
        go = cond_fn(*carried)
        if isinstance(go, ember.Tensor):
            go = bool(go.item())
        if not go:
            return carried
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)


__all__ = [
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
    "finfo",
    "iinfo",
    "is_tensor",
    "is_floating_point",
    "is_complex",
    "is_conj",
    "result_type",
    "is_nonzero",
    "numel",
    "is_inference",
    "broadcast_shapes",
    "broadcast_tensors",
    "broadcast_to",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "hstack",
    "vstack",
    "row_stack",
    "dstack",
    "column_stack",
    "meshgrid",
    "detach",
    "binary_cross_entropy_with_logits",
    "has_lapack",
    "has_spectral",
    "has_mkl",
    "has_openmp",
    "init_num_threads",
    "is_distributed",
    "compiled_with_cxx11_abi",
    "is_vulkan_available",
    "cudnn_is_acceptable",
    "get_device_module",
    "view_as_real_copy",
    "view_as_complex_copy",
    "empty_permuted",
    "cond",
    "while_loop",
]
