"""The *_copy accessors and PyTorch's legacy sparse products (smm,
sspaddmm/saddmm, hspmm/hsmm, dsmm, resize_as_sparse_), as torch 2.13 answers
them: most take sparse COO tensors (ember/_sparse_coo.py) and refuse the
compressed layouts (ember/_sparse_compressed.py) with PyTorch's errors."""

from __future__ import annotations

import ember
from ember import _C
from ember._sparse_compressed import _BACKEND, _is_compressed, _layout_of, _layout_title
from ember._sparse_coo import SparseCOOTensor, _sparse_backend_error


def _check_tensors(name, *named):
    """PyTorch's binding checks, made before anything else: (argument name, value) pairs in order."""
    for position, (arg, x) in enumerate(named, 1):
        if not isinstance(x, ember.Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(x).__name__}")


def _check_tensor(name, x):
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def _copy_of(name, getter):
    def fn(input, *, out=None):  # noqa: A002 - PyTorch's name
        _check_tensor(name, input)
        if isinstance(input, SparseCOOTensor):
            raise _sparse_backend_error(name)
        if getter == "indices" and not isinstance(input, SparseCOOTensor):
            raise RuntimeError(
                f"indices expected sparse coordinate tensor layout but got {_layout_title(_layout_of(input))}"
            )
        if getter == "values" and not _is_compressed(input):
            raise RuntimeError("values expected sparse tensor layout but got Strided")
        result = getattr(input, getter)().clone()
        if out is not None:
            out.resize_(result.shape).copy_(result)
            return out
        return result

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"A copy of ``input.{getter}()``."
    return fn


crow_indices_copy = _copy_of("crow_indices_copy", "crow_indices")
col_indices_copy = _copy_of("col_indices_copy", "col_indices")
ccol_indices_copy = _copy_of("ccol_indices_copy", "ccol_indices")
row_indices_copy = _copy_of("row_indices_copy", "row_indices")
values_copy = _copy_of("values_copy", "values")
indices_copy = _copy_of("indices_copy", "indices")


def _coo_product(name, sparse, dense):
    if _is_compressed(sparse):
        raise _sparse_backend_error(name, _BACKEND)
    if not isinstance(sparse, SparseCOOTensor):
        raise _sparse_backend_error(name, "CPU")
    if sparse.sparse_dim() != 2:
        raise RuntimeError(f"{name}: Argument #2: matrices expected, got {sparse.sparse_dim()}D tensor")
    if dense.dim() != 2:
        raise RuntimeError(f"{name}: Argument #3: matrices expected, got {dense.dim()}D tensor")
    if isinstance(dense, SparseCOOTensor):
        raise RuntimeError("addmm_sparse_dense: expected strided result tensor, got tensor with layout Sparse")
    if sparse.shape[1] != dense.shape[0]:
        raise RuntimeError(f"{name}: Argument #3: Expected dim 0 size {sparse.shape[1]}, got {dense.shape[0]}")


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):  # noqa: A002 - PyTorch's name
    """``beta * input + alpha * (mat1 @ mat2)`` as a sparse COO tensor:
    input's entries, then the product's rows (uncoalesced, as PyTorch)."""
    from ember._sparse_coo import _make as coo_make

    if _is_compressed(mat1) or _is_compressed(input):
        raise _sparse_backend_error("sspaddmm.out", _BACKEND)
    if not isinstance(input, SparseCOOTensor) and not isinstance(mat1, SparseCOOTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if not isinstance(mat1, SparseCOOTensor):
        raise RuntimeError("sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with layout Strided")
    if isinstance(mat2, SparseCOOTensor):
        raise RuntimeError("sspaddmm: expected 'mat2' to have strided layout, got 'mat2' with layout Sparse")
    if not isinstance(input, SparseCOOTensor):
        raise RuntimeError("sspaddmm: expected a sparse COO input (self)")
    if mat1.sparse_dim() != 2:
        raise RuntimeError(f"sspaddmm: Argument #2: matrices expected, got {mat1.sparse_dim()}D tensor")
    if mat2.dim() != 2:
        raise RuntimeError(f"sspaddmm: Argument #3: matrices expected, got {mat2.dim()}D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sspaddmm: Argument #3: Expected dim 0 size {mat1.shape[1]}, got {mat2.shape[0]}")
    if tuple(input.shape) != (mat1.shape[0], mat2.shape[1]):
        raise RuntimeError(f"sspaddmm: Argument #1: Expected dim 0 size {mat1.shape[0]}, got {input.shape[0]}")
    m1 = mat1.coalesce()
    prod = mat1.to_dense() @ mat2 if m1._nnz() else ember.zeros((mat1.shape[0], mat2.shape[1]), dtype=mat2.dtype)
    # rows of mat1 that hold an entry give full rows of the product
    rows = ember.unique(m1._sp_indices[0]) if m1._nnz() else ember.zeros(0, dtype=ember.int64)
    n = mat2.shape[1]
    prow = rows.repeat_interleave(n)
    pcol = ember.arange(n).repeat(rows.shape[0])
    pvals = prod[rows].reshape(-1) * alpha
    idx = ember.cat([input._sp_indices, ember.stack([prow, pcol])], dim=1)
    vals = ember.cat([input._sp_values * beta, pvals.to(input._sp_values.dtype)])
    result = coo_make(idx, vals, tuple(input.shape), False)
    if out is not None:
        raise _sparse_backend_error("sspaddmm.out")
    return result


def saddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):  # noqa: A002 - PyTorch's name
    """The legacy name of sspaddmm."""
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)


def smm(input, mat2):  # noqa: A002 - PyTorch's name
    """Sparse COO times dense with a sparse COO result (sspaddmm on an empty tensor)."""
    _check_tensors("smm", ("input", input), ("mat2", mat2))
    from ember._sparse_coo import _make as coo_make

    if _is_compressed(input):
        raise RuntimeError(
            "torch.empty: Only batched sparse compressed (non-block) tensors are supported, but got size [0]"
        )
    if _is_compressed(mat2):
        raise _sparse_backend_error("sspaddmm.out", _BACKEND)
    if not isinstance(input, SparseCOOTensor):
        if isinstance(mat2, SparseCOOTensor):  # the sparse kernel, given a strided mat1
            raise RuntimeError("sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with layout Strided")
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    empty = coo_make(
        ember.zeros((2, 0), dtype=ember.int64),
        ember.zeros(0, dtype=input.dtype),
        (input.shape[0], mat2.shape[1] if mat2.dim() == 2 else 0),
        False,
    )
    return sspaddmm(empty, input, mat2, beta=0, alpha=1)


def dsmm(input, mat2):  # noqa: A002 - PyTorch's name
    """A dense product of a sparse (or dense) matrix with a dense one: mm."""
    _check_tensors("mm", ("input", input), ("mat2", mat2))
    return ember.mm(input, mat2)


def hspmm(mat1, mat2, *, out=None):
    """Sparse COO times dense as a hybrid COO tensor: one sparse dim (the rows
    of mat1 that hold entries) and full dense rows."""
    _check_tensors("hspmm", ("mat1", mat1), ("mat2", mat2))
    from ember._sparse_coo import _make as coo_make

    if _is_compressed(mat1) or _is_compressed(mat2):
        raise _sparse_backend_error("hspmm", _BACKEND)
    if not isinstance(mat1, SparseCOOTensor):
        if isinstance(mat2, SparseCOOTensor):  # the sparse kernel, given a mat1 without sparse dims
            raise RuntimeError("hspmm: Argument #2: matrices expected, got 0D tensor")
        raise _sparse_backend_error("hspmm", "CPU")
    _coo_product("hspmm", mat1, mat2)
    m1 = mat1.coalesce()
    rows = ember.unique(m1._sp_indices[0]) if m1._nnz() else ember.zeros(0, dtype=ember.int64)
    prod = mat1 @ mat2
    result = coo_make(rows.unsqueeze(0), prod[rows], (mat1.shape[0], mat2.shape[1]), True)
    if out is not None:
        raise _sparse_backend_error("hspmm.out")
    return result


def hsmm(mat1, mat2):
    """The legacy name of hspmm."""
    return hspmm(mat1, mat2)


def resize_as_sparse_(input, the_template):  # noqa: A002 - PyTorch's name
    """Resizes a sparse COO tensor to the template's size and sparse/dense
    dims, as PyTorch's sparse_resize_: an empty tensor takes any; a non-empty
    one may only grow its sparse sizes."""
    _check_tensors("resize_as_sparse_", ("input", input), ("the_template", the_template))
    from ember._sparse_coo import _make as coo_make

    if _is_compressed(the_template) and not _is_compressed(input):
        raise RuntimeError(
            "resize_as_sparse_compressed_: self  expected sparse compressed tensor layout but got "
            f"{_layout_title(_layout_of(input))}"
        )
    if (
        not _is_compressed(input)
        and not isinstance(input, SparseCOOTensor)
        and _layout_of(the_template) == _layout_of(input)
    ):
        raise _sparse_backend_error("resize_as_sparse_", "CPU")
    if _is_compressed(input):
        # the template's indices; the values keep what fits (PyTorch leaves the rest uninitialised: zeros here)
        if not _is_compressed(the_template):
            raise RuntimeError(
                "resize_as_sparse_compressed_: src  expected sparse compressed tensor layout but got "
                f"{_layout_title(_layout_of(the_template))}"
            )
        if the_template._sc_layout != input._sc_layout:
            raise RuntimeError(
                "resize_as_sparse_compressed_tensor_: self and src must have the same layout, but got: self "
                f"({_layout_title(input._sc_layout)}) and source ({_layout_title(the_template._sc_layout)})"
            )
        old = input._sc_values.detach().reshape(-1)
        values = ember.zeros(tuple(the_template._sc_values.shape), dtype=input.dtype)
        flat = values.reshape(-1)
        n = min(flat.numel(), old.numel())
        flat[:n] = old[:n]
        input._sc_cidx = the_template._sc_cidx.clone()
        input._sc_pidx = the_template._sc_pidx.clone()
        input._sc_values = values
        with _C.DisableTorchFunctionSubclass():
            input.set_(ember.zeros((), dtype=input.dtype).expand(tuple(the_template.shape)))
        return input
    if not isinstance(input, SparseCOOTensor):
        raise RuntimeError(
            'self.is_sparse() INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
            'SparseTensorUtils.h":28, please report a bug to PyTorch. _internal_get_SparseTensorImpl: not a sparse '
            "tensor"
        )
    size = tuple(the_template.shape)
    sparse_dim, dense_dim = the_template.sparse_dim(), the_template.dense_dim()
    nnz = input._nnz()
    if nnz:
        if sparse_dim != input.sparse_dim():
            raise RuntimeError(
                f"changing the number of sparse dimensions (from {input.sparse_dim()} to {sparse_dim}) on a non-empty "
                "sparse tensor is not supported."
            )
        if dense_dim != input.dense_dim():
            raise RuntimeError(
                f"changing the number of dense dimensions (from {input.dense_dim()} to {dense_dim}) on a non-empty "
                "sparse tensor is not supported."
            )
        old = list(input.shape[:sparse_dim])
        if any(n < o for n, o in zip(size[:sparse_dim], old)):
            raise RuntimeError(
                f"shrinking the size of sparse dimensions (from {old} to {list(size[:sparse_dim])}) on a non-empty "
                "sparse tensor is not supported."
            )
        if tuple(size[sparse_dim:]) != tuple(input.shape[sparse_dim:]):
            raise RuntimeError(
                f"shrinking the size of dense dimensions (from {list(input.shape[sparse_dim:])} to "
                f"{list(size[sparse_dim:])}) on a non-empty sparse tensor is not supported."
            )
        indices, values = input._sp_indices, input._sp_values
    else:
        indices = ember.zeros((sparse_dim, 0), dtype=ember.int64)
        values = ember.zeros((0,) + size[sparse_dim:], dtype=input.dtype)
    resized = coo_make(indices, values, size, input._sp_coalesced)
    with _C.DisableTorchFunctionSubclass():
        input.set_(resized.as_subclass(ember.Tensor))
    input._sp_indices, input._sp_values = indices, values
    return input
