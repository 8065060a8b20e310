"""Operators of the torch namespace composed in Python that build, split or
rearrange tensors (kron, rot90, tensordot, block_diag, combinations,
tril_indices, diag_embed, hsplit ...), integrate (trapezoid), search (isin,
bucketize), and the type helpers (result_type, can_cast, asarray ...)."""

from __future__ import annotations

import builtins
import itertools
import warnings

from ember import _C, _argcheck
from ember._ops_math import _out, _scalar_name
from ember._warnings import user_stacklevel


def _ember():
    import ember

    return ember


def _dim_check(dim, ndim):
    nd = max(ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    return dim % nd


# ---- products -------------------------------------------------------------------------------


def kron(input, other, *, out=None):  # noqa: A002
    """The Kronecker product."""
    _argcheck.tensor("kron", "input", 1, input)
    _argcheck.tensor("kron", "other", 2, other)
    nd = max(input.dim(), other.dim())
    a_sizes = [1] * (nd - input.dim()) + list(input.shape)
    b_sizes = [1] * (nd - other.dim()) + list(other.shape)
    a_shape, b_shape = [], []
    for i in builtins.range(nd):
        a_shape += [a_sizes[i], 1]
        b_shape += [1, b_sizes[i]]
    # As PyTorch: the operands and their product are viewed as _unsafe_view
    # views them (UnsafeViewBackward0); PyTorch raises where the product's
    # layout (from strided operands) is not viewable in the result's shape.
    result = _unsafe_view(input, a_shape) * _unsafe_view(other, b_shape)
    return _out(_unsafe_view(result, [a_sizes[i] * b_sizes[i] for i in builtins.range(nd)]), out)


def _unsafe_view(x, shape):
    """x.view(shape), recorded as PyTorch's _unsafe_view."""
    from ember._linalg_autograd import view_node

    sizes = list(x.shape)
    return view_node("UnsafeViewBackward0", x, lambda t: t.view(shape), lambda g: g.reshape(sizes))


def tensordot(a, b, dims=2, out=None):
    """Sums the products of a's and b's elements over the given dimensions."""
    ember = _ember()
    # dims first, in PyTorch's order; then the operands' types.
    if not isinstance(dims, (tuple, list, _C.TensorBase, builtins.int)):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two "
            f"lists, but got dims={dims}"
        )
    dims_a, dims_b = [], []
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    if isinstance(dims, _C.TensorBase):
        if dims.numel() > 1:
            if dims.size()[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.size()[0]}")
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            count = builtins.int(dims.item())
            if count < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(builtins.range(-count, 0)), list(builtins.range(count))
    if isinstance(dims, builtins.int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(builtins.range(-dims, 0)), list(builtins.range(dims))
    _argcheck.tensor("tensordot", "a", 1, a)
    _argcheck.tensor("tensordot", "b", 2, b)
    for name, position, value in (("dims_self", 3, dims_a), ("dims_other", 4, dims_b)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(
                f"tensordot(): argument '{name}' (position {position}) must be tuple of ints, not "
                f"{type(value).__name__}"
            )
    dims_a, dims_b = list(dims_a), list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [_dim_check(d, a.dim()) for d in dims_a]
    dims_b = [_dim_check(d, b.dim()) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} and second has "
                f"size {b.shape[db]} in dim {db}"
            )
    free_a = [d for d in builtins.range(a.dim()) if d not in dims_a]
    free_b = [d for d in builtins.range(b.dim()) if d not in dims_b]
    size = 1
    for d in dims_a:
        size *= a.shape[d]
    numeric = a.is_floating_point() or a.is_complex() or a.is_cuda  # CUDA's integer dot: the dot's error
    if not free_a and not free_b and numeric and a.dtype == b.dtype:
        # A full contraction: as PyTorch, the dot of the permuted operands
        # (flattened unless 1-D), viewed as a 0-d result.
        left, right = a.permute(tuple(dims_a)), b.permute(tuple(dims_b))
        left = left if left.dim() == 1 else left.reshape(size)
        right = right if right.dim() == 1 else right.reshape(size)
        return _out(ember.dot(left, right).view([]), out)
    left = a.permute(tuple(free_a + dims_a)).reshape(-1, size)
    right = b.permute(tuple(dims_b + free_b)).reshape(size, -1)
    result = ember.mm(left, right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])
    return _out(result, out)


def inner(input, other, *, out=None):  # noqa: A002
    """Sums of products over the last dimensions of both."""
    ember = _ember()
    _argcheck.tensor("inner", "input", 1, input)
    _argcheck.tensor("inner", "other", 2, other)
    if input.dim() == 0 or other.dim() == 0:
        return _out(ember.mul(input, other), out)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes {list(input.shape)} and "
            f"{list(other.shape)}"
        )
    return _out(tensordot(input, other, ([-1], [-1])), out)


def _recorded(node, fn, *inputs):
    """fn(*inputs) recorded as one autograd node named as PyTorch's."""
    from ember._linalg_autograd import named

    return named(node, fn, *inputs)


# ---- building -------------------------------------------------------------------------------


def _list_result_type(tensors):
    """PyTorch's result type of a list of tensors: 0-d tensors promote among
    themselves and win only with a higher category than the others."""
    ember = _ember()
    kinds = []
    for zero_dim in (False, True):
        dtypes = [t.dtype for t in tensors if (t.dim() == 0) == zero_dim]
        if dtypes:
            dtype = dtypes[0]
            for d in dtypes[1:]:
                dtype = ember.promote_types(dtype, d)
            kinds.append(ember.empty(() if zero_dim else (0,), dtype=dtype))
    return kinds[0].dtype if len(kinds) == 1 else ember.result_type(*kinds)


def block_diag(*tensors):
    """The tensors (0-d, 1-d or 2-d) placed along the diagonal of one matrix."""
    ember = _ember()
    mats = []
    for i, t in enumerate(tensors):
        _argcheck.tensor_elements([t], i)
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions"
            )
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return ember.empty(1, 0)
    dtype = _list_result_type(tensors)

    def place(*mats):
        cols = builtins.sum(m.shape[1] for m in mats)
        parts, c = [], 0
        for m in mats:
            h, w = m.shape
            left = ember.zeros(h, c, dtype=dtype, device=m.device)
            right = ember.zeros(h, cols - c - w, dtype=dtype, device=m.device)
            parts.append(ember.cat([left, m.to(dtype), right], 1))
            c += w
        return ember.cat(parts, 0)

    return _recorded("BlockDiagBackward0", place, *mats)


def cartesian_prod(*tensors):
    """Every combination of one element of each 1-D tensor, as rows."""
    ember = _ember()
    _argcheck.tensor_elements(tensors)  # the binding's argument 0, a tensor list
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = ember.meshgrid(*tensors, indexing="ij")
    return ember.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    """The r-length combinations of a 1-D tensor's elements, as rows."""
    ember = _ember()
    _argcheck.tensor("combinations", "input", 1, input)
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return ember.empty(0, dtype=input.dtype, device=input.device)
    n = input.shape[0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = [list(c) for c in pick(builtins.range(n), r)]
    if not index:
        return ember.empty(0, r, dtype=input.dtype, device=input.device)
    idx = ember.tensor(index, dtype=ember.int64, device=input.device)
    return input[idx.reshape(-1)].reshape(len(index), r)


def _tri_indices(row, col, offset, lower, dtype, device):
    ember = _ember()
    if dtype not in (ember.int32, ember.int64):
        raise RuntimeError(f"\"{'tril' if lower else 'triu'}_indices\" not implemented for '{_scalar_name(dtype)}'")
    r = ember.arange(row).unsqueeze(1).expand(row, col)
    c = ember.arange(col).unsqueeze(0).expand(row, col)
    mask = (c - r <= offset) if lower else (c - r >= offset)
    return ember.stack([r[mask], c[mask]]).to(dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    ember = _ember()
    return _tri_indices(row, col, offset, True, ember.int64 if dtype is None else dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    ember = _ember()
    return _tri_indices(row, col, offset, False, ember.int64 if dtype is None else dtype, device)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Matrices whose diagonals (at offset, in the planes dim1 x dim2) are input's last dimension."""
    _argcheck.tensor("diag_embed", "input", 1, input)
    return _C._VariableFunctions.diag_embed(input, offset, dim1, dim2)


def diagflat(input, offset=0):  # noqa: A002
    _argcheck.tensor("diagflat", "input", 1, input)
    return diag_embed(input.reshape(-1), offset)


# ---- splitting ------------------------------------------------------------------------------


def _split_along(name, input, indices_or_sections, dim, min_dim):  # noqa: A002
    ember = _ember()
    _argcheck.tensor(name, "input", 1, input)
    if input.dim() < min_dim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor with {input.dim()} "
            "dimensions!"
        )
    if isinstance(indices_or_sections, builtins.int):
        size = input.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections != 0:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension {size} is not "
                f"divisible by the split_size {indices_or_sections}!"
            )
    return ember.tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections):  # noqa: A002
    dim = 0 if input.dim() == 1 else 1
    return _split_along("hsplit", input, indices_or_sections, dim, 1)


def vsplit(input, indices_or_sections):  # noqa: A002
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):  # noqa: A002
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def ravel(input):  # noqa: A002
    return _argcheck.tensor("ravel", "input", 1, input).reshape(-1)


def rot90(input, k=1, dims=(0, 1)):  # noqa: A002
    """Rotation by 90 degrees k times in the plane of dims, from the first towards the second."""
    _argcheck.tensor("rot90", "input", 1, input)
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = _dim_check(dims[0], input.dim()), _dim_check(dims[1], input.dim())
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4

    def rotate(x):
        if k == 1:
            return x.flip(d1).transpose(d0, d1)
        if k == 2:
            return x.flip([d0, d1])
        if k == 3:
            return x.flip(d0).transpose(d0, d1)
        return x.clone()

    return _recorded("Rot90Backward0", rotate, input)


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):  # noqa: A002
    """The n-th forward difference along dim (logical xor for bool)."""
    ember = _ember()
    _argcheck.tensor("diff", "input", 1, input)
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0 and prepend is None and append is None:
        return _out(input.clone(), out)  # PyTorch reads dim only to take a difference or to join
    dim = _dim_check(dim, input.dim())
    parts = [p for p in (prepend, input, append) if p is not None]
    x = ember.cat(parts, dim) if len(parts) > 1 else input
    if n == 0:
        # PyTorch checks prepend/append, then gives a copy of the input alone.
        return _out(input.clone(), out)
    for _ in builtins.range(n):
        length = x.shape[dim]
        if length == 0:
            break
        later, earlier = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = ember.logical_xor(later, earlier) if x.dtype == ember.bool else later - earlier
    return _out(x, out)


# ---- integration ----------------------------------------------------------------------------


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of y along dim by the trapezoidal rule (spacing dx, or sample points x)."""
    ember = _ember()
    _argcheck.tensor("trapezoid", "y", 1, y)
    if y.dtype == ember.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    if x is not None and not isinstance(x, _C.TensorBase):
        dx, x = x, None
    dim = _dim_check(dim, y.dim())
    n = y.shape[dim]
    if n == 0:
        return ember.zeros(tuple(y.shape[:dim]) + tuple(y.shape[dim + 1 :]), dtype=y.dtype, device=y.device)
    from ember.autograd.function import _div_scalar, _mul_scalar

    if x is None:
        step = 1 if dx is None else dx
        ends = _mul_scalar(y.select(dim, 0) + y.select(dim, -1), 0.5)
        return _mul_scalar(y.sum(dim) - ends, step)
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError(
                f"trapezoid: There must be one `x` value for each sample point, but got {x.shape[0]} for `x` and "
                f"{n} for `y`"
            )
        shape = [1] * y.dim()
        shape[dim] = n
        x = x.reshape(shape)
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return _div_scalar((pairs * x.diff(dim=dim)).sum(dim), 2.0)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of y along dim by the trapezoidal rule."""
    ember = _ember()
    _argcheck.tensor("cumulative_trapezoid", "y", 1, y)
    if y.dtype == ember.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    if x is not None and not isinstance(x, _C.TensorBase):
        dx, x = x, None
    dim = _dim_check(dim, y.dim())
    n = y.shape[dim]
    # An empty dim gives an empty result (no pair starts at 1).
    pairs = y.narrow(dim, min(n, 1), max(n - 1, 0)) + y.narrow(dim, 0, max(n - 1, 0))
    from ember.autograd.function import _div_scalar, _mul_scalar

    if x is None:
        step = 1 if dx is None else dx
        return _mul_scalar(pairs, step / 2.0).cumsum(dim)
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError(
                f"cumulative_trapezoid: There must be one `x` value for each sample point, but got {x.shape[0]} "
                f"for `x` and {n} for `y`"
            )
        shape = [1] * y.dim()
        shape[dim] = n
        x = x.reshape(shape)
    return _div_scalar((pairs * x.diff(dim=dim)).cumsum(dim), 2.0)


# ---- searching ------------------------------------------------------------------------------


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of elements is in test_elements (sorted search)."""
    ember = _ember()
    e = elements if isinstance(elements, _C.TensorBase) else ember.tensor(elements)
    t = test_elements if isinstance(test_elements, _C.TensorBase) else ember.tensor(test_elements)
    for v in (e, t):
        if v.dtype == ember.bool or v.is_complex():
            from ember._ops_math import _scalar_name

            raise RuntimeError(f"Unsupported input type encountered for isin(): {_scalar_name(v.dtype)}")
    # PyTorch compares few test elements by broadcasting, in result_type's dtype (a 0-dim operand or
    # Python number wraps into the other's dtype), and many by sorting both flattened, in their promoted one.
    few = t.numel() < int(10.0 * float(e.numel()) ** 0.145)
    dtype = (
        ember.result_type(e, t)
        if few or not isinstance(test_elements, _C.TensorBase)
        else ember.promote_types(e.dtype, t.dtype)
    )
    flat = t.reshape(-1).to(dtype)
    if flat.numel() == 0:
        found = ember.zeros(e.shape, dtype=ember.bool, device=e.device)
    else:
        ordered = ember.sort(flat)[0]
        probe = e.to(dtype).contiguous()
        pos = ember.searchsorted(ordered, probe).clamp(max=ordered.numel() - 1)
        found = ordered[pos] == probe
    return ~found if invert else found


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):  # noqa: A002
    """The index of the bucket of each element of input among sorted boundaries."""
    ember = _ember()
    _argcheck.tensor("bucketize", "boundaries", 2, boundaries)
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    if not isinstance(input, _C.TensorBase):
        input = ember.tensor(input)  # noqa: A001
    if input.dtype == ember.bool or boundaries.dtype == ember.bool:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    result = ember.searchsorted(boundaries, input.contiguous(), out_int32=out_int32, right=right)
    return _out(result, out)


# ---- type helpers and factories -------------------------------------------------------------


_KIND = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1, "complex64": 3, "complex128": 3}


def can_cast(from_, to):
    """Whether PyTorch's promotion allows a cast from from_ to to (no float to integral, no number to bool)."""

    def kind(d):
        return 2 if d.is_floating_point else _KIND[str(d).split(".")[-1]]

    for position, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, _C.dtype):
            raise TypeError(
                f"can_cast(): argument '{name}' (position {position}) must be torch.dtype, "
                f"not {_argcheck._type_name(value)}"
            )

    return kind(from_) <= kind(to)


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):  # noqa: A001
    """Deprecated: values from start to end inclusive, by step."""
    ember = _ember()
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
        "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = builtins.int((end - start) // step) + 1
    dtype = ember.get_default_dtype() if dtype is None else dtype
    values = ember.arange(n, dtype=ember.float64) * step + start
    result = values.to(dtype=dtype, device=device)
    if requires_grad:
        result.requires_grad_(True)
    return _out(result, out)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor, sharing memory when it can (tensors, NumPy arrays, buffers) unless copy=True."""
    ember = _ember()
    if isinstance(obj, _C.TensorBase):
        result = obj
        if dtype is not None or device is not None:
            result = result.to(dtype=dtype, device=device)
        if copy:
            result = result.clone() if result is obj else result
        elif copy is False and result is not obj:
            raise ValueError("can't alias tensor from storage with a different dtype or device. Use copy=True.")
    elif isinstance(obj, (bytes, bytearray, memoryview)) and dtype is not None:
        result = frombuffer(obj, dtype=dtype) if copy is not True else frombuffer(obj, dtype=dtype).clone()
    elif copy:
        result = ember.tensor(obj, dtype=dtype, device=device)
    else:
        result = ember.as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        result.requires_grad_(True)
    return result


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing the memory of a buffer-protocol object."""
    import numpy as np

    ember = _ember()
    view = memoryview(buffer)
    nbytes = view.nbytes
    itemsize = dtype.itemsize
    if nbytes == 0:
        raise ValueError("both buffer length (0) and count (-1) must not be 0")
    if offset < 0 or offset >= nbytes:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({nbytes} bytes) minus 1"
        )
    if count <= 0 and (nbytes - offset) % itemsize != 0:
        raise ValueError(
            f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a multiple of element "
            f"size ({itemsize})"
        )
    n = (nbytes - offset) // itemsize if count < 0 else count
    if n * itemsize + offset > nbytes:
        raise ValueError(
            f"requested buffer length ({n} * {itemsize} bytes) after offset ({offset} bytes) must not be greater "
            f"than actual buffer length ({nbytes} bytes)"
        )
    np_dtype = "int16" if str(dtype) == "torch.bfloat16" else str(dtype).split(".")[-1]
    arr = np.frombuffer(buffer, dtype=np_dtype, count=n, offset=offset)
    if view.readonly:
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable tensors. This means you can "
            "write to the underlying (supposedly non-writable) buffer using the tensor. You may want to copy the "
            "buffer to protect its data or make it writable before converting it to a tensor. This type of warning "
            "will be suppressed for the rest of this program.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        arr.flags.writeable = True if arr.base is not None and not view.readonly else arr.flags.writeable
    result = _C.from_numpy(arr)
    if str(dtype) == "torch.bfloat16":
        result = result.view(ember.bfloat16)
    if requires_grad:
        result.requires_grad_(True)
    return result


def fill(input, value):  # noqa: A002
    """A tensor like input filled with value (out of place)."""
    _argcheck.tensor("fill", "input", 1, input)
    if isinstance(value, _C.TensorBase) and value.dim() != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions."
        )
    return input.clone().fill_(value)


def get_device(input):  # noqa: A002
    return _argcheck.tensor("get_device", "input", 1, input).get_device()


def is_same_size(input, other):  # noqa: A002
    return _argcheck.tensor("is_same_size", "input", 1, input).is_same_size(other)


def is_signed(input):  # noqa: A002
    return _argcheck.tensor("is_signed", "input", 1, input).is_signed()


__all__ = [
    "kron",
    "tensordot",
    "inner",
    "block_diag",
    "cartesian_prod",
    "combinations",
    "tril_indices",
    "triu_indices",
    "diag_embed",
    "diagflat",
    "hsplit",
    "vsplit",
    "dsplit",
    "ravel",
    "rot90",
    "diff",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
    "isin",
    "bucketize",
    "can_cast",
    "range",
    "asarray",
    "frombuffer",
    "fill",
    "get_device",
    "is_same_size",
    "is_signed",
]
METHODS = ["kron", "inner", "diag_embed", "diagflat", "hsplit", "vsplit", "dsplit", "rot90", "diff"]
