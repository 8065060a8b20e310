"""Sparse compressed tensors: the CSR, CSC, BSR and BSC layouts.

A SparseCompressedTensor holds compressed indices (batch dims, then one
entry per compressed row or column plus one), plain indices (batch dims,
then nnz) and values (batch dims, nnz, then the block's two dims for BSR/BSC,
then dense dims). Like ember/_sparse_coo.py's SparseCOOTensor it is an
ember.Tensor subclass whose strided part is one zero expanded to the full
size; what it supports arrives through __torch_function__ and is computed
from its three tensors with dense operators (autograd flows through the
values), except CSR times dense, which a C++ kernel computes
(ember._C._csr_dense_mm, src/ember/cpu/SparseCompressedOps.cpp) under an
autograd Function of its own."""

from __future__ import annotations

import ember
from ember import _C
from ember._layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from ember._sparse_coo import SparseCOOTensor, _layout_shell, _size_error, _sparse_backend_error

_MISSING = object()
_COMPRESSED = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
_ROW = (sparse_csr, sparse_bsr)  # compressed over rows
_BLOCK = (sparse_bsr, sparse_bsc)
# PyTorch's names of the layouts in its messages.
_TITLE = {strided: "Strided", sparse_coo: "Sparse", sparse_csr: "SparseCsr", sparse_csc: "SparseCsc",
          sparse_bsr: "SparseBsr", sparse_bsc: "SparseBsc"}  # fmt: skip
_BACKEND = "SparseCsrCPU"


def _layout_title(layout) -> str:
    return _TITLE.get(layout, str(layout))


def _layout_of(x):
    if isinstance(x, SparseCompressedTensor):
        return x._sc_layout
    if isinstance(x, SparseCOOTensor):
        return sparse_coo
    return strided


def _make(layout, cidx, pidx, values, size):
    from ember import sparse

    sparse._note_compressed_beta()
    t = _layout_shell(SparseCompressedTensor, values.dtype, size)
    t._sc_layout = layout
    t._sc_cidx = cidx
    t._sc_pidx = pidx
    t._sc_values = values
    # Note [Gradients of a compressed leaf]: a tensor made with requires_grad=True,
    # or whose requires_grad_() was called, owns its values as its leaf. Products
    # through mm/matmul/@/addmm give it PyTorch's dense gradient (_sc_dense_grad);
    # sparse.mm, to_dense and the values' own operators give values.grad (the
    # gradient on its pattern).
    t._sc_leaf = False
    t._sc_dense_grad = None
    return t


def _is_compressed(x) -> bool:
    return isinstance(x, SparseCompressedTensor)


class SparseCompressedTensor(ember.Tensor):
    """A tensor in one of the sparse compressed layouts (see the module docstring)."""

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
        if name in _LAYOUT_REFUSED or name.rstrip("_") in _LAYOUT_REFUSED:
            raise RuntimeError(f"unsupported tensor layout: {_layout_title(_first_compressed(args)._sc_layout)}")
        if name in _NO_IS_CONTIGUOUS or name in _NO_STRIDES:
            which = "is_contiguous" if name in _NO_IS_CONTIGUOUS else "strides"
            layout = _first_compressed(args)._sc_layout
            raise RuntimeError(f"Sparse {_layout_title(layout)[6:].upper()} tensors do not have {which}")
        raise _sparse_backend_error(name.strip("_") or "unknown", _BACKEND)

    # --- structure ---------------------------------------------------------
    @property
    def _sc_batch(self) -> int:
        return self._sc_cidx.dim() - 1

    def _blocksize(self):
        if self._sc_layout not in _BLOCK:
            return (1, 1)
        b = self._sc_batch
        return tuple(self._sc_values.shape[b + 1 : b + 3])

    # --- the layout's own methods --------------------------------------------
    def crow_indices(self):
        if self._sc_layout not in _ROW:
            raise RuntimeError(
                f"crow_indices expected sparse row compressed tensor layout but got {_layout_title(self._sc_layout)}"
            )
        return self._sc_cidx

    def col_indices(self):
        if self._sc_layout not in _ROW:
            raise RuntimeError(
                f"col_indices expected sparse row compressed tensor layout but got {_layout_title(self._sc_layout)}"
            )
        return self._sc_pidx

    def ccol_indices(self):
        if self._sc_layout in _ROW:
            raise RuntimeError(
                f"ccol_indices expected sparse column compressed tensor layout but got {_layout_title(self._sc_layout)}"
            )
        return self._sc_cidx

    def row_indices(self):
        if self._sc_layout in _ROW:
            raise RuntimeError(
                f"row_indices expected sparse column compressed tensor layout but got {_layout_title(self._sc_layout)}"
            )
        return self._sc_pidx

    def values(self):
        return self._sc_values

    def indices(self):
        raise RuntimeError(f"indices expected sparse coordinate tensor layout but got {_layout_title(self._sc_layout)}")

    _indices = indices

    def _values(self):
        raise _sparse_backend_error("_values", _BACKEND)

    def _nnz(self):
        return self._sc_pidx.shape[-1]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        extra = 2 if self._sc_layout in _BLOCK else 0
        return self._sc_values.dim() - self._sc_batch - 1 - extra

    def is_coalesced(self):
        raise _sparse_backend_error("is_coalesced", _BACKEND)

    def coalesce(self):
        raise RuntimeError(
            f"coalesce expected sparse coordinate tensor layout but got {_layout_title(self._sc_layout)}"
        )

    def to_dense(self, dtype=None, *, masked_grad=None):
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
        return _to_dense(self)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None and sparse_dim is None and blocksize is None and dense_dim is None:
            layout = sparse_coo
        if sparse_dim is not None:
            if sparse_dim != 2:
                raise RuntimeError(
                    f"sparse_compressed_to_sparse: conversion from {_layout_title(self._sc_layout)} to Sparse with "
                    "sparse_dim argument !=2 is not supported"
                )
            layout = sparse_coo
        if layout == sparse_coo:
            return _to_coo(self)
        if layout in _BLOCK and blocksize is None:
            raise RuntimeError(
                f"sparse_compressed_to_sparse: conversion from {_layout_title(self._sc_layout)} to "
                f"{_layout_title(layout)} without blocksize argument given is not supported"
            )
        return _convert(self, layout, blocksize, dense_dim, "to_sparse")

    def to_sparse_coo(self):
        return _to_coo(self)

    def to_sparse_csr(self, dense_dim=None):
        return _convert(self, sparse_csr, None, dense_dim, "to_sparse_csr")

    def to_sparse_csc(self, dense_dim=None):
        return _convert(self, sparse_csc, None, dense_dim, "to_sparse_csc")

    def to_sparse_bsr(self, blocksize=_MISSING, dense_dim=None):
        if blocksize is _MISSING:
            raise TypeError('to_sparse_bsr() missing 1 required positional arguments: "blocksize"')
        return _convert(self, sparse_bsr, blocksize, dense_dim, "to_sparse_bsr")

    def to_sparse_bsc(self, blocksize=_MISSING, dense_dim=None):
        if blocksize is _MISSING:
            raise TypeError('to_sparse_bsc() missing 1 required positional arguments: "blocksize"')
        return _convert(self, sparse_bsc, blocksize, dense_dim, "to_sparse_bsc")

    def t_(self):
        raise RuntimeError(
            f"torch.transpose_: in-place transposition is not supported for {_layout_title(self._sc_layout)} layout"
        )

    def transpose_(self, dim0, dim1):
        return self.t_()

    def stride(self, dim=None):
        raise RuntimeError(f"Sparse {_layout_title(self._sc_layout)[6:].upper()} tensors do not have strides")

    def is_contiguous(self, memory_format=None):
        raise RuntimeError(f"Sparse {_layout_title(self._sc_layout)[6:].upper()} tensors do not have is_contiguous")

    def resize_as_sparse_(self, the_template):
        from ember._sparse_legacy import resize_as_sparse_

        return resize_as_sparse_(self, the_template)

    def __repr__(self, *, tensor_contents=None):
        return _compressed_str(self)

    __str__ = __repr__

    def __format__(self, spec):
        return _compressed_str(self) if not spec else format(str(self), spec)

    def __len__(self):
        return self.shape[0]

    def __reduce_ex__(self, protocol):
        return _reduce(self)


# Methods that only read metadata, answered by the strided part.
_METADATA = frozenset(
    {"dim", "size", "numel", "nelement", "element_size", "is_floating_point", "is_complex", "get_device", "ndimension"}
)
# Shape functions that PyTorch's compressed tensors refuse by their missing strides.
_NO_IS_CONTIGUOUS = frozenset("reshape flatten cat concat concatenate view_as ravel".split())
_NO_STRIDES = frozenset("unsqueeze narrow squeeze expand permute movedim unflatten".split())
# Pointwise functions PyTorch refuses on these layouts with its layout error
# (they do not keep zeros).
_LAYOUT_REFUSED = frozenset(
    "acos acosh cos cosh digamma erfc exp exp2 lgamma log log10 log2 reciprocal rsqrt sigmoid sinc square div "
    "true_divide sub subtract __truediv__ __rtruediv__ __sub__ __rsub__ __isub__ __itruediv__ pow __pow__ "
    "__rpow__ eq ne lt le gt ge __eq__ __ne__ __lt__ __le__ __gt__ __ge__ float_power".split()
)


def _first_compressed(args):
    for a in args:
        if _is_compressed(a):
            return a
        if isinstance(a, (list, tuple)):
            for b in a:
                if _is_compressed(b):
                    return b
    raise AssertionError("internal error: no compressed tensor among the arguments; this is a bug")


# --- printing -------------------------------------------------------------------


def _compressed_str(t) -> str:
    from ember import _tensor_str as ts

    prefix = "tensor("
    indent = len(prefix)
    row = t._sc_layout in _ROW
    cname, pname = ("crow", "col") if row else ("ccol", "row")
    parts = []
    for label, x in ((f"{cname}_indices=tensor(", t._sc_cidx), (f"{pname}_indices=tensor(", t._sc_pidx),
                     ("values=tensor(", t._sc_values)):  # fmt: skip
        x = x.detach()
        body = ts._body(x, indent + len(label))
        if x.numel() == 0:
            body += f", size={tuple(x.shape)}"
        parts.append(label + body + ")")
    body = prefix + (",\n" + " " * indent).join(parts)
    default = ember.get_default_dtype()
    default_complex = ember.complex128 if default == ember.float64 else ember.complex64
    suffixes = [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if t.dtype not in (default, default_complex, ember.int64, ember.bool):
        suffixes.append(f"dtype={t.dtype}")
    suffixes.append(f"layout={t._sc_layout}")
    if t._sc_values.requires_grad:
        suffixes += ts._history_suffixes(t._sc_values)
    return ts._add_suffixes(body, suffixes, indent)


# --- construction ------------------------------------------------------------------


def _check_invariants_default(check_invariants):
    if check_invariants is not None:
        return bool(check_invariants)
    from ember import sparse

    return sparse.check_sparse_tensor_invariants.is_enabled()


def _as_index(x):
    if isinstance(x, ember.Tensor):
        return x
    return ember.as_tensor(x)


def sparse_compressed_tensor(
    compressed_indices,
    plain_indices,
    values,
    size=None,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
):
    """A tensor in a sparse compressed layout (``layout=``: sparse_csr,
    sparse_csc, sparse_bsr or sparse_bsc) from its compressed indices, plain
    indices and values; without ``size`` the smallest size that holds them."""
    if layout not in _COMPRESSED:
        got = "none" if layout is None else _layout_title(layout)
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got {got}")
    return _build(layout, compressed_indices, plain_indices, values, size, dtype, device, requires_grad,
                  check_invariants)  # fmt: skip


def _build(layout, cidx, pidx, values, size, dtype, device, requires_grad, check_invariants):
    from ember import sparse

    sparse._note_invariant_checks(check_invariants)
    if device is not None and ember.device(device).type != "cpu":
        raise _sparse_backend_error("_sparse_compressed_tensor_unsafe", "SparseCsr" + ember.device(device).type.upper())
    # values first, then the indices: PyTorch's order of conversion errors
    values = ember.as_tensor(values, dtype=dtype)
    cidx, pidx = _as_index(cidx), _as_index(pidx)
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    row = layout in _ROW
    cname, pname = ("crow_indices", "col_indices") if row else ("ccol_indices", "row_indices")
    if cidx.dim() < 1:
        raise RuntimeError(f"{cname} must have dimensionality >= 1 but got {cidx.dim()}")
    nbatch = cidx.dim() - 1
    block = (1, 1)
    extra = 0
    if layout in _BLOCK:
        extra = 2
        if values.dim() < nbatch + 3:
            raise RuntimeError(
                f"values must have dimensionality > sum of batch and block dimensionalities (={nbatch} + 2) but "
                f"got {values.dim()}"
            )
        block = tuple(values.shape[nbatch + 1 : nbatch + 3])
    dense_shape = tuple(values.shape[nbatch + 1 + extra :])
    if size is None:
        # PyTorch's checks of the parts it infers the size from
        if cidx.dim() != pidx.dim():
            raise RuntimeError(
                f"{cname} and {pname} dimensionalities must be equal but got {cidx.dim()} and {pidx.dim()}, "
                "respectively"
            )
        if values.dim() < nbatch + 1 + extra:
            raise RuntimeError(
                "values must have dimensionality > sum of batch and block dimensionalities "
                f"(={nbatch} + {extra}) but got {values.dim()}"
            )
        if pidx.dtype not in (ember.int32, ember.int64):
            raise NotImplementedError(
                f"\"estimate_sparse_compressed_tensor_size\" not implemented for '{_dtype_title(pidx.dtype)}'"
            )
        ncomp = max(cidx.shape[-1] - 1, 0)
        nplain = int(pidx.max()) + 1 if pidx.numel() else 0
        base = (ncomp * block[0], nplain * block[1]) if row else (nplain * block[0], ncomp * block[1])
        size = tuple(cidx.shape[:-1]) + base + dense_shape
    size = tuple(int(s) for s in size)
    if _check_invariants_default(check_invariants):
        _validate(layout, cidx, pidx, values, size, nbatch, block, dense_shape, cname, pname)
    if requires_grad:
        if not (values.dtype.is_floating_point or values.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        values = values.detach().requires_grad_(True)
    out = _make(layout, cidx, pidx, values, size)
    out._sc_leaf = bool(requires_grad)
    return out


def _validate(layout, cidx, pidx, values, size, nbatch, block, dense_shape, cname, pname):
    """PyTorch's checks of the compressed layouts' invariants, in its order."""
    if cidx.dtype != pidx.dtype:
        raise RuntimeError(
            f"{cname} and {pname} must have the same dtype, bot got {_dtype_title(cidx.dtype)} and "
            f"{_dtype_title(pidx.dtype)}, respectively"
        )
    if cidx.dtype not in (ember.int32, ember.int64):
        raise RuntimeError(f"{cname} and {pname} dtype must be Int or Long, but got {_dtype_title(cidx.dtype)}")
    if cidx.dim() != pidx.dim():
        raise RuntimeError(
            f"{cname} and {pname} dimensionalities must be equal but got {cidx.dim()} and {pidx.dim()}, respectively"
        )
    extra = 2 if layout in _BLOCK else 0
    if len(size) != nbatch + 2 + len(dense_shape):
        raise RuntimeError(
            f"tensor dimensionality must be sum of batch, base, and dense dimensionalities (={nbatch} + 2 + "
            f"{len(dense_shape)}) but got {len(size)}"
        )
    row = layout in _ROW
    if layout in _BLOCK:
        for d in (0, 1):
            if size[nbatch + d] % block[d]:
                raise RuntimeError(
                    f"tensor shape[{nbatch + d}] (={size[nbatch + d]}) must be divisible with blocksize[{d}] "
                    f"(={block[d]}) as defined by values shape"
                )
    nnz = values.shape[nbatch] if values.dim() > nbatch else 0
    if pidx.shape[-1] != nnz:
        raise RuntimeError(
            f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[{nbatch}], but got "
            f"{pidx.shape[-1]}"
        )
    ncomp = size[nbatch] // block[0] if row else size[nbatch + 1] // block[1]
    nplain = size[nbatch + 1] // block[1] if row else size[nbatch] // block[0]
    what = "rows" if row else "columns"
    short_what = "rows" if row else "cols"
    if cidx.shape[-1] != ncomp + 1:
        raise RuntimeError(
            f"{cname}.shape[-1] must be equal to the number of {what} + 1 (={ncomp + 1}), but got {cidx.shape[-1]}"
        )
    del extra
    c = cidx.to(ember.int64).reshape(-1, cidx.shape[-1])
    p = pidx.to(ember.int64).reshape(-1, pidx.shape[-1])
    if c.numel() and bool((c[:, 0] != 0).any()):
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if c.numel() and bool((c[:, -1] != nnz).any()):
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    steps = c[:, 1:] - c[:, :-1]
    if steps.numel() and bool(((steps < 0) | (steps > nplain)).any()):
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= n{pname[:3]}s` is not satisfied.")
    if p.numel() and bool(((p < 0) | (p >= nplain)).any()):
        raise RuntimeError(f"`0 <= {pname} < n{pname[:3]}s` is not satisfied.")
    for b in range(c.shape[0]):
        bounds = c[b].tolist()
        line = p[b].tolist()
        for i in range(1, len(bounds)):
            seg = line[bounds[i - 1] : bounds[i]]
            if any(seg[k] >= seg[k + 1] for k in range(len(seg) - 1)):
                raise RuntimeError(
                    f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., n{short_what} are "
                    "sorted and distinct along the last dimension values` is not satisfied."
                )


def _dtype_title(dt) -> str:
    from ember._ops_math import _scalar_name

    return _scalar_name(dt)


def _factory(layout, name):
    cname, pname = ("crow_indices", "col_indices") if layout in _ROW else ("ccol_indices", "row_indices")

    def factory(*args, size=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False,
                check_invariants=None, **kwargs):  # fmt: skip
        if layout is not None and layout != factory._layout:
            raise RuntimeError(
                f"{name}: layout must be {_layout_title(factory._layout)} but got {_layout_title(layout)}"
            )
        parts = list(args)
        for key in (cname, pname, "values"):
            if key in kwargs:
                parts.append(kwargs.pop(key))
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if len(parts) == 4:
            parts, size = parts[:3], parts[3]
        cidx, pidx, values = parts
        return _build(factory._layout, cidx, pidx, values, size, dtype, device, requires_grad, check_invariants)

    factory._layout = layout
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"A tensor in the {layout} layout from its {cname}, {pname} and values (see sparse_compressed_tensor)."
    )
    return factory


sparse_csr_tensor = _factory(sparse_csr, "sparse_csr_tensor")
sparse_csc_tensor = _factory(sparse_csc, "sparse_csc_tensor")
sparse_bsr_tensor = _factory(sparse_bsr, "sparse_bsr_tensor")
sparse_bsc_tensor = _factory(sparse_bsc, "sparse_bsc_tensor")


# --- conversions -------------------------------------------------------------------


def _blocked_view(dense, nbatch, block):
    """batch + (R, C) + dense  ->  batch + (R/bh, C/bw, bh, bw) + dense."""
    shape = tuple(dense.shape)
    r, c = shape[nbatch], shape[nbatch + 1]
    bh, bw = block
    x = dense.reshape(shape[:nbatch] + (r // bh, bh, c // bw, bw) + shape[nbatch + 2 :])
    order = list(range(nbatch)) + [nbatch, nbatch + 2, nbatch + 1, nbatch + 3]
    order += list(range(nbatch + 4, x.dim()))
    return x.permute(order)


def _from_dense(x, layout, blocksize, dense_dim, name):
    """Strided -> compressed, as PyTorch's dense_to_sparse_{csr,csc,bsr,bsc}."""
    short = _layout_title(layout)[6:].lower()
    given = dense_dim is not None
    dense_dim = 0 if dense_dim is None else dense_dim
    if layout in _BLOCK:
        # The block's dims are read first: an IndexError for too few dims.
        for dim in (-2 - dense_dim, -1 - dense_dim):
            if x.dim() == 0 or not -x.dim() <= dim < x.dim():
                raise _size_error(x, dim)
    if (given or x.dim() >= 2) and not 0 <= dense_dim <= x.dim() - 2:
        raise RuntimeError(
            f"dense_to_sparse_{short}: dense_dim argument must be in [0,{x.dim() - 2}] range, but {dense_dim} is given"
        )
    if x.dim() < 2:
        # PyTorch reads the column of a vector's (or scalar's) nonzero indices.
        if layout == sparse_csr:
            rows = int(ember.count_nonzero(x)) if x.numel() else 0
            raise IndexError(f"select(): index 1 out of range for tensor of size [{rows}, {x.dim()}] at dimension 1")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    nbatch = x.dim() - 2 - dense_dim
    block = (1, 1)
    if layout in _BLOCK:
        block = tuple(int(b) for b in ((blocksize, blocksize) if isinstance(blocksize, int) else blocksize))
        r, c = x.shape[nbatch], x.shape[nbatch + 1]
        if r % block[0] or c % block[1]:
            raise RuntimeError(
                f"dense_to_sparse_{short}: tensor sparse size ({r},{c}) must be divisible by given blocksize "
                f"({block[0]},{block[1]})"
            )
        elements = _blocked_view(x, nbatch, block)  # batch + (Rb, Cb) + block + dense
    else:
        elements = x
    if layout not in _ROW:
        elements = elements.transpose(nbatch, nbatch + 1)  # batch + (plain-major: Cb, Rb) + ...
    head = tuple(elements.shape[: nbatch + 2])
    flat = elements.reshape(head + (_prod(elements.shape[nbatch + 2 :]),))
    mask = (flat != 0).any(dim=-1) if flat.shape[-1] != 1 else flat[..., 0] != 0
    if flat.shape[-1] == 0:
        mask = ember.zeros(head, dtype=ember.bool)
    lines = mask.reshape((_prod(head[:nbatch]),) + head[nbatch:])
    counts = lines.sum(dim=(1, 2)) if lines.shape[0] else ember.zeros(0, dtype=ember.int64)
    if nbatch and counts.numel() and bool((counts != counts[0]).any()):
        raise RuntimeError("Expect the same number of specified elements per batch.")
    nz = mask.nonzero()  # rows: batch..., compressed, plain (lexicographic)
    nnz = int(counts[0]) if counts.numel() else 0
    per_line = mask.sum(dim=-1)  # batch + (ncomp,)
    zero = ember.zeros(head[:nbatch] + (1,), dtype=ember.int64)
    cidx = ember.cat([zero, per_line.cumsum(-1)], dim=-1)
    pidx = nz[:, -1].reshape(head[:nbatch] + (nnz,)).contiguous()
    values = elements[tuple(nz.t())]
    values = values.reshape(head[:nbatch] + (nnz,) + tuple(values.shape[1:]))
    return _make(layout, cidx, pidx, values, tuple(x.shape))


def _expand_compressed(cidx, nnz):
    """For every stored entry its compressed index (batch-flattened cidx rows)."""
    counts = cidx[..., 1:] - cidx[..., :-1]
    ncomp = counts.shape[-1]
    ids = ember.arange(ncomp).expand(counts.shape).reshape(-1)
    return ember.repeat_interleave(ids, counts.reshape(-1)).reshape(tuple(cidx.shape[:-1]) + (nnz,))


def _coords(t):
    """(batch index columns, compressed, plain) per stored entry, each
    batch-shape + (nnz,), int64."""
    nnz = t._nnz()
    comp = _expand_compressed(t._sc_cidx.to(ember.int64), nnz)
    return comp, t._sc_pidx.to(ember.int64)


def _to_dense(t):
    if t.dtype.is_complex:  # no complex index_put: the real and imaginary parts apart
        real = _same_structure(t, t._sc_values.real.contiguous())
        imag = _same_structure(t, t._sc_values.imag.contiguous())
        return ember.complex(_to_dense(real), _to_dense(imag))
    nbatch = t._sc_batch
    block = t._blocksize()
    row = t._sc_layout in _ROW
    shape = tuple(t.shape)
    r, c = shape[nbatch] // block[0], shape[nbatch + 1] // block[1]
    comp, plain = _coords(t)
    rows, cols = (comp, plain) if row else (plain, comp)
    values = t._sc_values
    if t._sc_layout in _BLOCK:
        target = shape[:nbatch] + (r, c) + block + shape[nbatch + 2 :]
    else:
        target = shape
    out = ember.zeros(target, dtype=values.dtype)
    if t._nnz():
        nnz = t._nnz()
        bidx = [
            ember.arange(shape[d]).reshape((-1,) + (1,) * (nbatch - d)).expand(shape[:nbatch] + (nnz,)).reshape(-1)
            for d in range(nbatch)
        ]
        index = tuple(bidx) + (rows.reshape(-1), cols.reshape(-1))
        flat_values = values.reshape((-1,) + tuple(values.shape[nbatch + 1 :]))
        out = out.index_put(index, flat_values, accumulate=True)
    if t._sc_layout in _BLOCK:
        order = list(range(nbatch)) + [nbatch, nbatch + 2, nbatch + 1, nbatch + 3] + list(range(nbatch + 4, out.dim()))
        out = out.permute(order).reshape(shape)
    return out


def _to_coo(t):
    from ember._sparse_coo import _make as coo_make

    nbatch = t._sc_batch
    if t._sc_layout in _BLOCK and nbatch:
        return _to_dense(t).to_sparse(2 + nbatch)
    comp, plain = _coords(t)
    row = t._sc_layout in _ROW
    rows, cols = (comp, plain) if row else (plain, comp)
    nnz = t._nnz()
    shape = tuple(t.shape)
    if t._sc_layout in _BLOCK:
        # every element of every stored block, block by block, row-major within a block
        bh, bw = t._blocksize()
        i = ember.arange(bh).repeat_interleave(bw)
        j = ember.arange(bw).repeat(bh)
        erows = (rows.unsqueeze(1) * bh + i).reshape(-1)
        ecols = (cols.unsqueeze(1) * bw + j).reshape(-1)
        values = t._sc_values.reshape((nnz * bh * bw,) + tuple(t._sc_values.shape[3:]))
        return coo_make(ember.stack([erows, ecols]), values, shape, False)
    bidx = [
        ember.arange(shape[d]).reshape((-1,) + (1,) * (nbatch - d)).expand(shape[:nbatch] + (nnz,)).reshape(-1)
        for d in range(nbatch)
    ]
    indices = ember.stack(bidx + [rows.reshape(-1), cols.reshape(-1)]) if nnz * max(1, len(bidx)) else (
        ember.zeros((nbatch + 2, 0), dtype=ember.int64))  # fmt: skip
    values = t._sc_values.reshape((-1,) + tuple(t._sc_values.shape[nbatch + 1 :]))
    return coo_make(indices, values, shape, row)


def _coo_to_compressed(s, layout):
    """COO (two sparse dims, or batch sparse dims first) -> CSR/CSC."""
    if s.sparse_dim() != 2:
        raise RuntimeError(
            f"coo_to_sparse_{_layout_title(layout)[6:].lower()}: conversion from Sparse to {_layout_title(layout)} "
            "for input tensors with sparse_dim()!=2 is not supported"
        )
    s = s.coalesce()
    if s.sparse_dim() < 2:
        raise RuntimeError(f"sparse_coo_to_sparse_{_layout_title(layout)[6:].lower()}: expected at least 2 sparse dims")
    nbatch = s.sparse_dim() - 2
    idx = s._sp_indices
    shape = tuple(s.shape)
    row = layout in _ROW
    comp, plain = (idx[nbatch], idx[nbatch + 1]) if row else (idx[nbatch + 1], idx[nbatch])
    ncomp, nplain = (shape[nbatch], shape[nbatch + 1]) if row else (shape[nbatch + 1], shape[nbatch])
    key = comp * nplain + plain
    for d in reversed(range(nbatch)):
        key = key + idx[d] * (ncomp * nplain * _prod(shape[d + 1 : nbatch]))
    order = ember.sort(key, stable=True).indices
    values = s._sp_values[order]
    nb = _prod(shape[:nbatch])
    nnz = idx.shape[1]
    if nbatch:
        bflat = ember.zeros(nnz, dtype=ember.int64)
        for d in range(nbatch):
            bflat = bflat * shape[d] + idx[d]
        per = ember.bincount(bflat, minlength=nb)
        if nb and bool((per != per[0]).any()):
            raise RuntimeError("Expect the same number of specified elements per batch.")
        nnz = int(per[0]) if nb else 0
        bsorted = bflat[order]
    else:
        bsorted = ember.zeros(nnz, dtype=ember.int64)
    line = bsorted * ncomp + comp[order]
    counts = ember.bincount(line, minlength=nb * ncomp).reshape(nb, ncomp)
    cidx = ember.cat([ember.zeros((nb, 1), dtype=ember.int64), counts.cumsum(-1)], dim=-1)
    cidx = cidx.reshape(shape[:nbatch] + (ncomp + 1,))
    pidx = plain[order].reshape(shape[:nbatch] + (nnz,))
    values = values.reshape(shape[:nbatch] + (nnz,) + tuple(values.shape[1:]))
    return _make(layout, cidx, pidx, values, shape)


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def _transpose_compressed(t, target):
    """CSR <-> CSC (or BSR <-> BSC) of the same matrix: entries re-sorted by
    the other index, the values gathered (autograd flows through them)."""
    nbatch = t._sc_batch
    if nbatch:
        parts = [_transpose_compressed(_batch_item(t, b), target) for b in range(_prod(t.shape[:nbatch]))]
        return _stack_compressed(parts, target, tuple(t.shape))
    comp, plain = _coords(t)
    nplain = t._sc_cidx.shape[-1] - 1  # the old compressed count becomes the new plain extent
    shape = tuple(t.shape)
    block = t._blocksize()
    new_ncomp = (shape[1] // block[1]) if t._sc_layout in _ROW else (shape[0] // block[0])
    key = plain * max(nplain, 1) + comp
    order = ember.sort(key, stable=True).indices
    counts = ember.bincount(plain, minlength=new_ncomp) if t._nnz() else ember.zeros(new_ncomp, dtype=ember.int64)
    cidx = ember.cat([ember.zeros(1, dtype=ember.int64), counts.cumsum(0)]).to(t._sc_cidx.dtype)
    pidx = comp[order].to(t._sc_pidx.dtype)
    return _make(target, cidx, pidx, t._sc_values[order], shape)


def _batch_item(t, b):
    nbatch = t._sc_batch
    bshape = tuple(t.shape[:nbatch])
    cidx = t._sc_cidx.reshape((-1,) + tuple(t._sc_cidx.shape[nbatch:]))[b]
    pidx = t._sc_pidx.reshape((-1,) + tuple(t._sc_pidx.shape[nbatch:]))[b]
    values = t._sc_values.reshape((-1,) + tuple(t._sc_values.shape[nbatch:]))[b]
    del bshape
    return _make(t._sc_layout, cidx, pidx, values, tuple(t.shape[nbatch:]))


def _stack_compressed(parts, layout, shape):
    nbatch = len(shape) - parts[0].dim()
    bshape = tuple(shape[:nbatch])
    cidx = ember.stack([p._sc_cidx for p in parts]).reshape(bshape + tuple(parts[0]._sc_cidx.shape))
    pidx = ember.stack([p._sc_pidx for p in parts]).reshape(bshape + tuple(parts[0]._sc_pidx.shape))
    values = ember.stack([p._sc_values for p in parts]).reshape(bshape + tuple(parts[0]._sc_values.shape))
    base = tuple(parts[0].shape)
    return _make(layout, cidx, pidx, values, bshape + base)


def _normal_blocksize(blocksize):
    if blocksize is None:
        return None
    return tuple(int(b) for b in ((blocksize, blocksize) if isinstance(blocksize, int) else blocksize))


def _convert(t, layout, blocksize, dense_dim, name):
    """Compressed -> compressed, with PyTorch's refusals."""
    src = t._sc_layout
    blocksize = _normal_blocksize(blocksize)
    if dense_dim is not None:
        raise RuntimeError(
            f"{name}: conversion from {_layout_title(src)} to {_layout_title(layout)} with dense_dim argument given "
            "is not supported"
        )
    if layout in (sparse_csr, sparse_csc):
        if src in _BLOCK:
            raise RuntimeError(
                f"sparse_compressed_to_sparse_{_layout_title(layout)[6:].lower()}: expected SparseCsr or SparseCsc "
                f"layout but got {_layout_title(src)}"
            )
        return t if src == layout else _transpose_compressed(t, layout)
    # block targets
    if src in _BLOCK:
        if blocksize != t._blocksize():
            raise RuntimeError(
                f"{name}: conversion from {_layout_title(src)} to {_layout_title(layout)} with blocksize changed from "
                f"{list(t._blocksize())} to {list(blocksize)} is not supported"
            )
        return t if src == layout else _transpose_compressed(t, layout)
    return _from_dense(_to_dense(t), layout, blocksize, t.dense_dim() or None, name)


# --- the strided and COO sides --------------------------------------------------------


def _strided_to_sparse(orig):
    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout == sparse_coo:
            if blocksize is not None:
                raise RuntimeError(
                    "dense_to_sparse: conversion from Strided to Sparse with blocksize argument given is not supported"
                )
            return orig(self, sparse_dim) if sparse_dim is not None else orig(self)
        if layout in (sparse_csr, sparse_csc) and blocksize is not None:
            raise RuntimeError(
                f"dense_to_sparse: conversion from Strided to {_layout_title(layout)} with blocksize argument given "
                "is not supported"
            )
        if layout in _BLOCK and blocksize is None:
            raise RuntimeError(
                f"dense_to_sparse: conversion from Strided to {_layout_title(layout)} without blocksize argument "
                "given is not supported"
            )
        return _from_dense(self, layout, _normal_blocksize(blocksize), dense_dim, "to_sparse")

    to_sparse.__name__ = "to_sparse"
    return to_sparse


def _coo_dense_dim_refused(layout, dense_dim):
    if dense_dim is not None:
        raise RuntimeError(
            f"coo_to_sparse_{_layout_title(layout)[6:].lower()}: conversion from Sparse to {_layout_title(layout)} "
            "with dense_dim argument given is not supported"
        )


def _dense_to_csr(self, dense_dim=None):
    if isinstance(self, SparseCOOTensor):
        _coo_dense_dim_refused(sparse_csr, dense_dim)
        return _coo_to_compressed(self, sparse_csr)
    return _from_dense(self, sparse_csr, None, dense_dim, "to_sparse_csr")


def _dense_to_csc(self, dense_dim=None):
    if isinstance(self, SparseCOOTensor):
        _coo_dense_dim_refused(sparse_csc, dense_dim)
        return _coo_to_compressed(self, sparse_csc)
    return _from_dense(self, sparse_csc, None, dense_dim, "to_sparse_csc")


def _dense_to_bsr(self, blocksize=_MISSING, dense_dim=None):
    if blocksize is _MISSING:
        raise TypeError('to_sparse_bsr() missing 1 required positional arguments: "blocksize"')
    if isinstance(self, SparseCOOTensor):
        return _from_dense(self.to_dense(), sparse_bsr, _normal_blocksize(blocksize), dense_dim, "to_sparse_bsr")
    return _from_dense(self, sparse_bsr, _normal_blocksize(blocksize), dense_dim, "to_sparse_bsr")


def _dense_to_bsc(self, blocksize=_MISSING, dense_dim=None):
    if blocksize is _MISSING:
        raise TypeError('to_sparse_bsc() missing 1 required positional arguments: "blocksize"')
    if isinstance(self, SparseCOOTensor):
        return _from_dense(self.to_dense(), sparse_bsc, _normal_blocksize(blocksize), dense_dim, "to_sparse_bsc")
    return _from_dense(self, sparse_bsc, _normal_blocksize(blocksize), dense_dim, "to_sparse_bsc")


def _strided_only(name, kind):
    def method(self, *args, **kwargs):
        if args:
            raise TypeError(f"TensorBase.{name}() takes no arguments ({len(args)} given)")
        layout = _layout_title(sparse_coo if isinstance(self, SparseCOOTensor) else strided)
        raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {layout}")

    method.__name__ = name
    return method


def install_tensor_methods(cls) -> None:
    """The strided side: is_sparse_csr, to_sparse_{csr,csc,bsr,bsc},
    to_sparse(layout=...), and the compressed-only accessors with PyTorch's
    errors."""
    cls.is_sparse_csr = property(lambda self: False)
    cls.to_sparse = _strided_to_sparse(cls.to_sparse)
    cls.to_sparse_csr = _dense_to_csr
    cls.to_sparse_csc = _dense_to_csc
    cls.to_sparse_bsr = _dense_to_bsr
    cls.to_sparse_bsc = _dense_to_bsc
    for name in ("crow_indices", "col_indices"):
        setattr(cls, name, _strided_only(name, "row"))
    for name in ("ccol_indices", "row_indices"):
        setattr(cls, name, _strided_only(name, "column"))
    from ember import _sparse_legacy as legacy

    cls.resize_as_sparse_ = lambda self, the_template: legacy.resize_as_sparse_(self, the_template)
    cls.smm = lambda self, mat2: legacy.smm(self, mat2)
    cls.sspaddmm = lambda self, mat1, mat2, *, beta=1, alpha=1: legacy.sspaddmm(
        self, mat1, mat2, beta=beta, alpha=alpha
    )
    # COO tensors convert to the compressed layouts too.
    coo_to_sparse = SparseCOOTensor.to_sparse

    def coo_to_sparse_layout(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout in (sparse_csr, sparse_csc):
            return _coo_to_compressed(self, layout)
        if layout in _BLOCK:
            return _from_dense(self.to_dense(), layout, _normal_blocksize(blocksize), dense_dim, "to_sparse")
        return coo_to_sparse(self, sparse_dim)

    SparseCOOTensor.to_sparse = coo_to_sparse_layout
    from ember import _argtypes

    for m in ("to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"):
        setattr(SparseCOOTensor, m, getattr(cls, m))
        # A strided tensor's: PyTorch's argument parser first (int[2] blocksize, int? dense_dim).
        setattr(cls, m, _argtypes.checked_method(getattr(cls, m), m))


# --- products -------------------------------------------------------------------------


class _LeafDenseGradMM(ember.autograd.Function):
    """A compressed leaf times dense through mm/matmul/addmm: the leaf's
    gradient is PyTorch's dense one, grad @ dense^T, kept on the leaf (see
    Note [Gradients of a compressed leaf]); dense's as _CsrDenseMM's."""

    @staticmethod
    def forward(ctx, values, dense, holder):
        # holder: (the leaf, its matrix as CSR, whether the leaf is that matrix's transpose)
        ctx.leaf, ctx.csr, ctx.transposed = holder
        csr = ctx.csr
        ctx.save_for_backward(dense)
        return _C._csr_dense_mm(csr._sc_cidx, csr._sc_pidx, csr._sc_values.detach().contiguous(), dense)

    @staticmethod
    def backward(ctx, grad):
        (dense,) = ctx.saved_tensors
        grad = grad.contiguous()
        grad_dense = None
        if ctx.needs_input_grad[0]:
            g = grad @ dense.t()
            if ctx.transposed:
                g = g.t().contiguous()
            leaf = ctx.leaf
            leaf._sc_dense_grad = g if leaf._sc_dense_grad is None else leaf._sc_dense_grad + g
        if ctx.needs_input_grad[1]:
            csr = ctx.csr
            tt = _transpose_compressed(_same_structure(csr, csr._sc_values.detach()), sparse_csc)
            grad_dense = _C._csr_dense_mm(tt._sc_cidx, tt._sc_pidx, tt._sc_values.contiguous(), grad)
        return None, grad_dense, None, None


class _CsrDenseMM(ember.autograd.Function):
    """values (of a CSR matrix with the given indices) times dense, with the
    gradients of both: a sampled dot product for the values, the transposed
    matrix times the incoming gradient for dense."""

    @staticmethod
    def forward(ctx, crow, col, values, dense, ncols):
        ctx.save_for_backward(crow, col, values, dense)
        ctx.ncols = ncols
        return _C._csr_dense_mm(crow, col, values, dense)

    @staticmethod
    def backward(ctx, grad):
        crow, col, values, dense = ctx.saved_tensors
        grad = grad.contiguous()
        grad_values = grad_dense = None
        if ctx.needs_input_grad[2]:
            grad_values = _C._csr_sampled_dot(crow, col, grad, dense)
        if ctx.needs_input_grad[3]:
            rows = crow.shape[0] - 1
            t = _make(sparse_csr, crow, col, values, (rows, ctx.ncols))
            tt = _transpose_compressed(t, sparse_csc)  # CSC of (ncols, ...)... reinterpreted below
            grad_dense = _C._csr_dense_mm(tt._sc_cidx, tt._sc_pidx, tt._sc_values.contiguous(), grad)
        return None, None, grad_values, grad_dense, None


def _as_csr_2d(a):
    """A 2-D compressed matrix as CSR arrays (crow, col, values)."""
    if a._sc_layout == sparse_csr:
        return a
    if a._sc_layout == sparse_csc:
        return _transpose_compressed(a, sparse_csr)
    return None


def _mm_compressed_dense(a, b, name="mm", transposed=False, masked=False, leaf=None):
    """compressed (2-D, or batched 3-D) @ strided."""
    if a.dense_dim():
        raise RuntimeError(f"Sparse {_layout_title(a._sc_layout)[6:].upper()} tensors do not have strides")
    if a.dim() != 2:
        raise RuntimeError(f"expand is unsupported for {_layout_title(a._sc_layout)} tensors")
    vector = b.dim() == 1
    if vector:
        b = b.unsqueeze(1)
    if b.dim() != 2:
        raise RuntimeError("expand is unsupported for SparseCsr tensors")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_title(a.dtype)} but found {_dtype_title(b.dtype)}")
    if a._sc_layout == sparse_bsc and not transposed:
        raise RuntimeError("addmm: computation on CPU is not implemented for Strided + SparseBsc @ Strided")
    if a._sc_layout == sparse_bsc and transposed:  # the transpose of a BSR right operand
        raise RuntimeError("addmm: computation on CPU is not implemented for Strided + Strided @ SparseBsr")
    if leaf is None and a._sc_leaf and a._sc_values.requires_grad:
        leaf = a
    if a.dtype in (ember.float32, ember.float64):
        csr = _as_csr_2d(a)
        if csr is None:  # blocks: the matrix of their elements
            out = _to_dense(a) @ b
        elif not masked and leaf is not None and ember.is_grad_enabled():
            out = _LeafDenseGradMM.apply(a._sc_values, b, (leaf, csr, transposed))
        else:
            out = _CsrDenseMM.apply(csr._sc_cidx, csr._sc_pidx, csr._sc_values.contiguous(), b, a.shape[1])
    elif a.dtype in (ember.complex64, ember.complex128):
        out = _to_dense(a) @ b
    else:
        raise NotImplementedError(f"\"addmm_out_sparse_csr_impl_mkl\" not implemented for '{_dtype_title(a.dtype)}'")
    return out.squeeze(1) if vector else out


def _dense_mm_compressed(a, b):
    """strided @ compressed = (compressed^T @ strided^T)^T."""
    if a.dim() == 1 and b.dim() == 2:  # a vector on the left (matmul)
        return _dense_mm_compressed(a.unsqueeze(0), b).squeeze(0)
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError("expand is unsupported for SparseCsr tensors")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
        )
    leaf = b if b._sc_leaf and b._sc_values.requires_grad else None
    return _mm_compressed_dense(_t(b), a.t(), transposed=True, leaf=leaf).t().contiguous()


def _mm(a, b, *, _masked=False, **kwargs):
    if _is_compressed(a) and _is_compressed(b):
        # CSR or CSC times CSR or CSC: a CSR result, as PyTorch's
        if a._sc_layout not in (sparse_csr, sparse_csc) or b._sc_layout not in (sparse_csr, sparse_csc):
            raise _sparse_backend_error("mm", _BACKEND)
        out = _mm_compressed_dense(a, _to_dense(b))
        return _from_dense(out, sparse_csr, None, None, "mm")
    if _is_compressed(a):
        if isinstance(b, SparseCOOTensor):
            raise _sparse_backend_error("mm", _BACKEND)
        return _mm_compressed_dense(a, b, masked=_masked)
    return _dense_mm_compressed(a, b)


def _mm_only(a, b, **kwargs):
    """mm: matrices only, with PyTorch's errors for other operands (matmul takes vectors)."""
    for position, x in ((0, a), (1, b)):
        if not _is_compressed(x) and isinstance(x, ember.Tensor) and x.dim() != 2:
            other = b if position == 0 else a
            if x.dim() == 0:
                dim = position if _is_compressed(other) else 1 - position
                raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
            if x.dim() == 1 and position == 1:
                raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
            raise RuntimeError(f"mat{position + 1} must be a matrix, got {x.dim()}-D tensor")
    return _mm(a, b, **kwargs)


def _addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if out is not None:
        raise _sparse_backend_error("addmm.out", _BACKEND)
    if _is_compressed(input):
        raise RuntimeError(f"expand is unsupported for {_layout_title(input._sc_layout)} tensors")
    prod = _mm(mat1, mat2)
    if _is_compressed(prod):
        raise _sparse_backend_error("addmm", _BACKEND)
    if beta == 0:
        return prod * alpha if alpha != 1 else prod
    return input * beta + prod * alpha if (beta != 1 or alpha != 1) else input + prod


# --- elementwise ------------------------------------------------------------------------


def _same_structure(t, values, layout=None):
    return _make(layout or t._sc_layout, t._sc_cidx, t._sc_pidx, values, tuple(t.shape))


def _unary(fn):
    def apply(self, *args, **kwargs):
        if kwargs.get("out") is not None:
            raise _sparse_backend_error("out", _BACKEND)
        return _same_structure(self, fn(self._sc_values, *args))

    return apply


def _unary_inplace(fn):
    def apply(self, *args, **kwargs):
        self._sc_values = fn(self._sc_values, *args)
        return self

    return apply


def _mul(a, b, *, out=None):
    if out is not None:
        raise _sparse_backend_error("mul.out", _BACKEND)
    if _is_compressed(a) and _is_compressed(b):
        dense = _to_dense(a) * _to_dense(b)
        return _same_structure(a, dense[_entry_index(a)].reshape(a._sc_values.shape))
    s, other = (a, b) if _is_compressed(a) else (b, a)
    if isinstance(other, ember.Tensor) and other.dim() > 0:
        if tuple(other.shape) != tuple(s.shape):
            raise RuntimeError(
                f"sparse_mask(): operands have incompatible sizes; self has size {list(other.shape)} but mask has "
                f"size {list(s.shape)}"
            )
        return _same_structure(s, other[_entry_index(s)].reshape(s._sc_values.shape) * s._sc_values)
    return _same_structure(s, s._sc_values * other)


def _entry_index(t):
    """Index tuple into the dense form (non-block, no batch) of every stored entry."""
    if t._sc_layout in _BLOCK:
        raise RuntimeError(
            "empty_sparse_compressed expected sparse compressed (non-block) tensor layout but got "
            f"{_layout_title(t._sc_layout)}"
        )
    if t._sc_batch:
        raise _sparse_backend_error("mul", _BACKEND)
    comp, plain = _coords(t)
    return (comp, plain) if t._sc_layout in _ROW else (plain, comp)


def _add(a, b, *, alpha=1, out=None):
    if out is not None:
        raise _sparse_backend_error("add.out", _BACKEND)
    if _is_compressed(a) and _is_compressed(b):
        if a._sc_layout != b._sc_layout:
            other = b if b._sc_layout != sparse_csr else a
            kind = "row" if a._sc_layout in _ROW else "column"
            name = "crow_indices" if kind == "row" else "ccol_indices"
            raise RuntimeError(
                f"{name} expected sparse {kind} compressed tensor layout but got {_layout_title(other._sc_layout)}"
            )
        if a.dtype != b.dtype:
            raise RuntimeError(f"expected scalar type {_dtype_title(b.dtype)} but found {_dtype_title(a.dtype)}")
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"add: expected 'self' and 'other' to have same size, but self has size {list(a.shape)} while other "
                f"has size {list(b.shape)} (FYI: op2-sparse addition does not currently support broadcasting)"
            )
        return _add_compressed(a, b, alpha)
    if _is_compressed(a):
        if not isinstance(b, ember.Tensor):
            raise RuntimeError(
                f"add: expected 'self' and 'other' to have same size, but self has size [] while other has size "
                f"{list(a.shape)} (FYI: op2-sparse addition does not currently support broadcasting)"
            )
        a, b = b, a
        return a + _to_dense(b) * alpha if alpha != 1 else _to_dense(b) + a
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"add: expected 'self' and 'other' to have same size, but self has size {list(a.shape)} while other has "
            f"size {list(b.shape)} (FYI: op2-sparse addition does not currently support broadcasting)"
        )
    return a + _to_dense(b) * alpha if alpha != 1 else a + _to_dense(b)


def _add_compressed(a, b, alpha):
    """Two tensors of one compressed layout: the union of their patterns,
    values summed where both hold an entry (through COO's merge). PyTorch
    adds column-compressed tensors through their row indices' accessor,
    which refuses them."""
    if a._sc_layout in (sparse_csc, sparse_bsc):
        raise RuntimeError(
            f"crow_indices expected sparse row compressed tensor layout but got {_layout_title(a._sc_layout)}"
        )
    if a._sc_layout in _BLOCK or a._sc_batch:
        out = _to_dense(a) + _to_dense(b) * alpha
        return _from_dense(out, a._sc_layout, a._blocksize() if a._sc_layout in _BLOCK else None, None, "add")
    merged = _to_coo(a).add(_to_coo(b), alpha=alpha).coalesce()
    out = _coo_to_compressed(merged, sparse_csr)
    return _make(sparse_csr, out._sc_cidx.to(a._sc_cidx.dtype), out._sc_pidx.to(a._sc_pidx.dtype), out._sc_values,
                 tuple(a.shape))  # fmt: skip


# --- shape ------------------------------------------------------------------------------

_FLIP = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc, sparse_bsc: sparse_bsr}


def _transpose(self, dim0, dim1):
    n = self.dim()
    d0, d1 = dim0 % n, dim1 % n
    nbatch = self._sc_batch
    if d0 == d1:
        return self
    if {d0, d1} == {nbatch, nbatch + 1}:
        values = self._sc_values
        if self._sc_layout in _BLOCK:
            values = values.transpose(nbatch + 1, nbatch + 2)
        shape = list(self.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return _make(_FLIP[self._sc_layout], self._sc_cidx, self._sc_pidx, values, shape)

    def kind(d):
        return "Batch" if d < nbatch else ("Sparse" if d < nbatch + 2 else "Dense")

    if kind(d0) != kind(d1):
        raise RuntimeError(
            "transpose(): can only transpose dimensions of the same type (Batch, Sparse, Dense), got "
            f"{d0}({kind(d0)}) and {d1}({kind(d1)})"
        )
    raise _sparse_backend_error("transpose", _BACKEND)


def _t(self):
    if self.dim() != 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _transpose(self, 0, 1)


def _sum(self, dim=None, keepdim=False, *, dtype=None):
    if dim is None:
        vals = self._sc_values if dtype is None else self._sc_values.to(dtype)
        return vals.sum()
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
    if self._sc_layout != sparse_csr:
        raise RuntimeError(
            "Currently the only compressed sparse format supported for sum.dim_IntList is CSR, but got layout "
            f"{_layout_title(self._sc_layout)}"
        )
    if self.dim() != 2:
        raise RuntimeError(f"sum: expected a 2-D CSR tensor, got {self.dim()} dimensions")
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = _to_dense(self).sum(dim=dims, keepdim=True, dtype=dtype)
    return _from_dense(out, sparse_csr, None, None, "sum")


# --- conversions of dtype, copies ---------------------------------------------------------


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
        raise _sparse_backend_error("_to_copy", _BACKEND)
    if dtype is None or dtype == self.dtype:
        return self
    return _same_structure(self, self._sc_values.to(dtype))


def _cast(dtype):
    return lambda self, *a, **k: _to(self, dtype)


def _clone(self, *, memory_format=None):
    return _make(self._sc_layout, self._sc_cidx.clone(), self._sc_pidx.clone(), self._sc_values.clone(), self.shape)


def _detach(self):
    return _same_structure(self, self._sc_values.detach())


def _requires_grad_(self, requires_grad=True):
    if requires_grad and self._sc_values.requires_grad and not self._sc_leaf:
        return self  # not a leaf (built from values that require grad): nothing to change
    self._sc_values.requires_grad_(requires_grad)
    self._sc_leaf = self._sc_values.is_leaf
    return self


def _grad_get(self):
    g = self._sc_values.grad
    dense = self._sc_dense_grad
    if dense is not None:
        return dense if g is None else dense + _to_dense(_same_structure(self, g))
    return None if g is None else _same_structure(self, g)


def _grad_set(self, value):
    self._sc_dense_grad = None
    if value is None:
        self._sc_values.grad = None
    elif _is_compressed(value):
        self._sc_values.grad = value._sc_values
    else:
        self._sc_dense_grad = value


def _zero_(self):
    nbatch = self._sc_batch
    self._sc_cidx = ember.zeros_like(self._sc_cidx)
    self._sc_pidx = self._sc_pidx[..., :0]
    self._sc_values = self._sc_values.narrow(nbatch, 0, 0)
    return self


def _fill_(self, value):
    self._sc_values = self._sc_values.detach().clone().fill_(value) if self._nnz() else self._sc_values
    return self


def _copy_(self, src, non_blocking=False):
    if not _is_compressed(src) or src._sc_layout != self._sc_layout:
        raise RuntimeError(
            "torch.copy_: copy of sparse compressed tensors having different layouts is not supported. self layout "
            f"is {_layout_title(self._sc_layout)} and src layout is {_layout_title(_layout_of(src))}"
        )
    if src._nnz() != self._nnz():
        raise RuntimeError(
            "torch.copy_: only sparse compressed tensors with the same number of specified elements are supported."
        )
    self._sc_cidx = src._sc_cidx.clone()
    self._sc_pidx = src._sc_pidx.clone()
    self._sc_values = src._sc_values.detach().to(self.dtype).clone()
    return self


def _select(self, dim, index):
    """One row or column of a 2-D CSR/CSC matrix: a 1-D COO tensor."""
    from ember._sparse_coo import _make as coo_make

    if self._sc_layout in _BLOCK or self._sc_batch or self.dense_dim():
        raise RuntimeError("select(): no view exists for the given input, consider using torch.select_copy.")
    dim = dim % self.dim()
    size = self.shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {dim}"
        )
    index %= size
    comp, plain = _coords(self)
    rows, cols = (comp, plain) if self._sc_layout in _ROW else (plain, comp)
    keep, other = (rows, cols) if dim == 0 else (cols, rows)
    where = (keep == index).nonzero().reshape(-1)
    order = ember.sort(other[where], stable=True).indices
    where = where[order]
    length = self.shape[1 - dim]
    return coo_make(other[where].unsqueeze(0), self._sc_values[where], (length,), True)


def _getitem(self, index):
    if isinstance(index, int):
        return _select(self, 0, index)
    if (
        isinstance(index, tuple)
        and len(index) == 2
        and isinstance(index[0], slice)
        and index[0] == slice(None)
        and isinstance(index[1], int)
    ):
        return _select(self, 1, index[1])
    raise _sparse_backend_error("index", _BACKEND)


def _linear(input, weight, bias=None):  # noqa: A002 - PyTorch's name
    if _is_compressed(input):
        raise _sparse_backend_error("linear", _BACKEND)
    out = _dense_mm_compressed(input.reshape(-1, input.shape[-1]), _t(weight))
    out = out.reshape(tuple(input.shape[:-1]) + (weight.shape[0],))
    return out + bias if bias is not None else out


def _add_(self, other, *, alpha=1):
    r = _add(self, other, alpha=alpha)
    self._sc_cidx, self._sc_pidx, self._sc_values = r._sc_cidx, r._sc_pidx, r._sc_values
    return self


def _mul_(self, other):
    r = _mul(self, other)
    self._sc_values = r._sc_values
    return self


# --- serialization ------------------------------------------------------------------------


def _reduce(t):
    return (
        _rebuild_sparse_tensor,
        (t._sc_layout, (t._sc_cidx, t._sc_pidx, t._sc_values.detach(), ember.Size(t.shape))),
    )


def _rebuild_sparse_tensor(layout, data):
    """torch._utils._rebuild_sparse_tensor: a sparse tensor from its parts."""
    if layout == sparse_coo:
        from ember._sparse_coo import _make as coo_make

        indices, values, size = data[:3]
        coalesced = bool(data[3]) if len(data) > 3 and data[3] is not None else False
        return coo_make(indices, values, tuple(size), coalesced)
    if layout in _COMPRESSED:
        cidx, pidx, values, size = data
        return _make(layout, cidx, pidx, values, tuple(size))
    raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")


# --- dispatch table -----------------------------------------------------------------------

_HANDLERS: dict = {}

_ZERO_KEEPING = (
    "abs absolute angle asin asinh atan atanh ceil conj_physical deg2rad erf erfinv expm1 fix floor frac "
    "log1p neg negative positive rad2deg relu round sgn sign sin sinh sqrt tan tanh trunc"
).split()
_BOOL_ZERO_KEEPING = "isinf isnan isneginf isposinf signbit".split()


def _register(handler, *funcs):
    for f in funcs:
        _HANDLERS[f] = handler


def install_handlers() -> None:
    """What a SparseCompressedTensor answers; after Tensor's properties are final."""
    T = ember.Tensor
    _register(_mm_only, ember.mm, T.mm)
    _register(_mm, ember.matmul, T.matmul, T.__matmul__)
    _register(lambda b, a, **k: _mm(a, b), T.__rmatmul__)
    _register(_addmm, ember.addmm, T.addmm)
    _register(_add, ember.add, T.add, T.__add__)
    _register(lambda a, b, **k: _add(b, a, **k), T.__radd__)
    _register(_mul, ember.mul, T.mul, T.__mul__, T.__rmul__, ember.multiply, T.multiply)
    for name in _ZERO_KEEPING + _BOOL_ZERO_KEEPING:
        fn = getattr(ember, name)
        handler = _unary(fn)
        funcs = [f for f in (fn, getattr(T, name, None)) if f is not None]
        if name == "neg":
            funcs.append(T.__neg__)
        if name == "abs":
            funcs.append(T.__abs__)
        _register(handler, *funcs)
        inplace = getattr(T, name + "_", None)
        if inplace is not None and name not in _BOOL_ZERO_KEEPING:
            _register(_unary_inplace(lambda v, *a, _n=name: getattr(ember, _n)(v, *a)), inplace)
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
    _register(_cast(ember.bool), T.bool)
    _register(_clone, ember.clone, T.clone)
    _register(_detach, ember.detach, T.detach)
    _register(_requires_grad_, T.requires_grad_)
    _register(_zero_, T.zero_)
    _register(_fill_, T.fill_)
    _register(_copy_, T.copy_)
    _register(_select, ember.select, T.select)
    _register(_getitem, T.__getitem__)
    _register(_linear, ember.nn.functional.linear)
    _register(_unary(ember.relu), ember.nn.functional.relu)
    _register(_add_, T.add_, T.__iadd__)
    _register(_mul_, T.mul_, T.__imul__)
    _register(lambda self, *a, **k: self, T.cpu)
    _register(lambda self: self._sc_layout, T.layout.__get__)
    _register(lambda self: False, T.is_sparse.__get__)
    _register(lambda self: self._sc_layout == sparse_csr, T.is_sparse_csr.__get__)
    _register(lambda self: self._sc_values.requires_grad, T.requires_grad.__get__)
    # built from values that require grad, it is not a leaf (PyTorch records the factory)
    _register(lambda self: self._sc_leaf or not self._sc_values.requires_grad, T.is_leaf.__get__)
    _register(lambda self: self._sc_values.grad_fn, T.grad_fn.__get__)
    _register(_grad_get, T.grad.__get__)
    _register(_grad_set, T.grad.__set__)
    _register(lambda self, *a, **k: SparseCompressedTensor.to_dense(self, *a, **k), T.to_dense)
    _register(lambda self, *a, **k: SparseCompressedTensor.to_sparse(self, *a, **k), T.to_sparse)
    _register(SparseCompressedTensor.__repr__, T.__repr__)
    _register(_no_storage, T.tolist)
    _register(_no_numpy, T.numpy)
    _register(lambda self, *a, **k: self.is_contiguous(), T.contiguous)
    from ember import _sparse_coo, _sparse_legacy

    for name in _FUNCTIONS_OVER_PYTHON:
        # COO tensors take these too (the legacy products, values_copy's refusal)
        impl = getattr(_this_module(), name, None) or getattr(_sparse_legacy, name)
        _register(impl, getattr(ember, name))
        _sparse_coo._HANDLERS[getattr(ember, name)] = impl


# Top-level functions of this module that ember wraps with argument checks:
# a call with a compressed tensor reaches __torch_function__ with the wrapper.
_FUNCTIONS_OVER_PYTHON = (
    "sparse_csr_tensor sparse_csc_tensor sparse_bsr_tensor sparse_bsc_tensor sparse_compressed_tensor "
    "crow_indices_copy col_indices_copy ccol_indices_copy row_indices_copy values_copy indices_copy "
    "smm sspaddmm saddmm dsmm hspmm hsmm resize_as_sparse_"
).split()


def _this_module():
    import sys

    return sys.modules[__name__]


def _no_storage(self, *args, **kwargs):
    raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


def _no_numpy(self, *args, **kwargs):
    raise TypeError(
        f"can't convert {_layout_title(self._sc_layout)} layout tensor to numpy. Use Tensor.to_dense() first."
    )
