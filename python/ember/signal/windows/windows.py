"""Window functions of length M, as torch.signal.windows (SciPy's definitions).

Each window evaluates its formula on M evenly spaced points made by linspace, in
PyTorch's order of operations, so windows agree with PyTorch's up to the last
bit of sin, cos, exp and i0. A periodic window (sym=False) is the first M points of the symmetric
window of length M + 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import ember

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _check(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not ember.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (ember.float32, ember.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _dtype(dtype):
    return ember.get_default_dtype() if dtype is None else dtype


def _filled(M, dtype, device, requires_grad):
    """The window of length 0 or 1."""
    return ember.ones((M,), dtype=dtype, device=device, requires_grad=requires_grad)


def _points(start, end, M, dtype, device, requires_grad):
    return ember.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(
    M, *, center=None, tau=1.0, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False
):
    """exp(-|n - center| / tau)."""
    dtype = _dtype(dtype)
    _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _filled(0, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / tau
    k = _points(-center * scale, (-center + (M - 1)) * scale, M, dtype, device, requires_grad)
    return ember.exp(-ember.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """sin(pi * (n + 0.5) / M), the sine window."""
    dtype = _dtype(dtype)
    _check("cosine", M, dtype, layout)
    if M == 0:
        return _filled(0, dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _points(0.5 * step, (0.5 + (M - 1)) * step, M, dtype, device, requires_grad)
    return ember.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = _dtype(dtype)
    _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _filled(0, dtype, device, requires_grad)
    first = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _points(first * scale, (first + (M - 1)) * scale, M, dtype, device, requires_grad)
    return ember.exp(-(k**2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """I0(beta * sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dtype = _dtype(dtype)
    _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _filled(M, dtype, device, requires_grad)
    b = ember.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / (M if not sym else M - 1)
    end = ember.minimum(b, -b + (M - 1) * step)
    k = ember.linspace(-b, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return ember.i0(ember.sqrt(b * b - ember.pow(k, 2))) / ember.i0(b)


def bartlett(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """1 - |2n / (M - 1) - 1|, the triangular window with zero ends."""
    dtype = _dtype(dtype)
    _check("bartlett", M, dtype, layout)
    if M <= 1:
        return _filled(M, dtype, device, requires_grad)
    step = 2 / (M if not sym else M - 1)
    k = _points(-1, -1 + (M - 1) * step, M, dtype, device, requires_grad)
    return 1 - ember.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _dtype(dtype)
    _check("general_cosine", M, dtype, layout)
    if M <= 1:
        return _filled(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _points(0, (M - 1) * step, M, dtype, device, requires_grad)
    coefficients = ember.tensor(
        [(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device, requires_grad=requires_grad
    )
    order = ember.arange(coefficients.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (coefficients.unsqueeze(-1) * ember.cos(order.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(
        M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hamming(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """The general Hamming window with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """The general Hamming window with alpha 0.5."""
    return general_hamming(
        M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def blackman(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """The general cosine window with coefficients 0.42, 0.5, 0.08."""
    return general_cosine(
        M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def nuttall(M, *, sym=True, dtype=None, layout=ember.strided, device=None, requires_grad=False):
    """Nuttall's minimum four-term Blackman-Harris window."""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
