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
        raise NotImplementedError("unique with dim is not supported")
    out, inverse, counts = _VF._unique2(
        input, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts
    )
    return _pick(out, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    _test_flags(return_inverse, return_counts)
    out, inverse, counts = _VF._unique_consecutive(
        input, return_inverse=return_inverse, return_counts=return_counts, dim=dim
    )
    return _pick(out, inverse, counts, return_inverse, return_counts)


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
