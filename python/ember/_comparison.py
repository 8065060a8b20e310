"""allclose and equal, which return a Python bool, as torch's do."""

from __future__ import annotations

from ember import _C, _argcheck

_VF = _C._VariableFunctions


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    return bool(_VF.isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):  # noqa: A002
    if not isinstance(input, _C.TensorBase) or not isinstance(other, _C.TensorBase):
        _argcheck.tensor("equal", "input", 1, input)
        _argcheck.tensor("equal", "other", 2, other)
    return _C.TensorBase.equal(input, other)


def _install(namespace, tensor_cls):
    for fn in (allclose, equal):
        namespace[fn.__name__] = fn

    def t_allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return allclose(self, other, rtol, atol, equal_nan)

    for name, fn in (("allclose", t_allclose),):
        fn.__name__ = name
        setattr(tensor_cls, name, fn)
