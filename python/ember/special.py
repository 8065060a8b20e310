"""torch.special: special functions under the names PyTorch gives them."""

from __future__ import annotations

import ember
from ember import _C

_VF = _C._VariableFunctions

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i1", "log1p",
           "log_softmax", "logit", "logsumexp", "multigammaln", "polygamma", "psi", "round", "sinc", "softmax",
           "xlog1py", "xlogy"]


def _unary(op, name):
    def fn(input, *, out=None):  # noqa: A002
        return op(input) if out is None else op(input, out=out)

    fn.__name__ = fn.__qualname__ = name
    return fn


digamma = _unary(_VF.digamma, "digamma")
psi = _unary(_VF.digamma, "psi")
gammaln = _unary(_VF.lgamma, "gammaln")
erf = _unary(_VF.erf, "erf")
erfc = _unary(_VF.erfc, "erfc")
erfinv = _unary(_VF.erfinv, "erfinv")
exp2 = _unary(_VF.exp2, "exp2")
expit = _unary(_VF.sigmoid, "expit")
expm1 = _unary(_VF.expm1, "expm1")
log1p = _unary(_VF.log1p, "log1p")
i0 = _unary(_VF.i0, "i0")
i1 = _unary(_VF.special_i1, "i1")
sinc = _unary(_VF.sinc, "sinc")


def polygamma(n, input, *, out=None):  # noqa: A002
    return _VF.polygamma(n, input) if out is None else _VF.polygamma(n, input, out=out)


def multigammaln(input, p, *, out=None):  # noqa: A002
    return _VF.mvlgamma(input, p) if out is None else _VF.mvlgamma(input, p, out=out)


def logit(input, eps=None, *, out=None):  # noqa: A002
    return _VF.logit(input, eps) if out is None else _VF.logit(input, eps, out=out)


def xlogy(input, other, *, out=None):  # noqa: A002
    return _VF.xlogy(input, other) if out is None else _VF.xlogy(input, other, out=out)


def xlog1py(input, other, *, out=None):  # noqa: A002
    return _VF.special_xlog1py(input, other) if out is None else _VF.special_xlog1py(input, other, out=out)


def round(input, *, decimals=0, out=None):  # noqa: A001,A002
    if out is None:
        return _VF.round(input, decimals=decimals)
    return _VF.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):  # noqa: A002
    return _VF.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002
    return _VF.log_softmax(input, dim, dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):  # noqa: A002
    return _VF.logsumexp(input, dim, keepdim) if out is None else _VF.logsumexp(input, dim, keepdim, out=out)


def _tensor_polygamma(self, n):
    return _VF.polygamma(n, self)


_tensor_polygamma.__name__ = "polygamma"
ember.Tensor.polygamma = _tensor_polygamma
