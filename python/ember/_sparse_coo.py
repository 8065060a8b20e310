"""Sparse COO tensors: indices (sparse_dim x nnz, int64) and values
(nnz x dense dims), layout torch.sparse_coo.

A SparseCOOTensor is an ember.Tensor subclass whose strided part is a
zero-strided view of one zero (it holds no data of its size); everything it
supports arrives through __torch_function__ and is computed from indices and
values with dense operators, so autograd flows through the dense operands
(``sparse @ dense`` differentiates with respect to ``dense``). What it does
not support raises PyTorch's NotImplementedError for the SparseCPU backend."""

from __future__ import annotations

import warnings

import ember
from ember import _C, _argcheck
from ember._layout import sparse_coo


def _sparse_backend_error(name: str, backend: str = "SparseCPU") -> NotImplementedError:
    return _argcheck.backend_error(f"aten::{name}", backend)


def _layout_shell(cls, dtype, size):
    """A tensor of class cls with the given dtype and size and no data of its
    own (one zero, expanded): the dense face of a sparse layout's tensor."""
    with _C.DisableTorchFunctionSubclass():
        return ember.zeros((), dtype=dtype).expand(tuple(size)).as_subclass(cls)


def _make(indices, values, size, coalesced: bool):
    t = _layout_shell(SparseCOOTensor, values.dtype, size)
    t._sp_indices = indices
    t._sp_values = values
    t._sp_coalesced = coalesced
    return t


def _is_sparse(x) -> bool:
    return isinstance(x, SparseCOOTensor)


def _node(name, fn, *inputs):
    """fn(*inputs), recorded as PyTorch's node `name` for the sparse operator
    Ember composes from dense ones (the values carry the history)."""
    from ember.autograd.function import _composite_node

    return _composite_node(name, fn, *inputs)


class SparseCOOTensor(ember.Tensor):
    """A tensor in the sparse COO layout (see the module docstring)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        handler = _HANDLERS.get(func)
        if handler is not None:
            return handler(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name == "__get__" or name in _METADATA:
            with _C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        raise _sparse_backend_error(name.strip("_") or "unknown")

    # --- the layout's own methods ----------------------------------------
    def _indices(self):
        return self._sp_indices

    def _values(self):
        return self._sp_values

    def indices(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_indices

    def values(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_values

    def _nnz(self):
        return self._sp_values.shape[0]

    def is_coalesced(self):
        return self._sp_coalesced

    def sparse_dim(self):
        return self._sp_indices.shape[0]

    def dense_dim(self):
        return self._sp_values.dim() - 1

    def coalesce(self):
        if self._sp_coalesced:
            return self
        idx, vals = self._sp_indices, self._sp_values
        shape = self.shape[: self.sparse_dim()]
        if vals.shape[0] == 0:
            return _make(idx, vals, self.shape, True)
        linear = ember.zeros(idx.shape[1], dtype=ember.int64)
        for d in range(idx.shape[0]):
            linear = linear * shape[d] + idx[d]
        order = ember.sort(linear, stable=True).indices
        linear = linear[order]
        unique, group = ember.unique_consecutive(linear, return_inverse=True)
        rows = (unique.shape[0],) + tuple(vals.shape[1:])
        summed = _node(
            "CoalesceBackward0", lambda v: ember.zeros(rows, dtype=v.dtype).index_add(0, group, v[order]), vals
        )
        new_idx = ember.empty((idx.shape[0], unique.shape[0]), dtype=ember.int64)
        rest = unique
        for d in reversed(range(idx.shape[0])):
            new_idx[d] = rest % shape[d]
            rest = ember.div(rest, shape[d], rounding_mode="floor")
        return _make(new_idx, summed, self.shape, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        vals = self._sp_values if dtype is None else self._sp_values.to(dtype)
        where = tuple(self._sp_indices)

        def scatter(v):
            out = ember.zeros(tuple(self.shape), dtype=v.dtype)
            return out.index_put(where, v, accumulate=True) if v.shape[0] else out

        return _node("ToDenseBackward0", scatter, vals)

    def to_sparse(self, sparse_dim=None, **kwargs):
        return self

    to_sparse_coo = to_sparse

    def __repr__(self, *, tensor_contents=None):
        return _sparse_str(self)

    __str__ = __repr__

    def __format__(self, spec):
        return _sparse_str(self) if not spec else format(str(self), spec)

    def __len__(self):
        return self.shape[0]


# Methods that only read metadata, answered by the strided part.
_METADATA = frozenset(
    {"dim", "size", "numel", "nelement", "element_size", "is_floating_point", "is_complex", "get_device", "ndimension"}
)


# --- printing -------------------------------------------------------------------


def _sparse_str(t) -> str:
    from ember import _tensor_str as ts

    prefix = "tensor("
    indent = len(prefix)
    idx, vals = t._sp_indices, t._sp_values
    indices_prefix, values_prefix = "indices=tensor(", "values=tensor("
    if vals.shape[0] == 0:
        indices_body = f"[], size={tuple(idx.shape)}"
        values_body = f"[], size={tuple(vals.shape)}"
    else:
        indices_body = ts._body(idx, indent + len(indices_prefix))
        values_body = ts._body(vals.detach(), indent + len(values_prefix))
    body = prefix + indices_prefix + indices_body + "),\n" + " " * indent + values_prefix + values_body + ")"
    default = ember.get_default_dtype()
    default_complex = ember.complex128 if default == ember.float64 else ember.complex64
    suffixes = [f"size={tuple(t.shape)}", f"nnz={vals.shape[0]}"]
    if t.dtype not in (default, default_complex, ember.int64, ember.bool):
        suffixes.append(f"dtype={t.dtype}")
    suffixes.append("layout=torch.sparse_coo")
    if vals.requires_grad:
        suffixes += ts._history_suffixes(vals)
    return ts._add_suffixes(body, suffixes, indent, force_newline=True)


# --- construction ------------------------------------------------------------------


def sparse_coo_tensor(
    indices,
    values=None,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
    is_coalesced=None,
):
    """A sparse COO tensor from ``indices`` (sparse_dim x nnz) and ``values``;
    ``sparse_coo_tensor(size)`` is an empty one of that size."""
    from ember import sparse

    sparse._note_invariant_checks(check_invariants)
    if values is None:
        size = (indices,) if isinstance(indices, int) else tuple(indices)
        indices = ember.empty((len(size), 0), dtype=ember.int64)
        values = ember.empty((0,), dtype=dtype)
    if device is not None and ember.device(device).type != "cpu":
        raise _sparse_backend_error("_sparse_coo_tensor_with_dims_and_tensors")
    indices = ember.as_tensor(indices)
    if indices.dtype != ember.int64:
        if indices.dtype.is_floating_point or indices.dtype.is_complex:
            raise RuntimeError(f"indices must be an int64 tensor, but got: {indices.dtype}")
        indices = indices.to(ember.int64)
    values = ember.as_tensor(values, dtype=dtype)
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        values = values.reshape(1) if indices.shape[1] == 1 else values.expand(indices.shape[1])
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
            f"nnz from values: {values.shape[0]}"
        )
    sparse_dim = indices.shape[0]
    if size is None:
        if indices.shape[1] == 0:
            raise RuntimeError("cannot infer the size of a sparse tensor with no elements")
        size = [int(m) + 1 for m in indices.max(dim=1).values.tolist()] + list(values.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + values.dim() - 1:
        raise RuntimeError(
            f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({values.dim() - 1}), "
            f"but got {len(size)}"
        )
    if indices.shape[1]:
        bounds = indices.max(dim=1).values.tolist()
        lows = indices.min(dim=1).values.tolist()
        for d in range(sparse_dim):
            if lows[d] < 0:
                raise RuntimeError(f"found negative index {lows[d]} for dim {d}")
            if bounds[d] >= size[d]:
                raise RuntimeError(
                    f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index {bounds[d]}"
                )
    if requires_grad:
        values = values.detach().requires_grad_(True)
    elif values.requires_grad:  # a new node of the values' history, as PyTorch records
        values = _node("SparseCooTensorWithDimsAndTensorsBackward0", lambda v: v.clone(), values)
    return _make(indices, values, size, bool(is_coalesced))


def _dense_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout not in (None, sparse_coo):
        raise RuntimeError(f"to_sparse: layout {layout} is not supported")
    sparse_dim = self.dim() if sparse_dim is None else sparse_dim
    if not 0 <= sparse_dim <= self.dim():
        raise RuntimeError(f"sparse_dim must be between 0 and {self.dim()}, but got {sparse_dim}")
    lead = self.reshape(tuple(self.shape[:sparse_dim]) + (-1,))
    mask = (lead != 0).any(dim=-1) if sparse_dim < self.dim() else self != 0
    idx = mask.nonzero().t().contiguous() if sparse_dim else ember.zeros((0, 1), dtype=ember.int64)
    values = self[tuple(idx)] if sparse_dim else self.unsqueeze(0)
    return _make(idx, values.detach() if not self.requires_grad else values, tuple(self.shape), True)


# --- operators -----------------------------------------------------------------------


def _dense_values(x):
    return x.to_dense() if _is_sparse(x) else x


def _size_error(t, dim):
    # the IndexError of t.size(dim) for a tensor with fewer dims, as PyTorch's mm reads them
    if t.dim() == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return IndexError(f"Dimension out of range (expected to be in range of [-{t.dim()}, {t.dim() - 1}], but got {dim})")


def _matmul(a, b):
    """matmul with a sparse COO operand: mm, or a matrix-vector product."""
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.dim()}D and {b.dim()}D")
    if (_is_sparse(a) and a.dim() > 2) or (_is_sparse(b) and b.dim() > 2):
        raise RuntimeError("reshape is not implemented for sparse tensors")
    if a.dim() == 1 and b.dim() == 1:
        raise _sparse_backend_error("dot")
    if a.dim() == 2 and b.dim() == 1:
        if _is_sparse(a) and _is_sparse(b):
            raise _sparse_backend_error("as_strided")
        return _mm(a, b.unsqueeze(1)).squeeze(1) if _is_sparse(a) else a @ b.to_dense()
    if a.dim() == 1 and b.dim() == 2:
        if _is_sparse(a) and _is_sparse(b):
            raise _sparse_backend_error("as_strided_")
        return a.to_dense() @ b if _is_sparse(a) else _mm(a.unsqueeze(0), b).squeeze(0)
    return _mm(a, b)


def _check_sparse_dense(a, b):
    """PyTorch's checks of sparse a @ dense b, in its order."""
    if a.dim() < 2:
        raise _size_error(a, -2)
    if b.dim() < 2:
        raise _size_error(b, 1 if b.dim() == 1 else -1)
    if a.dim() > 2 and b.dim() == 2 and a.shape[0] != b.shape[0]:
        # PyTorch expands the dense operand to the result's first two sizes first
        raise RuntimeError(
            f"The expanded size of the tensor ({a.shape[0]}) must match the existing size ({b.shape[0]}) at "
            f"non-singleton dimension 0.  Target sizes: [{a.shape[0]}, {b.shape[1]}].  "
            f"Tensor sizes: [{b.shape[0]}, {b.shape[1]}]"
        )
    if a.sparse_dim() != 2 or a.dense_dim() != 0 or b.dim() != 2:
        raise RuntimeError("sparse @ dense: expected a 2-D sparse tensor and a 2-D dense tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {a.shape[1]}, got {b.shape[0]}")


def _sparse_times_dense(a, values, d, dtype):
    """The 2-D sparse a's pattern holding `values`, times the dense matrix d (or vector), in dtype:
    each stored entry's row of d scaled, added into its output row in stored order."""
    rows, cols = a._sp_indices[0], a._sp_indices[1]
    scale = values.to(dtype) if d.dim() == 1 else values.to(dtype).unsqueeze(1)
    out = ember.zeros((a.shape[0],) + tuple(d.shape[1:]), dtype=dtype)
    return out.index_add(0, rows, scale * d.to(dtype).index_select(0, cols))


def _mm(a, b, node="MmBackward0"):
    if _is_sparse(a) and _is_sparse(b):
        for name, t in (("mat1_", a), ("mat2_", b)):
            if t.dim() != 2:
                raise RuntimeError(
                    f"Expected {name}.dim() == 2 to be true, but got false.  (Could this error message be improved?  "
                    "If so, please report an enhancement request to PyTorch.)"
                )
        return _mm(a, b.to_dense()).to_sparse()
    if _is_sparse(a):
        _check_sparse_dense(a, b)
        dtype = ember.result_type(a._sp_values, b)
        return _node(node, lambda v, d: _sparse_times_dense(a, v, d, dtype), a._sp_values, b)
    if a.dim() < 2:
        raise _size_error(a, -2)
    if b.dim() < 2:
        raise _size_error(b, -2)
    if b.sparse_dim() != 2 or b.dense_dim() != 0 or a.dim() != 2:
        raise RuntimeError("dense @ sparse: expected a 2-D dense tensor and a 2-D sparse tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {b.shape[0]}, got {a.shape[1]}")
    rows, cols = b._sp_indices[0], b._sp_indices[1]
    dtype = ember.result_type(a, b._sp_values)
    shape = (a.shape[0], b.shape[1])

    def product(d, v):
        contrib = d.to(dtype).index_select(1, rows) * v.to(dtype).unsqueeze(0)
        return ember.zeros(shape, dtype=dtype).index_add(1, cols, contrib)

    return _node(node, product, a, b._sp_values)


def _addmm(mat, mat1, mat2, *, beta=1, alpha=1, node="AddmmBackward0"):
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse, mat and mat2 dense."""
    if not _is_sparse(mat1) or _is_sparse(mat) or _is_sparse(mat2):
        raise _sparse_backend_error("addmm")
    _check_sparse_dense(mat1, mat2)
    dtype = ember.result_type(mat1._sp_values, mat2)
    shape = (mat1.shape[0], mat2.shape[1])

    def combined(m, v, d):
        return m * beta + _sparse_times_dense(mat1, v, d, dtype) * alpha

    return _node(node, combined, mat.expand(shape), mat1._sp_values, mat2)


def _mv(a, v):
    if not _is_sparse(a) or _is_sparse(v):
        raise _sparse_backend_error("mv")
    if v.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.dim()}, {v.dim()}")
    _check_sparse_dense(a, v.unsqueeze(1))  # mm's checks and errors
    dtype = ember.result_type(a._sp_values, v)
    return _node("MvBackward0", lambda vals, vec: _sparse_times_dense(a, vals, vec, dtype), a._sp_values, v)


def _sparse_softmax(input, dim, dtype, log):
    """torch.sparse.softmax / log_softmax of a COO tensor."""
    if not _is_sparse(input):
        raise RuntimeError("sparse softmax expects a sparse COO tensor")
    x = input.coalesce()
    d = dim % x.dim()
    vals = x._sp_values if dtype is None else x._sp_values.to(dtype)
    name = "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0"
    sd = x.sparse_dim()
    if d >= sd:  # along a dense dim: each value row on its own
        fn = ember.log_softmax if log else ember.softmax
        values = _node(name, lambda v: fn(v, d - sd + 1), vals)
        return _make(x._sp_indices, values, x.shape, True)
    keep = [k for k in range(sd) if k != d]
    group = ember.zeros(vals.shape[0], dtype=ember.int64)
    for k in keep:
        group = group * x.shape[k] + x._sp_indices[k]
    _, group = ember.unique(group, return_inverse=True)
    lanes = (int(group.max()) + 1 if group.numel() else 0,) + tuple(vals.shape[1:])

    def along(v):
        with warnings.catch_warnings():  # index_reduce's beta notice is not the user's
            warnings.simplefilter("ignore")
            top = ember.full(lanes, float("-inf"), dtype=v.dtype).index_reduce(0, group, v, "amax")
        shifted = v - top[group]
        total = ember.zeros(lanes, dtype=v.dtype).index_add(0, group, shifted.exp())
        return shifted - total.log()[group] if log else shifted.exp() / total[group]

    return _make(x._sp_indices, _node(name, along, vals), x.shape, True)


def _sparse_mask(self, mask):
    """dense.sparse_mask(sparse): self's values at mask's indices, in mask's pattern."""
    if not _is_sparse(mask):
        raise RuntimeError("sparse_mask expects mask to be a sparse COO tensor")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} but mask has size "
            f"{list(mask.shape)}"
        )
    where = tuple(mask._sp_indices)
    values = _node("SparseMaskBackward0", lambda t: t[where], self)
    return _make(mask._sp_indices, values, mask.shape, mask._sp_coalesced)


def _add(a, b, *, alpha=1, out=None):
    if out is not None:
        raise _sparse_backend_error("add.out")
    if _is_sparse(a) and not _is_sparse(b):
        if isinstance(b, ember.Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        raise _sparse_backend_error("add")
    if _is_sparse(a) and _is_sparse(b):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(a.shape)} while other has size {list(b.shape)} (FYI: dense-sparse addition "
                               "does not currently support broadcasting)")  # fmt: skip
        return _merge_add(a, b, alpha)
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"add: expected 'self' and 'other' to have same size, but self has size {list(a.shape)} while other "
            f"has size {list(b.shape)} (FYI: dense-sparse addition does not currently support broadcasting)"
        )
    dtype = ember.result_type(a, b._sp_values)
    where = tuple(b._sp_indices)

    def added(d, v):
        v = v.to(dtype) if alpha == 1 else v.to(dtype) * alpha
        out = d.to(dtype).clone()
        return out.index_put(where, v, accumulate=True) if v.shape[0] else out

    return _node("AddBackward0", added, a, b._sp_values)


def _linear_indices(t):
    idx = t._sp_indices
    linear = ember.zeros(idx.shape[1], dtype=ember.int64)
    for d in range(idx.shape[0]):
        linear = linear * t.shape[d] + idx[d]
    return linear.tolist()


def _merge_add(a, b, alpha):
    """Sparse + sparse as PyTorch: one merge pass over both index lists (in
    their stored order), equal indices met side by side summed."""
    dtype = ember.result_type(a._sp_values, b._sp_values)
    la, lb = _linear_indices(a), _linear_indices(b)
    take_a, take_b, rows = [], [], []  # per output entry: source row in a and/or b
    i = j = 0
    while i < len(la) or j < len(lb):
        if j >= len(lb) or (i < len(la) and la[i] < lb[j]):
            take_a.append(len(rows)), rows.append((0, i))
            i += 1
        elif i >= len(la) or lb[j] < la[i]:
            take_b.append(len(rows)), rows.append((1, j))
            j += 1
        else:
            take_a.append(len(rows)), take_b.append(len(rows)), rows.append((2, i, j))
            i, j = i + 1, j + 1
    index = ember.empty((a._sp_indices.shape[0], len(rows)), dtype=ember.int64)
    src_a = [r[1] for r in rows if r[0] in (0, 2)]
    src_b = [r[-1] for r in rows if r[0] in (1, 2)]
    if take_a:
        index[:, take_a] = a._sp_indices[:, src_a]
    if take_b:
        index[:, take_b] = b._sp_indices[:, src_b]

    def merged(va, vb):
        va, vb = va.to(dtype), vb.to(dtype) * alpha
        values = ember.zeros((len(rows),) + tuple(va.shape[1:]), dtype=dtype)
        if take_a:
            values = values.index_add(0, ember.tensor(take_a), va[src_a])
        if take_b:
            values = values.index_add(0, ember.tensor(take_b), vb[src_b])
        return values

    values = _node("AddBackward0", merged, a._sp_values, b._sp_values)
    return _make(index, values, a.shape, a._sp_coalesced and b._sp_coalesced)


def _mul(a, b):
    if _is_sparse(a) and _is_sparse(b):
        return (a.to_dense() * b.to_dense()).to_sparse()
    s, other = (a, b) if _is_sparse(a) else (b, a)
    if isinstance(other, ember.Tensor) and other.dim() > 0:
        raise _sparse_backend_error("mul")
    return _make(s._sp_indices, _node("MulBackward0", lambda v: v * other, s._sp_values), s.shape, s._sp_coalesced)


def _sum(self, dim=None, keepdim=False, dtype=None):
    if dim is None:
        vals = self._sp_values if dtype is None else self._sp_values.to(dtype)
        return vals.sum()
    return _sparse_sum(self, dim, dtype=dtype)


def _sparse_sum(input, dim=None, dtype=None):
    """torch.sparse.sum: over sparse dims the result stays sparse."""
    if dim is None:
        return _sum(input, dtype=dtype)
    dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [d % input.dim() for d in dims]
    kept_sparse = input.sparse_dim() - sum(1 for d in dims if d < input.sparse_dim())
    vals = input._sp_values if dtype is None else input._sp_values.to(dtype)

    def summed(v):
        return _make(input._sp_indices, v, input.shape, input._sp_coalesced).to_dense().sum(dim=dims)

    if kept_sparse == 0:
        return _node("SparseSumBackward0", summed, vals)
    # the entries are the input's index combinations over the kept sparse dims (zero sums included)
    kept = [d for d in range(input.sparse_dim()) if d not in dims]
    pattern = ember.unique(input._sp_indices[kept], dim=1)
    where = tuple(pattern)
    values = _node("SparseSumBackward0", lambda v: summed(v)[where], vals)
    shape = [n for d, n in enumerate(input.shape) if d not in dims]
    return _make(pattern, values, shape, True)


def _transpose(self, dim0, dim1, node="TransposeBackward0"):
    d0, d1 = dim0 % self.dim(), dim1 % self.dim()
    if d0 >= self.sparse_dim() or d1 >= self.sparse_dim():
        raise _sparse_backend_error("transpose")
    idx = self._sp_indices.clone()
    idx[[d0, d1]] = self._sp_indices[[d1, d0]]
    shape = list(self.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return _make(idx, _node(node, lambda v: v.clone(), self._sp_values), shape, False)


def _t(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got {self.dim()} "
                           "sparse and 0 dense dimensions")  # fmt: skip
    return self if self.dim() < 2 else _transpose(self, 0, 1, "TBackward0")


def _to(self, *args, **kwargs):
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    for a in args:
        if isinstance(a, ember.dtype):
            dtype = a
        elif isinstance(a, (str, ember.device)):
            device = a
        elif isinstance(a, ember.Tensor):
            dtype = a.dtype
    if device is not None and ember.device(device).type != "cpu":
        raise _sparse_backend_error("_to_copy")
    if dtype is None or dtype == self.dtype:
        return self
    return _make(self._sp_indices, self._sp_values.to(dtype), self.shape, self._sp_coalesced)


def _cast(dtype):
    return lambda self, *a, **k: _to(self, dtype)


def _clone(self, *, memory_format=None):
    return _make(self._sp_indices.clone(), self._sp_values.clone(), self.shape, self._sp_coalesced)


def _detach(self):
    return _make(self._sp_indices, self._sp_values.detach(), self.shape, self._sp_coalesced)


def _neg(self):
    return _make(self._sp_indices, _node("NegBackward0", lambda v: -v, self._sp_values), self.shape, self._sp_coalesced)


def _grad_get(self):
    """A sparse leaf's gradient: sparse, in its pattern, coalesced (as PyTorch accumulates it)."""
    g = self._sp_values.grad
    return None if g is None else _make(self._sp_indices, g, self.shape, False).coalesce()


def _requires_grad_get(self):
    return self._sp_values.requires_grad


def _dense_is_sparse(self):
    return False


def _check_to_dense_args(dtype, masked_grad):
    # The binding's argument types: dtype a torch.dtype, masked_grad a bool.
    import ember

    if dtype is not None and not isinstance(dtype, ember.dtype):
        raise TypeError(f"to_dense(): argument 'dtype' (position 1) must be torch.dtype, not {type(dtype).__name__}")
    if masked_grad is not None and not isinstance(masked_grad, bool):
        raise TypeError(f"to_dense(): argument 'masked_grad' must be bool, not {type(masked_grad).__name__}")


def _dense_to_dense(self, dtype=None, *, masked_grad=None):
    _check_to_dense_args(dtype, masked_grad)
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def _strided_only(name):
    def method(self, *args, **kwargs):
        # None of these takes arguments (PyTorch's binding checks that first).
        if args:
            raise TypeError(f"TensorBase.{name}() takes no arguments ({len(args)} given)")
        if kwargs:
            raise TypeError(f"TensorBase.{name}() takes no keyword arguments")
        if name.startswith("_"):
            raise _sparse_backend_error(name, "CPU")
        layout = "sparse tensor" if name == "values" else "sparse coordinate tensor"
        raise RuntimeError(f"{name} expected {layout} layout but got Strided")

    method.__name__ = name
    return method


def _dense_to_sparse_coo(self):
    # No arguments, as PyTorch's Python method.
    return self.to_sparse()


_dense_to_sparse_coo.__name__ = "to_sparse_coo"
_dense_to_sparse_coo.__qualname__ = "Tensor.to_sparse_coo"


def install_tensor_methods(cls) -> None:
    """The strided side of the layout: is_sparse, to_sparse, to_dense, and the
    sparse-only methods with PyTorch's errors for a strided tensor."""
    cls.is_sparse = property(_dense_is_sparse)
    cls.sparse_mask = _sparse_mask
    cls.to_sparse = _dense_to_sparse
    cls.to_sparse_coo = _dense_to_sparse_coo
    if "to_dense" not in vars(cls):
        cls.to_dense = _dense_to_dense
    cls.sparse_dim = lambda self: 0
    cls.dense_dim = lambda self: self.dim()
    for name in ("coalesce", "indices", "values", "_indices", "_values", "_nnz", "is_coalesced"):
        setattr(cls, name, _strided_only(name))


_HANDLERS: dict = {}


def _register(handler, *funcs):
    for f in funcs:
        _HANDLERS[f] = handler


def install_handlers() -> None:
    """What a SparseCOOTensor answers; after Tensor's properties are final."""
    T = ember.Tensor
    _register(lambda a, b, **k: _mm(a, b), ember.mm, T.mm, ember.spmm)
    _register(_addmm, ember.addmm, T.addmm)
    _register(lambda a, v, **k: _mv(a, v), ember.mv, T.mv)
    _register(lambda self: self._sp_values.grad_fn, T.grad_fn.__get__)
    _register(lambda self: self._sp_values.is_leaf, T.is_leaf.__get__)
    _register(_grad_get, T.grad.__get__)
    _register(lambda a, b, **k: _matmul(a, b), ember.matmul, T.matmul, T.__matmul__)
    _register(lambda b, a, **k: _matmul(a, b), T.__rmatmul__)
    _register(_add, ember.add, T.add, T.__add__)
    _register(lambda a, b, **k: _add(b, a, **k), T.__radd__)
    _register(_mul, ember.mul, T.mul, T.__mul__, T.__rmul__)
    _register(_neg, ember.neg, T.neg, T.__neg__)
    _register(_sum, ember.sum, T.sum)
    _register(_transpose, ember.transpose, T.transpose)
    _register(_t, ember.t, T.t)
    _register(_to, T.to)
    _register(_cast(ember.float32), T.float)
    _register(_cast(ember.float64), T.double)
    _register(_cast(ember.int64), T.long)
    _register(_cast(ember.int32), T.int)
    _register(_cast(ember.float16), T.half)
    _register(_cast(ember.bfloat16), T.bfloat16)
    _register(_clone, ember.clone, T.clone)
    _register(_detach, ember.detach, T.detach)
    _register(lambda self, *a, **k: self, T.cpu)
    _register(lambda self: sparse_coo, T.layout.__get__)
    _register(lambda self: True, T.is_sparse.__get__)
    _register(_requires_grad_get, T.requires_grad.__get__)
    _register(lambda self, *a, **k: SparseCOOTensor.to_dense(self, *a, **k), T.to_dense)
    _register(lambda self, *a, **k: self, T.to_sparse, T.to_sparse_coo)
    _register(SparseCOOTensor.__repr__, T.__repr__)
    _register(lambda self, *a, **k: _dense_values(self).tolist(), T.tolist)
