"""Masked reductions and normalizations (torch.masked): each function reads only the elements where mask is
True (mask broadcast to input; no mask reads all). A reduction over no element gives the reduction's
identity where it has one (sum 0, prod 1, amax -inf, norm 0) and nan where it has none (mean, var,
median, softmax). The MaskedTensor class is not part of Ember.

Note [Masked reductions as identity fills]
A masked-out element is replaced by the identity of the reduction (0 for sums, 1 for products, -inf for
maxima and logsumexp, +inf for minima) and the plain reduction runs on the result; means divide by the
count of unmasked elements, so an empty selection gives 0 / 0 = nan, as PyTorch's masked mean does.
"""

from __future__ import annotations

import ember

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]


def _input(input, dtype):  # noqa: A002
    return input if dtype is None else input.to(dtype)


def _mask(input, mask):  # noqa: A002
    if mask is None:
        return ember.ones(input.shape, dtype=ember.bool, device=input.device)
    if mask.dtype != ember.bool:
        mask = mask.to(ember.bool)
    return mask.expand(input.shape)


def _dims(input, dim):  # noqa: A002
    if dim is None:
        return list(range(input.dim()))
    if isinstance(dim, int):
        return [dim]
    return list(dim) or list(range(input.dim()))


def _filled(input, mask, value):  # noqa: A002
    return ember.where(_mask(input, mask), input, ember.tensor(value, dtype=input.dtype, device=input.device))


def _lowest(dtype):
    return float("-inf") if dtype.is_floating_point else ember.iinfo(dtype).min


def _highest(dtype):
    return float("inf") if dtype.is_floating_point else ember.iinfo(dtype).max


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A001,A002
    """The sum of the unmasked elements (0 for none)."""
    x = _input(input, dtype)
    return ember.sum(_filled(x, mask, 0), _dims(x, dim), keepdim=bool(keepdim))


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The product of the unmasked elements (1 for none)."""
    x = _filled(_input(input, dtype), mask, 1)
    for d in sorted((d % max(x.dim(), 1) for d in _dims(x, dim)), reverse=True):
        x = x.prod(d, keepdim=True)
    if not keepdim:
        dims = _dims(input, dim)
        x = x.reshape([s for i, s in enumerate(x.shape) if i not in {d % max(x.dim(), 1) for d in dims}])
    return x


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The largest unmasked element (-inf for none)."""
    x = _input(input, dtype)
    return ember.amax(_filled(x, mask, _lowest(x.dtype)), _dims(x, dim), keepdim=bool(keepdim))


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The smallest unmasked element (inf for none)."""
    x = _input(input, dtype)
    return ember.amin(_filled(x, mask, _highest(x.dtype)), _dims(x, dim), keepdim=bool(keepdim))


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The index of the largest unmasked element, in input's dtype as PyTorch returns it."""
    x = _input(input, dtype)
    return ember.argmax(_filled(x, mask, _lowest(x.dtype)), dim, keepdim=bool(keepdim)).to(x.dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The index of the smallest unmasked element, in input's dtype as PyTorch returns it."""
    x = _input(input, dtype)
    return ember.argmin(_filled(x, mask, _highest(x.dtype)), dim, keepdim=bool(keepdim)).to(x.dtype)


def _count(x, mask, dims, keepdim):
    return ember.sum(_mask(x, mask).to(x.dtype), dims, keepdim=keepdim)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The mean of the unmasked elements (nan for none)."""
    x = _input(input, dtype)
    dims = _dims(x, dim)
    return ember.sum(_filled(x, mask, 0), dims, keepdim=bool(keepdim)) / _count(x, mask, dims, bool(keepdim))


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The lower median of the unmasked elements (nan for none)."""
    x = _filled(_input(input, dtype), mask, float("nan"))
    return ember.nanmedian(x, dim, keepdim=keepdim).values


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """log(sum(exp)) of the unmasked elements (-inf for none)."""
    x = _input(input, dtype)
    return ember.logsumexp(_filled(x, mask, float("-inf")), _dims(x, dim), keepdim=keepdim)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The ord-norm of the unmasked elements (0 for none)."""
    x = _input(input, dtype)
    fill = float("inf") if ord == float("-inf") else 0
    return ember.linalg.vector_norm(_filled(x, mask, fill), ord, _dims(x, dim), keepdim=bool(keepdim))


def _var(input, dim, unbiased, correction, keepdim, dtype, mask):  # noqa: A002
    x = _input(input, dtype)
    dims = _dims(x, dim)
    count = _count(x, mask, dims, True)
    centre = ember.sum(_filled(x, mask, 0), dims, keepdim=True) / count
    squares = ember.sum(_filled((x - centre).square(), mask, 0), dims, keepdim=bool(keepdim))
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    count = count if keepdim else count.reshape(squares.shape)
    return squares / (count - correction).clamp(min=0)


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The variance of the unmasked elements, divided by their count less correction (nan for none)."""
    return _var(input, dim, unbiased, correction, keepdim, dtype, mask)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The square root of the masked variance."""
    return _var(input, dim, unbiased, correction, keepdim, dtype, mask).sqrt()


def softmax(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """softmax over the unmasked elements; masked ones get 0 (a row with none gives nan)."""
    return ember.softmax(_filled(_input(input, dtype), mask, float("-inf")), dim)


def log_softmax(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """log_softmax over the unmasked elements; masked ones get -inf."""
    return ember.log_softmax(_filled(_input(input, dtype), mask, float("-inf")), dim)


def softmin(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """softmax of -input over the unmasked elements."""
    return ember.softmax(_filled(-_input(input, dtype), mask, float("-inf")), dim)


def cumsum(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """Running sums that skip masked elements."""
    return ember.cumsum(_filled(_input(input, dtype), mask, 0), dim)


def cumprod(input, dim, *, dtype=None, mask=None):  # noqa: A002
    """Running products that skip masked elements."""
    return ember.cumprod(_filled(_input(input, dtype), mask, 1), dim)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):  # noqa: A002
    """input divided by the masked ord-norm along dim (at least eps); masked elements become 0."""
    x = _filled(_input(input, dtype), mask, 0)
    return x / norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask).clamp(min=eps)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):  # noqa: A002
    """logaddexp of the two inputs, each masked by its own mask (a masked element counts as -inf)."""
    a = _filled(_input(input, dtype), input_mask, float("-inf"))
    b = _filled(_input(other, dtype), other_mask, float("-inf"))
    return ember.logaddexp(a, b)
