"""complex64/complex128 pointwise operators on CUDA (kernels/ComplexKernels.cu):
arithmetic with tensors and with numbers, the functions PyTorch defines on
complex inputs, tests, comparisons and the complex<->real maps, against
Ember's CPU result and PyTorch's CUDA result. Skips, with the reason,
without a CUDA device."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="torch builds the samples")

COMPLEX = ["complex64", "complex128"]
# Functions (thrust's on CUDA, std::complex's on the CPU) may differ by a few ulps.
TOL = {"complex64": (1e-5, 1e-6), "complex128": (1e-13, 1e-14)}


def sample(dtype, shape=(3, 5), seed=0, low=-2.0, high=2.0):
    gen = torch.Generator().manual_seed(seed)
    parts = torch.rand(tuple(shape) + (2,), generator=gen, dtype=torch.float64) * (high - low) + low
    return torch.view_as_complex(parts).to(getattr(torch, dtype))


def edges(dtype):
    """Zeros, infinities and NaNs in either part."""
    inf, nan = math.inf, math.nan
    values = [0j, 1 + 0j, complex(inf, 0), complex(0, inf), complex(inf, inf), complex(nan, 1), complex(1, nan)]
    values += [complex(-inf, 2), complex(3, -inf), complex(1e-30, 1e-30), complex(-0.0, 0.0)]
    return torch.tensor(values, dtype=getattr(torch, dtype))


UNARY = {
    "neg": lambda m, x: m.neg(x),
    "conj_physical": lambda m, x: m.conj_physical(x),
    "exp": lambda m, x: m.exp(x),
    "log": lambda m, x: m.log(x),
    "sqrt": lambda m, x: m.sqrt(x),
    "rsqrt": lambda m, x: m.rsqrt(x),
    "sin": lambda m, x: m.sin(x),
    "cos": lambda m, x: m.cos(x),
    "tan": lambda m, x: m.tan(x),
    "sinh": lambda m, x: m.sinh(x),
    "cosh": lambda m, x: m.cosh(x),
    "tanh": lambda m, x: m.tanh(x),
    "asin": lambda m, x: m.asin(x),
    "acos": lambda m, x: m.acos(x),
    "atan": lambda m, x: m.atan(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "reciprocal": lambda m, x: m.reciprocal(x),
    "sgn": lambda m, x: m.sgn(x),
    "abs": lambda m, x: m.abs(x),
    "angle": lambda m, x: m.angle(x),
    "isnan": lambda m, x: m.isnan(x),
    "isinf": lambda m, x: m.isinf(x),
    "isfinite": lambda m, x: m.isfinite(x),
}

BINARY = {
    "add": lambda m, a, b: m.add(a, b),
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2 - 1j),
    "sub": lambda m, a, b: m.sub(a, b),
    "mul": lambda m, a, b: m.mul(a, b),
    "div": lambda m, a, b: m.div(a, b),
    "eq": lambda m, a, b: m.eq(a, b),
    "ne": lambda m, a, b: m.ne(a, b),
}

WITH_NUMBER = {
    "add_number": lambda m, a: a + (1.5 - 2j),
    "mul_number": lambda m, a: a * (0.5 + 3j),
    "div_number": lambda m, a: a / (2 - 1j),  # a times the reciprocal, as PyTorch's CUDA kernel
    "rdiv_number": lambda m, a: (1 + 1j) / a,
    "eq_number": lambda m, a: a == (1 + 0j),
}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(cuda_compare, name, dtype):
    fn = UNARY[name]
    cuda_compare(fn, sample(dtype), tol=TOL[dtype])
    # Strided input; Ember's angle of a complex tensor returns its input's layout, torch's a contiguous one.
    cuda_compare(fn, sample(dtype, (4, 6)).t(), tol=TOL[dtype], strides=name != "angle")
    # Infinities and NaNs: the functions below are library-specific there (torch's CPU and CUDA
    # results differ), so those are compared on finite inputs only.
    if name not in ("tan", "tanh", "asin", "acos", "atan", "sigmoid", "rsqrt", "reciprocal"):
        cuda_compare(fn, edges(dtype), tol=TOL[dtype])


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(cuda_compare, name, dtype):
    fn = BINARY[name]
    a, b = sample(dtype, seed=1), sample(dtype, seed=2)
    cuda_compare(fn, a, b, tol=TOL[dtype])
    cuda_compare(fn, a, b[:1], tol=TOL[dtype])  # broadcast
    cuda_compare(fn, a.t(), sample(dtype, (5, 3), seed=3), tol=TOL[dtype])  # transposed


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(WITH_NUMBER))
def test_number_operand(cuda_compare, name, dtype):
    """A Python number is a 0-dim CPU operand: complex128's travels as 16 bytes."""
    cuda_compare(WITH_NUMBER[name], sample(dtype, seed=4), tol=TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_and_polar(cuda_compare, dtype):
    gen = torch.Generator().manual_seed(5)
    re = torch.rand(4, 3, generator=gen, dtype=getattr(torch, dtype))
    im = torch.rand(4, 3, generator=gen, dtype=getattr(torch, dtype)) * 6 - 3
    cuda_compare(lambda m, a, b: m.complex(a, b), re, im, exact=True)
    cuda_compare(lambda m, a, b: m.polar(a, b), re, im, tol=(1e-6, 1e-7))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_angle_of_real(cuda_compare, dtype):
    x = torch.tensor([-2.0, -0.0, 0.0, 3.0, math.nan, -math.inf], dtype=getattr(torch, dtype))
    cuda_compare(lambda m, a: m.angle(a), x, exact=True)


def test_inplace_and_out(cuda_compare):
    a, b = sample("complex64", seed=6), sample("complex64", seed=7)
    cuda_compare(lambda m, x, y: x.clone().mul_(y), a, b)
    cuda_compare(lambda m, x, y: m.add(x, y, out=m.empty_like(x)), a, b)


def test_dtype_errors_name_cuda_kernels():
    """An operator without complex support on CUDA raises PyTorch's error."""
    import ember

    x = ember.ones(3, dtype=ember.complex64, device="cuda")
    with pytest.raises(RuntimeError, match="clamp is not supported for complex types"):
        ember.clamp(x, min=0)
