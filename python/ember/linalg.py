"""ember.linalg: norms and products with torch.linalg's names and rules."""

from __future__ import annotations

import builtins

from ember import _C

_F = _C._VariableFunctions

__all__ = ["vector_norm", "matrix_norm", "norm", "matmul", "vecdot"]


def _as_dims(dim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return [dim]
    return list(dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The ord-norm of x over dim (all dims when None), as a vector."""
    return _F.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype, out=out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002, N803
    """Matrix norms over the two dims in dim: 'fro', 1, -1, inf, -inf.
    Norms that need singular values ('nuc', 2, -2) are not available."""
    dim = _as_dims(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if ord == "fro":
        r = vector_norm(A, 2, dim, keepdim, dtype=dtype)
    elif ord in (1, -1, float("inf"), float("-inf")):
        nd = A.dim()
        d0, d1 = (d % nd for d in dim)
        # 1-norms: largest column sum; inf-norms: largest row sum (min for the negatives).
        summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
        s = vector_norm(A, 1, summed, True, dtype=dtype)
        r = s.amax(other, keepdim=True) if ord > 0 else s.amin(other, keepdim=True)
        if not keepdim:
            r = r.reshape([A.shape[i] for i in range(nd) if i not in (d0, d1)])
    else:
        raise NotImplementedError(
            f"linalg.matrix_norm: ord={ord!r} needs singular values, which ember does not have yet"
        )
    if out is not None:
        out.copy_(r)
        return out
    return r


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):  # noqa: A002, N803
    """torch.linalg.norm: a vector norm for 1-D inputs or int dim, a matrix
    norm for 2-D inputs or a 2-tuple dim (the 2-norm of all elements when
    both ord and dim are None)."""
    if dim is not None:
        dims = _as_dims(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype, out=out)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype, out=out)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    raise RuntimeError(
        f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
    )


def matmul(input, other, *, out=None):  # noqa: A002
    if out is not None:
        return _F.matmul(input, other, out=out)
    return _F.matmul(input, other)


def vecdot(x, y, *, dim=-1):
    """Dot products along dim, broadcasting the other dims."""
    return (x * y).sum(dim)


def _torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002
    """torch.norm: vector norms over dim (or all dims), 'fro' as the 2-norm."""
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        if dim is None:
            dim = list(builtins.range(input.dim()))
        return matrix_norm(input, p, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)
