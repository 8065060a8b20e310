"""Python-level forms of unique, unique_consecutive and nonzero(as_tuple=True),
which return a varying number of tensors, as torch's do."""

from __future__ import annotations

from ember import _C

_VF = _C._VariableFunctions
_nonzero = _VF.nonzero


def _pick(out, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return out, inverse, counts
    if return_inverse:
        return out, inverse
    if return_counts:
        return out, counts
    return out


def _test_flags(*flags):
    # PyTorch picks unique's form by the flags' truth values first (a tensor
    # of several elements raises RuntimeError before any type check).
    for flag in flags:
        bool(flag)


_UNIQUE_DIM = []


def _check_unique_dim(input, dim, sorted, return_inverse, return_counts):  # noqa: A002
    """PyTorch's checks of unique(dim=): the binding's types, then dim's range."""
    if not _UNIQUE_DIM:
        form = (
            "unique_dim(Tensor input, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False)"
        )
        _UNIQUE_DIM.append(_C._arg_signatures([form], False))
    kwargs = {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts}
    _C._check_args(_UNIQUE_DIM[0], input, dim, **kwargs)
    dim = int(dim)
    if not -(2**63) <= dim < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if input.dim() == 0 and dim not in (0, -1):
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = max(input.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    _test_flags(return_inverse, return_counts)
    if dim is not None:
        _check_unique_dim(input, dim, sorted, return_inverse, return_counts)
        out, inverse, counts = _unique_slices(input, int(dim), False)
        out = _no_derivative(out, input, "UniqueDimBackward0", "unique_dim")
        return _pick(out, inverse, counts, return_inverse, return_counts)
    out, inverse, counts = _VF._unique2(
        input, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts
    )
    return _pick(out, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    _test_flags(return_inverse, return_counts)
    if dim is not None and input.dim() > 1:
        n = input.dim()
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        out, inverse, counts = _unique_slices(input, int(dim), True)
        out = _no_derivative(out, input, "UniqueConsecutiveBackward0", "unique_consecutive")
        return _pick(out, inverse, counts, return_inverse, return_counts)
    out, inverse, counts = _VF._unique_consecutive(
        input, return_inverse=return_inverse, return_counts=return_counts, dim=dim
    )
    return _pick(out, inverse, counts, return_inverse, return_counts)


def _unique_slices(input, dim, consecutive):  # noqa: A002
    """(distinct slices along dim, the slice each input slice became, counts): slices compared
    element by element in order, sorted as sequences unless consecutive (NaN equals nothing)."""
    import ember

    x = input.detach().movedim(dim, 0)
    n = x.shape[0]
    width = 1
    for size in x.shape[1:]:
        width *= size
    rows = x.reshape(n, width)
    order = ember.arange(n, device=x.device)
    if not consecutive:
        for col in range(rows.shape[1] - 1, -1, -1):  # a stable sort per column, last first: lexicographic
            order = order.index_select(0, rows.index_select(0, order)[:, col].argsort(stable=True))
    ordered = rows.index_select(0, order)
    starts = ember.ones(n, dtype=ember.bool, device=x.device)
    if n > 1:
        starts[1:] = (ordered[1:] != ordered[:-1]).any(1)
    group = starts.cumsum(0) - 1
    out = ordered[starts].reshape((-1, *x.shape[1:])).movedim(0, dim)
    inverse = ember.empty(n, dtype=ember.int64, device=x.device).index_copy_(0, order, group)
    counts = ember.bincount(group, minlength=int(starts.sum())) if n else ember.zeros(0, dtype=ember.int64)
    return out, inverse, counts


def _no_derivative(out, source, node, op):
    """out (computed from source) recorded as PyTorch's node of an operator without a
    derivative: differentiating through it raises PyTorch's NotImplementedError."""
    from ember.autograd.function import _grad_recorded, _node_class, _NoDerivativeNode

    if not (_grad_recorded((source,)) and (out.is_floating_point() or out.is_complex())):
        return out
    return _node_class(_NoDerivativeNode, node).apply(source, out, op)


def nonzero(input, *, out=None, as_tuple=False):  # noqa: A002
    if not isinstance(as_tuple, bool):
        raise TypeError(f"nonzero(): argument 'as_tuple' must be bool, not {type(as_tuple).__name__}")
    if not as_tuple:
        return _nonzero(input) if out is None else _nonzero(input, out=out)
    r = _nonzero(input.reshape(-1) if input.dim() == 0 else input)
    return tuple(r.unbind(1))


def _install(namespace, tensor_cls):
    for fn in (unique, unique_consecutive, nonzero):
        namespace[fn.__name__] = fn

    def t_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
        return unique(self, sorted, return_inverse, return_counts, dim)

    def t_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def t_nonzero(self, *, as_tuple=False):
        return nonzero(self, as_tuple=as_tuple)

    for name, fn in (("unique", t_unique), ("unique_consecutive", t_unique_consecutive), ("nonzero", t_nonzero)):
        fn.__name__ = name
        setattr(tensor_cls, name, fn)
