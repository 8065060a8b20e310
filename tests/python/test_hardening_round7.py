"""Values that differed from PyTorch's in a seventh fuzzing round
(tools/fuzz/fuzz.py): one case per class, compared with PyTorch (dtype,
shape and values; the exception class and message where PyTorch refuses)."""

from __future__ import annotations

import warnings

import pytest
import torch
from test_hardening import check_same

import ember

warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")

X = "(_x := torch.tensor([[-1.9, -1.17, -0.44]], requires_grad=True))"
C128 = "((torch.arange(24, dtype=torch.float64) * 0.73 - 1.9) * (1 - 0.5j) + 0.25j).to(torch.complex128)"


@pytest.mark.parametrize(
    "code",
    [
        # A 0-dim complex operand with a float16 tensor: complex32, as PyTorch (bfloat16 stays complex64).
        "torch.multiply(torch.tensor(1 - 0.5j).to(torch.complex64), torch.full((3, 4), 0.5).to(torch.float16))",
        "torch.tensor([1.5, -2.0]).to(torch.float16) * 1j",
        "torch.add(torch.tensor([1.5, -2.0]).to(torch.float16), torch.tensor(1j))",
        "torch.result_type(torch.tensor(1j).to(torch.complex64), torch.zeros(2).to(torch.float16))",
        "torch.result_type(torch.tensor(1j).to(torch.complex64), torch.zeros(2).to(torch.bfloat16))",
        # 16-bit pooling of a transposed (non-contiguous) input read it as contiguous.
        "F.adaptive_avg_pool1d(torch.arange(6.).to(torch.bfloat16).reshape(2, 3).t(), 2)",
        "F.avg_pool1d(torch.arange(12.).to(torch.float16).reshape(4, 3).t(), 2)",
        "F.max_pool1d(torch.arange(12.).to(torch.bfloat16).reshape(4, 3).t(), 2)",
        "F.adaptive_avg_pool2d(torch.arange(24.).to(torch.bfloat16).reshape(2, 3, 4).transpose(1, 2), 2)",
        # matrix_rank of empty matrices: zeros of the batch shape, whatever the tolerance's shape.
        "torch.linalg.matrix_rank(torch.zeros(2, 0, 3).double(), torch.full((2, 2), 0.5).double())",
        "torch.linalg.matrix_rank(torch.zeros(0, 3, 3).double(), atol=torch.full((2, 1), 0.5).double())",
        "torch.linalg.matrix_rank(torch.zeros(2, 0, 3).double(), hermitian=True)",
        # cholesky_inverse is LAPACK's potri: one triangle read, complex diagonals as LAPACK takes them.
        f"{C128}.reshape(2, 3, 2, 2).cholesky_inverse(False)",
        f"{C128}.reshape(2, 3, 2, 2).cholesky_inverse(True)",
        "torch.cholesky_inverse(torch.tensor([[2.0, 5.0], [1.0, 3.0]]), True)",
        "torch.cholesky_inverse(torch.tensor([[1.0, 0.0], [2.0, 0.0]]).double())",
        "torch.cholesky_inverse(torch.stack([torch.eye(2), torch.tensor([[1.0, 0.0], [2.0, 0.0]])]))",
    ],
)
def test_values_as_torch(code):
    check_same(code)


def test_cholesky_inverse_strides_column_major():
    a = [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 4.0]]
    assert ember.cholesky_inverse(ember.tensor(a)).stride() == torch.cholesky_inverse(torch.tensor(a)).stride()


def _nextafter_grads(lib):
    x = lib.tensor([[1.0], [2.0], [3.0]], dtype=lib.float64, requires_grad=True)
    other = lib.tensor([3.0, 0.0, 5.0], dtype=lib.float32, requires_grad=True)
    y = lib.nextafter(x, other)
    grads = lib.autograd.grad((y * lib.arange(9.0).reshape(3, 3)).sum(), [x, other])
    x32 = lib.tensor([1.0, 2.0], requires_grad=True)
    (g32,) = lib.autograd.grad(lib.nextafter(x32, lib.tensor([3.0, 0.0], dtype=lib.float64)).sum(), x32)
    return type(y.grad_fn).__name__, [(str(g.dtype), g.tolist()) for g in (*grads, g32)]


def test_nextafter_gradient_passes_to_input():
    """PyTorch's formula: the gradient reaches input where input differs from other (summed to
    its shape, in its dtype); other gets zeros."""
    assert _nextafter_grads(ember) == _nextafter_grads(torch)


@pytest.mark.parametrize(
    "code",
    [
        # var/std's gradient without degrees of freedom: PyTorch's infinite slope over everything,
        # 2 / (n - correction) as it is over given dims.
        "torch.autograd.grad(torch.var(" + X + ", correction=5), _x)[0]",
        "torch.autograd.grad(torch.var(" + X + ", 1, correction=5).sum(), _x)[0]",
        "torch.autograd.grad(torch.var(" + X + ", (0, 1), correction=3), _x)[0]",
        "torch.autograd.grad(torch.std(" + X + ", correction=2**63 - 1), _x)[0]",
        # cat into out=: its dtype checked first; all inputs skipped (empty 1-d) resizes it to [0].
        "torch.cat([torch.zeros(1), torch.ones(1)], out=torch.ones(2, dtype=torch.long))",
        "torch.cat([torch.zeros(0)], out=torch.ones(2, 2))",
        "torch.hstack([torch.zeros(0, dtype=torch.bool)], out=torch.ones(2).to(torch.complex64))",
        # histc in the input's dtype, per thread chunk (bfloat16 counts stop at 256 per chunk).
        "torch.histc((torch.arange(12.) * 0.73 - 1.9).to(torch.bfloat16))",
        "torch.histc(torch.linspace(-3, 5, 5000).sin().to(torch.bfloat16), 7)",
        "torch.histc(torch.linspace(-3, 5, 999).cos().to(torch.float16), 13, -1, 2.5)",
        "torch.histc(torch.ones(600).to(torch.bfloat16), 4)",
        "torch.histc(torch.tensor([1.0, float('nan')]))",
        "torch.histc(torch.ones(3), min=float('inf'), max=1)",
    ],
)
def test_gradients_and_outputs_as_torch(code):
    check_same(code)


def _slogdet_grads(lib, rows, dtype, transpose=False):
    A = lib.tensor(rows, dtype=getattr(lib, dtype))
    A = (A.mT if transpose else A).requires_grad_()
    sign, logabs = lib.linalg.slogdet(A)
    loss = logabs.sum()
    (g,) = lib.autograd.grad(loss, A)
    if A.is_complex():  # logdet's complex part goes through the sign (a complex product)
        return type(logabs.grad_fn).__name__, g.tolist()
    (g2,) = lib.autograd.grad(lib.logdet(A).sum(), A)
    return type(logabs.grad_fn).__name__, g.tolist(), g2.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("transpose", [False, True])
def test_slogdet_gradient_bits(dtype, transpose):
    """PyTorch's formula: A^-H diag(g) solved with the LU factors (of A^T for a contiguous
    real A), bit for bit; a singular matrix gives that solve's infinities."""
    rows = [[2.0, -1.0, 0.5, 0.3], [0.7, 3.0, -1.2, 0.1], [0.2, 0.4, 1.5, -0.6], [1.1, -0.3, 0.8, 2.2]]
    if dtype == "complex128":
        rows = [[complex(v, 0.3 * v - 0.1) for v in r] for r in rows]
    assert _slogdet_grads(ember, rows, dtype, transpose) == _slogdet_grads(torch, rows, dtype, transpose)
    singular = [[0.5, 0.5], [0.5, 0.5]]
    assert _slogdet_grads(ember, singular, "float64") == _slogdet_grads(torch, singular, "float64")


def _add_alpha_cases(lib, dtype):
    g = torch.Generator().manual_seed(3)
    out = []
    for n in (9, 33, 100, 40000):
        x = lib.tensor((torch.randn(n, generator=g) * 3).tolist()).to(getattr(lib, dtype))
        y = lib.tensor((torch.randn(n, generator=g) * 3).tolist()).to(getattr(lib, dtype))
        for alpha in (5, 0.37):
            out += [
                lib.add(x, y, alpha=alpha),
                lib.sub(x, y, alpha=alpha),
                lib.add(x[::2], y[::2], alpha=alpha),
                lib.add(x, 1.37, alpha=alpha),
                lib.add(x[:1].reshape(()), y, alpha=alpha),
            ]
    return [t.float().tolist() for t in out]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_add_with_alpha_bits(dtype):
    """Note [16-bit add with alpha]: the product rounded to the dtype outside PyTorch's
    vectorized blocks of 32 (tails, strided loops), alpha rounded to the dtype everywhere."""
    assert _add_alpha_cases(ember, dtype) == _add_alpha_cases(torch, dtype)


@pytest.mark.parametrize(
    "code",
    [
        # repeat_interleave's indices take the repeats' dtype.
        "torch.repeat_interleave(torch.tensor([1, 2], dtype=torch.int32))",
        "torch.repeat_interleave(torch.tensor([], dtype=torch.int32))",
        # ldexp with a complex exponent: pow(2, e), whose special values exp2 does not share.
        "torch.ldexp(torch.tensor([2.0, -3.0, float('inf')]).to(torch.bfloat16), "
        "torch.tensor([complex(float('inf'), 0), complex(float('-inf'), 0), 1.5 + 0.5j]))",
    ],
)
def test_more_values_as_torch(code):
    check_same(code)


def _pinv_grads(lib, rows, dtype):
    A = lib.tensor(rows, dtype=getattr(lib, dtype)).requires_grad_()
    P = A.pinverse()
    (g,) = lib.autograd.grad(P.real.sum() if A.is_complex() else P.sum(), A)
    return type(P.grad_fn).__name__, g.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("rows", [[[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]], [[1.0, 2.0], [0.3, -1.0], [2.0, 0.7]]])
def test_pinv_gradient_bits(rows, dtype):
    """PyTorch's closed-form gradient of the pseudo-inverse (m <= n and m > n orderings)."""
    assert _pinv_grads(ember, rows, dtype) == _pinv_grads(torch, rows, dtype)
    singular = [[0.5, 0.5], [0.5, 0.5]]
    assert _pinv_grads(ember, singular, "float32") == _pinv_grads(torch, singular, "float32")


@pytest.mark.parametrize(
    "code",
    [
        # nansum into an integer dtype: nan_to_num first (NaN 0, infinities the dtype's extremes).
        "torch.nansum(torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, 1.5, -2.0]).to(torch.bfloat16),"
        " dtype=torch.int64)",
        "torch.nansum(torch.tensor([float('nan'), float('inf'), 1.5, 2**40]).to(torch.float16), dtype=torch.int32)",
        # rrelu's tensor bounds are read as numbers.
        "torch.nn.functional.rrelu_(torch.tensor(-1.9).double(), torch.tensor(-1.9).to(torch.float16))",
        # native_dropout of an empty tensor: the input and an empty mask of its dtype.
        "torch.native_dropout(torch.zeros(2, 0, dtype=torch.int64), 0.5, True)",
        # PyTorch's order of errors.
        "torch.zeros(2, 0, 3, dtype=torch.uint8).histc()",
        "torch.histc(torch.tensor([1, 2, 3], dtype=torch.int16), out=torch.zeros(3))",
        "torch.amax(torch.zeros(2, 0, 3).bfloat16(), dim=-2, out=torch.zeros(2, 0, 3).to(torch.complex64))",
        "torch.nuclear_norm(torch.ones(3, 4, dtype=torch.complex128), -2)",
        "torch.linalg.matrix_norm(torch.ones(3, 4), dim=(0, 5))",
        "torch.isclose(torch.tensor([True, False]), torch.tensor([False, False]), rtol=0.5, atol=1e300)",
        "torch.ones(2, dtype=torch.complex128).add(2**63)",
        # nanmean into out=: nansum there, divided there (a complex out of an empty input is nan+nanj).
        "torch.nanmean(torch.zeros(2, 0, 3).bfloat16(), out=torch.zeros(3).to(torch.complex64))",
        "torch.nanmean(torch.tensor([1.0, float('nan'), 2.5]).bfloat16(), out=torch.zeros(()).to(torch.complex64))",
        "torch.nansum(torch.zeros(0), out=torch.zeros((), dtype=torch.int64))",
        # logsumexp of complex numbers into out=: summed in out's dtype (a real one drops the imaginary parts).
        f"torch.logsumexp({C128}.reshape(2, 3, 2, 2), 3, out=torch.zeros(0))",
        f"torch.logsumexp({C128}.to(torch.complex64).reshape(4, 6), 1, out=torch.zeros(0, dtype=torch.complex128))",
        # rsub of a 0-dim tensor and a number: the tensor's dtype; softshrink's tensor lambd read as a number.
        "torch.rsub(torch.tensor(-1.9).bfloat16(), -1.5)",
        "F.softshrink(torch.full((3, 4), 0.5), torch.tensor(253, dtype=torch.uint8))",
        # vector_norm with nothing to reduce: 0 for a NaN ord too; the empty dim named in its error.
        "F.pairwise_distance(torch.zeros(0, dtype=torch.complex128), torch.zeros(0, dtype=torch.int64), float('nan'))",
        "torch.linalg.vector_norm(torch.ones(3, 0), float('nan'), -1)",
        "torch.linalg.vector_norm(torch.ones(3, 0), -1, (0, -1))",
        # batch_norm of an empty input: out * weight[0] + bias[0] (0-dim operands, IndexError when empty).
        "F.batch_norm(torch.zeros(2, 0, 3).half(), None, None, bias=torch.tensor([1 + 1j, 2j]), training=True)",
        "F.batch_norm(torch.zeros(2, 0, 3), None, None, weight=torch.zeros(0), training=True)",
        "torch.addr(torch.tensor([1, 2, 3], dtype=torch.int8).expand(2, 3), torch.tensor([1.5, -2.0]).bfloat16(),"
        " torch.tensor([-3, -2, -1]), beta=0.5)",
    ],
)
def test_last_values_and_errors_as_torch(code):
    check_same(code)
