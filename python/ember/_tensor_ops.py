"""Python-level forms of unique, unique_consecutive, nonzero(as_tuple=True),
allclose and equal, which return Python values or a varying number of
tensors, as torch's do."""

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


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    if dim is not None:
        raise NotImplementedError("unique with dim is not supported")
    out, inverse, counts = _VF._unique2(input, sorted, return_inverse, return_counts)
    return _pick(out, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    out, inverse, counts = _VF._unique_consecutive(input, return_inverse, return_counts, dim)
    return _pick(out, inverse, counts, return_inverse, return_counts)


def nonzero(input, *, out=None, as_tuple=False):  # noqa: A002
    if not as_tuple:
        return _nonzero(input) if out is None else _nonzero(input, out=out)
    r = _nonzero(input.reshape(-1) if input.dim() == 0 else input)
    return tuple(r.unbind(1))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    return bool(_VF.isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):  # noqa: A002
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool((input == other).all())


def _install(namespace, tensor_cls):
    for fn in (unique, unique_consecutive, nonzero, allclose, equal):
        namespace[fn.__name__] = fn

    def t_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
        return unique(self, sorted, return_inverse, return_counts, dim)

    def t_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def t_nonzero(self, *, as_tuple=False):
        return nonzero(self, as_tuple=as_tuple)

    def t_allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return allclose(self, other, rtol, atol, equal_nan)

    def t_equal(self, other):
        return equal(self, other)

    def t_polygamma(self, n):  # the method takes n second
        return _VF.polygamma(n, self)

    for name, fn in (("unique", t_unique), ("unique_consecutive", t_unique_consecutive), ("nonzero", t_nonzero),
                     ("allclose", t_allclose), ("equal", t_equal), ("polygamma", t_polygamma)):
        fn.__name__ = name
        setattr(tensor_cls, name, fn)
