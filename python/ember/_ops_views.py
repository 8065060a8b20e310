"""Copying forms of the view operators (view_copy, transpose_copy ...), the
scatter forms that embed a tensor into a view of a copy (select_scatter,
slice_scatter ...), cdist, vander and small Tensor helpers."""

from __future__ import annotations

import builtins

from ember import _C, _argcheck
from ember._ops_math import _out


def _ember():
    import ember

    return ember


def _copying(view_name):
    def view(input, *args, **kwargs):  # noqa: A002
        if view_name == "alias":  # Tensor has no alias(): the copy of input itself
            return input
        if view_name == "slice":
            return _slice_checked(input, *args, **kwargs)
        return getattr(input, view_name)(*args, **kwargs)

    def copy(input, *args, **kwargs):  # noqa: A002
        result = view(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            return tuple(r.clone(memory_format=_C.contiguous_format) for r in result)
        return result.clone(memory_format=_C.contiguous_format)

    def op(input, *args, out=None, **kwargs):  # noqa: A002
        _argcheck.tensor(view_name + "_copy", "input", 1, input)
        probe = view(input, *args, **kwargs)  # the checks, and the view's node
        if view_name == "narrow":
            node = "NarrowCopyBackward0"
        else:
            first = probe[0] if isinstance(probe, (tuple, list)) and probe else probe
            grad_fn = getattr(first, "grad_fn", None)
            node = "AliasBackward0_copy" if view_name == "alias" else type(grad_fn).__name__ + "_copy"
        if not (input.requires_grad and _ember().is_grad_enabled()) or view_name == "detach":
            result = copy(input, *args, **kwargs)
        else:
            from ember._linalg_autograd import named

            result = named(node, lambda x: copy(x, *args, **kwargs), input)
        if isinstance(result, (tuple, list)):
            return list(result)
        return _out(result, out)

    op.__name__ = view_name + "_copy"
    op.__doc__ = f"input.{view_name}(...) as a new contiguous tensor."
    return op


_VIEWS = (
    "alias",
    "as_strided",
    "detach",
    "diagonal",
    "expand",
    "narrow",
    "permute",
    "select",
    "slice",
    "split",
    "split_with_sizes",
    "squeeze",
    "t",
    "transpose",
    "unbind",
    "unfold",
    "unsqueeze",
    "view",
)


def _slice_checked(t, dim=0, start=None, end=None, step=1):
    """t.slice(dim, start, end, step) with PyTorch's checks (Tensor has no slice())."""
    if t.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    n = t.dim()
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _slice_view(t, dim, start, end, step)


def _slice_view(t, dim=0, start=None, end=None, step=1):
    return t[(builtins.slice(None),) * (dim % max(t.dim(), 1)) + (builtins.slice(start, end, step),)]


def _scatter_into(view_fn, name):
    def op(input, src, *args, **kwargs):  # noqa: A002
        _argcheck.tensor(name, "input", 1, input)
        _argcheck.tensor(name, "src", 2, src)
        result = input.clone()
        target = view_fn(result, *args, **kwargs)
        if tuple(target.shape) != tuple(src.shape):
            raise RuntimeError(
                f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, slice size = "
                f"{list(target.shape)}"
            )
        target.copy_(src)
        return result

    op.__name__ = name
    return op


select_scatter = _scatter_into(lambda t, dim, index: t.select(dim, index), "select_scatter")
slice_scatter = _scatter_into(_slice_checked, "slice_scatter")
diagonal_scatter = _scatter_into(lambda t, offset=0, dim1=0, dim2=1: t.diagonal(offset, dim1, dim2), "diagonal_scatter")
as_strided_scatter = _scatter_into(
    lambda t, size, stride, storage_offset=None: t.as_strided(size, stride, storage_offset), "as_strided_scatter"
)


def unsafe_chunk(input, chunks, dim=0):  # noqa: A002
    return input.chunk(chunks, dim)


def unsafe_split(tensor, split_size_or_sections, dim=0):
    return tensor.split(split_size_or_sections, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):  # noqa: A002
    return input.split(list(split_sizes), dim)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 and each row of x2 (batched)."""
    ember = _ember()
    for i, (n, x) in enumerate((("x1", x1), ("x2", x2))):
        _argcheck.tensor("cdist", n, i + 1, x)
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, X{i + 1} got: {x.dim()}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{i + 1} got: {_name(x.dtype)}")
    for x in (x1, x2):
        if x.dtype not in (ember.float32, ember.float64):
            raise NotImplementedError(f"\"cdist\" not implemented for '{_name(x.dtype)}'")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = _CDIST_MODES.get(compute_mode)
    if mode is None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    r1, r2, c = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    if x1.numel() and x2.numel() and p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        # PyTorch's matrix-product form: |a|^2 + |b|^2 - 2ab through one product.
        batch = list(ember.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
        a = x1.expand(batch + [r1, c]).reshape(-1, r1, c)
        b = x2.expand(batch + [r2, c]).reshape(-1, r2, c)
        return _euclidean_dist_function().apply(a, b).view(batch + [r1, r2])
    from ember._linalg_autograd import named

    return named(
        "CdistBackward0", lambda a, b: ember.linalg.vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, -1), x1, x2
    )


_CDIST_MODES = {
    None: 0,
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}
_EUCLIDEAN_DIST = []


def _euclidean_dist_function():
    """Batched Euclidean distances by one matrix product, with PyTorch's
    gradient (zero where a distance is zero), recorded as EuclideanDistBackward0."""
    if _EUCLIDEAN_DIST:
        return _EUCLIDEAN_DIST[0]
    from ember._linalg_autograd import _node_name
    from ember.autograd.function import Function

    class EuclideanDist(Function):
        @staticmethod
        def forward(ctx, x1, x2):
            ember = _ember()
            n1 = x1.pow(2).sum(-1, keepdim=True)
            n2 = x2.pow(2).sum(-1, keepdim=True)
            a = ember.cat([x1.mul(-2), n1, ember.ones_like(n1)], -1)
            b = ember.cat([x2, ember.ones_like(n2), n2], -1)
            result = a.matmul(b.mT).clamp_min_(0).sqrt_()
            ctx.save_for_backward(x1, x2, result)
            return result

        @staticmethod
        def backward(ctx, grad):
            x1, x2, result = ctx.saved_tensors
            ratio = (grad / result).masked_fill(result == 0, 0)
            g1 = x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2)
            g2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1)
            return g1, g2

    _node_name(EuclideanDist, "EuclideanDistBackward0")
    _EUCLIDEAN_DIST.append(EuclideanDist)
    return EuclideanDist


def _name(dtype):
    from ember._ops_math import _scalar_name

    return _scalar_name(dtype)


def vander(x, N=None, increasing=False):  # noqa: N803
    """Columns of powers of x: x**(N-1) ... x**0 (or increasing)."""
    ember = _ember()
    _argcheck.tensor("vander", "x", 1, x)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = ember.promote_types(x.dtype, ember.int64)
    if n == 0:
        return ember.empty(x.shape[0], 0, dtype=dtype)
    ones = ember.ones(x.shape[0], 1, dtype=dtype, device=x.device)
    if n > 1:
        powers = x.unsqueeze(1).expand(x.shape[0], n - 1).to(dtype).cumprod(1)
        ones = ember.cat([ones, powers], 1)
    return ones if increasing else ones.flip(1)


def chain_matmul(*matrices, out=None):
    ember = _ember()
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    _argcheck.tensor_elements(matrices, 0)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].dim() != 2:
            raise RuntimeError(f"Tensor dimension is {matrices[0].dim()}, expected 2 instead.")
        return _out(matrices[0].clone(), out)
    return _out(ember.linalg.multi_dot(matrices) if hasattr(ember.linalg, "multi_dot") else _chain(matrices), out)


def _chain(matrices):
    result = matrices[0]
    for m in matrices[1:]:
        result = result.mm(m)
    return result


def sgn(input, *, out=None):  # noqa: A002
    """sign(input) for real tensors."""
    return _out(_ember().sign(input), out)


# ---- Tensor methods --------------------------------------------------------------------------


def broadcast_to(self, *size, **kwargs):
    """self.expand(size): broadcast_to(3, 4), broadcast_to((3, 4)) or size=(3, 4)."""
    return self.expand(*size, **kwargs)


def sum_to_size(self, *size):
    """The sum of self over the dimensions that size broadcasts."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    if len(size) == 0 and self.dim() == 0:
        return self.sum()  # PyTorch sums to () whatever the shape: integers widen to int64
    target = list(size)
    shape = list(self.shape)
    lead = len(shape) - len(target)
    if lead < 0 or any(t not in (1, s) for t, s in zip(target, shape[lead:])):
        raise RuntimeError(f"size {{{target}}} is not expandable to size {{{shape}}}.")
    lead = len(shape) - len(target)
    dims = list(builtins.range(lead)) + [lead + i for i, s in enumerate(target) if s == 1 and shape[lead + i] != 1]
    result = self.sum(dims, keepdim=True) if dims else self
    return result.reshape(target) if lead else result


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **_):
    ember = _ember()
    return ember.empty_strided(
        size,
        stride,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
    )


def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal in place (every dimension of the same length; for tall matrices wrap
    restarts it every N + 1 rows)."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = builtins.min(self.shape)
    flat_stride = builtins.sum(self.stride())
    if self.dim() == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        rows = self.shape[0]
        step = self.shape[1] + 1
        for start in builtins.range(0, rows, step):
            block = self[start : start + self.shape[1]]
            k = builtins.min(block.shape[0], self.shape[1])
            block.as_strided((k,), (flat_stride,)).fill_(fill_value)
        return self
    self.as_strided((n,), (flat_stride,), self.storage_offset()).fill_(fill_value)
    return self


def apply_(self, callable):  # noqa: A002
    """Replaces each element by callable(element), in place (CPU only)."""
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(_ember().tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def map_(self, tensor, callable):  # noqa: A002
    """self[i] = callable(self[i], tensor[i]) in place, tensor broadcast to self."""
    other = tensor.expand(self.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    self.copy_(_ember().tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def is_neg(self):
    _argcheck.tensor("is_neg", "input", 1, self)
    return self.is_neg()


def sgn_(self):
    return self.sign_()


__all__ = [
    *(v + "_copy" for v in _VIEWS),
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "as_strided_scatter",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "cdist",
    "vander",
    "chain_matmul",
    "sgn",
    "is_neg",
]
for _v in _VIEWS:
    globals()[_v + "_copy"] = _copying(_v)
del _v
METHODS = [
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "as_strided_scatter",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "sgn",
    "sgn_",
    "sum_to_size",
    "broadcast_to",
    "new_empty_strided",
    "fill_diagonal_",
    "apply_",
    "map_",
    "narrow_copy",
]
