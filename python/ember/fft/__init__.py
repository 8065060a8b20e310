"""ember.fft: discrete Fourier transforms, as torch.fft.

Every function reduces to the three operators of ops.yaml, PyTorch's
primitives: _fft_c2c (complex to complex), _fft_r2c (real to complex,
one-sided or full) and _fft_c2r (one-sided complex to real), whose
gradients are PyTorch's formulas. This module checks arguments with
PyTorch's messages, promotes dtypes, pads or trims the signal to `n`/`s`
and maps `norm` onto the operators' normalization codes."""

from __future__ import annotations

import builtins

import math

import ember
from ember._ops_math import _SCALAR_NAMES
from ember import Tensor  # noqa: F401  (torch.fft re-exports it too)

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

# Normalization codes of the operators: none, 1/sqrt(n), 1/n.
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2



def _dtype_name(dtype):
    short = str(dtype).split(".")[-1]
    return _SCALAR_NAMES.get(short, short)


def _norm_code(norm, forward):
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex):
    """PyTorch's promote_tensor_fft: integers to the default dtype, then
    float32/float64 (half precision is refused on CPU), complex if asked."""
    dtype = x.dtype
    if dtype.is_complex:
        return x
    if not dtype.is_floating_point:
        dtype = ember.get_default_dtype()
    if dtype not in (ember.float32, ember.float64):
        raise RuntimeError(f"Unsupported dtype {_dtype_name(dtype)}")
    if require_complex:
        dtype = ember.complex64 if dtype == ember.float32 else ember.complex128
    return x if x.dtype == dtype else x.to(dtype)


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _check_tensor(name, x):
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def _resize(x, dims, sizes):
    """Trims or zero-pads x at the end of each dim to sizes (-1 keeps a dim)."""
    pad = [0] * (2 * x.dim())
    must_pad = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if x.shape[d] > n:
            x = x.narrow(d, 0, n)
        elif x.shape[d] < n:
            pad[len(pad) - 2 * d - 1] = n - x.shape[d]
            must_pad = True
    return ember.constant_pad_nd(x, pad) if must_pad else x


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _write_out(name, out, result, want):
    if out is None:
        return result
    if want == "complex" and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got {_dtype_name(out.dtype)}")
    if want == "real" and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got {_dtype_name(out.dtype)}")
    if out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {result.dtype}, but got {out.dtype} instead")
    _copy_out(out, result)
    return out


def _copy_out(out, result):
    # an exact copy through an out= operator, which resizes out as PyTorch does
    ember.mul(result.detach(), 1, out=out)


# ---- one-dimensional ------------------------------------------------------------------------


def _c2c(name, input, n, dim, norm, forward, out):  # noqa: A002
    if not input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {_dtype_name(input.dtype)}")
    d = _wrap(dim, input.dim())
    if n is not None:
        _check_n(n)
        input = _resize(input, [d], [n])
    else:
        _check_n(input.shape[d])
    result = ember._fft_c2c(input, [d], _norm_code(norm, forward), forward)
    return _write_out(name, out, result, "complex")


def _r2c(name, input, n, dim, norm, forward, onesided, out):  # noqa: A002
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype_name(input.dtype)}")
    if out is not None and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got {_dtype_name(out.dtype)}")
    input = _promote(input, False)
    d = _wrap(dim, input.dim())
    size = input.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        input = _resize(input, [d], [n])
    result = ember._fft_r2c(input, [d], _norm_code(norm, forward), onesided)
    if not forward:
        result = result.conj()
    return _write_out(name, out, result, "complex")


def _c2r(name, input, n, dim, norm, forward, out):  # noqa: A002
    if out is not None and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got {_dtype_name(out.dtype)}")
    input = _promote(input, True)
    d = _wrap(dim, input.dim())
    size = 2 * (input.shape[d] - 1) if n is None else n
    _check_n(size)
    if n is not None:
        input = _resize(input, [d], [size // 2 + 1])
    if forward:
        input = input.conj()
    result = ember._fft_c2r(input, [d], _norm_code(norm, forward), size)
    return _write_out(name, out, result, "real")


def fft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """One-dimensional discrete Fourier transform."""
    _check_tensor("fft_fft", input)
    if input.dtype.is_complex:
        return _c2c("fft", input, n, dim, norm, True, out)
    return _r2c("fft", input, n, dim, norm, True, False, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """One-dimensional inverse discrete Fourier transform."""
    _check_tensor("fft_ifft", input)
    if input.dtype.is_complex:
        return _c2c("ifft", input, n, dim, norm, False, out)
    return _r2c("ifft", input, n, dim, norm, False, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """Fourier transform of a real signal, one-sided (n // 2 + 1 outputs)."""
    _check_tensor("fft_rfft", input)
    return _r2c("rfft", input, n, dim, norm, True, True, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """Inverse of rfft: a real signal of n points (default 2 * (m - 1))."""
    _check_tensor("fft_irfft", input)
    return _c2r("irfft", input, n, dim, norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """Fourier transform of a Hermitian-symmetric signal given by its first half."""
    _check_tensor("fft_hfft", input)
    return _c2r("hfft", input, n, dim, norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """Inverse of hfft: the one-sided inverse transform of a real signal."""
    _check_tensor("fft_ihfft", input)
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


# ---- n-dimensional --------------------------------------------------------------------------


def _shape_and_dims(input, s, dim):  # noqa: A002
    """PyTorch's canonicalize_fft_shape_and_dim_args."""
    ndim = input.dim()
    dims = None
    if dim is not None:
        if isinstance(dim, int):
            dim = [dim]
        dims = [_wrap(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if isinstance(s, int):
            s = [s]
        s = list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(builtins.range(ndim - len(s), ndim))
        shape = [input.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims = list(builtins.range(ndim))
        shape = list(input.shape)
    else:
        shape = [input.shape[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


def _c2r_shape_and_dims(name, input, s, dim):  # noqa: A002
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or (not isinstance(s, int) and list(s)[-1] == -1):
        last_size = 2 * (input.shape[dims[-1]] - 1)
    else:
        last_size = shape[-1]
    _check_n(last_size)
    shape[-1] = last_size // 2 + 1
    return shape, dims, last_size


def _fftn(name, input, s, dim, norm, forward, out):  # noqa: A002
    _check_tensor(f"fft_{name}", input)
    shape, dims = _shape_and_dims(input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    result = ember._fft_c2c(x, dims, _norm_code(norm, forward), forward)
    return _write_out(name, out, result, "complex")


def _rfftn(name, input, s, dim, norm, out):  # noqa: A002
    _check_tensor(f"fft_{name}", input)
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {_dtype_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input, False), dims, shape)
    result = ember._fft_r2c(x, dims, _norm_code(norm, True), True)
    return _write_out(name, out, result, "complex")


def _irfftn(name, input, s, dim, norm, out):  # noqa: A002
    _check_tensor(f"fft_{name}", input)
    shape, dims, last_size = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    result = ember._fft_c2r(x, dims, _norm_code(norm, False), last_size)
    return _write_out(name, out, result, "real")


def _hfftn(name, input, s, dim, norm, out):  # noqa: A002
    _check_tensor(f"fft_{name}", input)
    shape, dims, last_size = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    code = _norm_code(norm, True)
    if len(dims) > 1:
        x = ember._fft_c2c(x, dims[:-1], code, True)
    result = ember._fft_c2r(x.conj(), [dims[-1]], code, last_size)
    return _write_out(name, out, result, "real")


def _ihfftn(name, input, s, dim, norm, out):  # noqa: A002
    _check_tensor(f"fft_{name}", input)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    if input.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {_dtype_name(input.dtype)}")
    x = _resize(_promote(input, False), dims, shape)
    code = _norm_code(norm, False)
    result = ember._fft_r2c(x, [dims[-1]], code, True).conj()
    if len(dims) > 1:
        result = ember._fft_c2c(result, dims[:-1], code, False)
    return _write_out(name, out, result, "complex")


def fftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """N-dimensional discrete Fourier transform (all dims by default)."""
    return _fftn("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """N-dimensional inverse discrete Fourier transform."""
    return _fftn("ifftn", input, s, dim, norm, False, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """Two-dimensional discrete Fourier transform."""
    return _fftn("fft2", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """Two-dimensional inverse discrete Fourier transform."""
    return _fftn("ifft2", input, s, dim, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """N-dimensional transform of a real signal, one-sided in the last dim."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """Two-dimensional transform of a real signal, one-sided in the last dim."""
    return _rfftn("rfft2", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """Inverse of rfftn."""
    return _irfftn("irfftn", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """Inverse of rfft2."""
    return _irfftn("irfft2", input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """N-dimensional transform of a Hermitian-symmetric signal."""
    return _hfftn("hfftn", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """Two-dimensional transform of a Hermitian-symmetric signal."""
    return _hfftn("hfft2", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """Inverse of hfftn."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """Inverse of hfft2."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


# ---- helpers --------------------------------------------------------------------------------


def _reciprocal(x):
    """1.0 / x as C++ divides: a signed infinity for a zero."""
    return 1.0 / x if x != 0 else math.copysign(math.inf, x)


def _freq_dtype(name, dtype):
    dtype = ember.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return dtype


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Sample frequencies of a length-n transform: [0, 1, ..., -(n // 2), ..., -1] / (d * n)."""
    dtype = _freq_dtype("fftfreq", out.dtype if out is not None and dtype is None else dtype)
    if n < 0:
        ember.empty((n,))  # PyTorch's error for a negative size
    result = ember.arange(n, dtype=dtype, device=device)
    result[(n + 1) // 2 :] = ember.arange(-(n // 2), 0, dtype=dtype, device=device)
    result = result.mul_(_reciprocal(n * d))
    if out is not None:
        _copy_out(out, result)
        result = out
    return result.requires_grad_(requires_grad) if requires_grad else result


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Sample frequencies of rfft: [0, 1, ..., n // 2] / (d * n)."""
    dtype = _freq_dtype("rfftfreq", out.dtype if out is not None and dtype is None else dtype)
    size = (abs(n) // 2) * (1 if n >= 0 else -1) + 1  # n / 2 + 1 in C++'s integer division
    if size < 0:
        ember.empty((size,))  # PyTorch's error for a negative size
    result = ember.arange(size, dtype=dtype, device=device).mul_(_reciprocal(n * d))
    if out is not None:
        _copy_out(out, result)
        result = out
    return result.requires_grad_(requires_grad) if requires_grad else result


def _shift(input, dim, up):  # noqa: A002
    if input.dim() == 0:
        return input.clone() if dim is None else input.roll(0)
    if dim is None:
        dims = list(builtins.range(input.dim()))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    if not dims:
        raise RuntimeError("`shifts` required")
    shifts = [(input.shape[d] + up) // 2 for d in dims]
    return ember.roll(input, shifts, dims)


def fftshift(input, dim=None):  # noqa: A002
    """Moves the zero frequency to the centre (roll by n // 2)."""
    return _shift(input, dim, 0)


def ifftshift(input, dim=None):  # noqa: A002
    """Inverse of fftshift (roll by (n + 1) // 2)."""
    return _shift(input, dim, 1)
