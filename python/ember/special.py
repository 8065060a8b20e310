"""torch.special: special functions under the names PyTorch gives them."""

from __future__ import annotations

from ember import _C

_VF = _C._VariableFunctions

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i1", "log1p",
           "log_softmax", "logit", "logsumexp", "multigammaln", "polygamma", "psi", "round", "sinc", "softmax",
           "xlog1py", "xlogy"]


# The bindings take PyTorch's arguments, out= included: plain aliases.
digamma = psi = _VF.digamma
gammaln = _VF.lgamma
erf = _VF.erf
erfc = _VF.erfc
erfinv = _VF.erfinv
exp2 = _VF.exp2
expit = _VF.sigmoid
expm1 = _VF.expm1
log1p = _VF.log1p
i0 = _VF.i0
i1 = _VF.special_i1
sinc = _VF.sinc
polygamma = _VF.polygamma
logit = _VF.logit
xlogy = _VF.xlogy
xlog1py = _VF.special_xlog1py
logsumexp = _VF.logsumexp


def multigammaln(input, p, *, out=None):  # noqa: A002
    return _VF.mvlgamma(input, p) if out is None else _VF.mvlgamma(input, p, out=out)


def round(input, *, decimals=0, out=None):  # noqa: A001,A002
    if out is None:
        return _VF.round(input, decimals=decimals)
    return _VF.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):  # noqa: A002
    return _VF.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002
    return _VF.log_softmax(input, dim, dtype)

