"""Matrix products bit for bit against PyTorch: with MKL 2024.2, the library
PyTorch's CPU wheel computes them with, called as PyTorch calls it (Note [MKL
for matrix products] in src/ember/cpu/Blas.cpp), every product of these
shapes equals PyTorch's to the last bit, forwards and backwards."""

from __future__ import annotations

import platform

import numpy as np
import pytest
from conftest import cpu_flags, torch

import ember

ON_MKL_PLATFORM = platform.system() == "Linux" and platform.machine() == "x86_64"
SHAPES = [(32, 4, 1), (32, 4, 8), (64, 16, 4), (5, 3, 7), (128, 64, 32), (1, 64, 128), (64, 784, 128), (33, 100, 17)]


def test_mkl_is_the_blas_where_the_package_exists():
    if not ON_MKL_PLATFORM:
        pytest.skip("the mkl package is a dependency on x86-64 Linux only")
    assert "Math Kernel Library Version 2024.2" in ember.__config__.show()


def same(got, want):
    return got.shape == tuple(want.shape) and np.array_equal(got.detach().numpy(), want.detach().numpy())


@pytest.mark.skipif(not ON_MKL_PLATFORM, reason="bit-identical products need MKL (x86-64 Linux)")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_products_equal_torch_bit_for_bit(shape, dtype):
    m, k, n = shape
    gen = np.random.default_rng(m * 1000 + k * 10 + n)
    arrays = [gen.standard_normal(s).astype(dtype) for s in ((m, k), (k, n), (n,), (n, k), (k,), (m, n))]
    t = [torch.from_numpy(a.copy()) for a in arrays]
    e = [ember.from_numpy(a.copy()) for a in arrays]
    a, b, bias, w, v, g = range(6)
    for name, fn in {
        "mm": lambda L, x: x[a] @ x[b],
        "mm of a transposed copy": lambda L, x: x[a].t().contiguous().t() @ x[b],
        "addmm": lambda L, x: L.addmm(x[bias], x[a], x[b]),
        "linear": lambda L, x: L.nn.functional.linear(x[a], x[w], x[bias]),
        "mv": lambda L, x: x[a] @ x[v],
        "dot": lambda L, x: x[v] @ x[v],
        "matmul 3-d by 2-d": lambda L, x: x[a].expand(2, m, k) @ x[b],
    }.items():
        assert same(fn(ember, e), fn(torch, t)), name

    grads = []
    for lib, x in ((torch, t), (ember, e)):
        leaves = [x[i].clone().requires_grad_() for i in (a, w, bias)]
        lib.nn.functional.linear(*leaves).backward(x[g])
        grads.append([leaf.grad for leaf in leaves])
    for want, got, name in zip(grads[0], grads[1], ("input", "weight", "bias")):
        assert same(got, want), f"linear's gradient of {name}"


# Where PyTorch multiplies bfloat16 matrices with oneDNN (Note [16-bit
# products through oneDNN]); elsewhere both take loops of their own.
ONEDNN_BF16 = {"avx512bw", "avx512vl", "avx512dq"} <= cpu_flags()


@pytest.mark.skipif(not ONEDNN_BF16, reason="PyTorch takes oneDNN for bfloat16 products on AVX-512 CPUs only")
@pytest.mark.parametrize("shape", [(64, 64, 64), (128, 256, 64), (32, 1000, 48), (17, 33, 65), (3, 40, 50)])
def test_bfloat16_products_equal_torch_bit_for_bit(shape):
    m, k, n = shape
    gen = np.random.default_rng(m + k + n)
    arrays = [gen.standard_normal(s) for s in ((m, k), (k, n), (n,), (4, m, k), (4, k, n), (4, m, n))]

    def run(L):
        a, b, bias, ba, bb, bc = (L.from_numpy(x).to(L.bfloat16) for x in arrays)
        return [
            a @ b,
            a.t().contiguous().t() @ b,
            L.addmm(bias, a, b),
            L.nn.functional.linear(a, b.t(), bias),
            L.bmm(ba, bb),
            L.baddbmm(bc, ba, bb),
            ba @ b,
        ]

    for i, (got, want) in enumerate(zip(run(ember), run(torch))):
        assert same(got.float(), want.float()), i


_OUT_A = np.random.default_rng(11).standard_normal((5, 4))
_OUT_B = np.random.default_rng(12).standard_normal((4, 6))
_OUT_C = np.random.default_rng(13).standard_normal((5, 6))
_OUT_S = np.random.default_rng(14).standard_normal((6, 6))


def _filled_nan(lib):
    c = lib.tensor(_OUT_C)
    c.fill_(float("nan"))
    return c.addmm_(lib.tensor(_OUT_A), lib.tensor(_OUT_B), beta=0)


def _into(lib, out, fn):
    fn(out)
    return out


@pytest.mark.parametrize(
    "case",
    [
        _filled_nan,  # beta 0 ignores self, NaN included
        lambda L: L.tensor(_OUT_C).addmm_(L.tensor(_OUT_A), L.tensor(_OUT_B), beta=2, alpha=3),
        lambda L: L.tensor(_OUT_C.T.copy()).t().addmm_(L.tensor(_OUT_A), L.tensor(_OUT_B)),
        lambda L: (
            L.tensor(_OUT_C).bfloat16().addmm_(L.tensor(_OUT_A).bfloat16(), L.tensor(_OUT_B).bfloat16(), alpha=-1)
        ),
        lambda L: _into(
            L,
            L.zeros(6, 5, dtype=L.float64).t(),
            lambda o: L.addmm(L.tensor(_OUT_C), L.tensor(_OUT_A), L.tensor(_OUT_B), out=o),
        ),
        lambda L: _into(L, L.zeros(3, 3, dtype=L.float64), lambda o: L.mm(L.tensor(_OUT_A), L.tensor(_OUT_B), out=o)),
        lambda L: _into(L, L.tensor(_OUT_S), lambda s: L.mm(s, s, out=s)),
        lambda L: _into(
            L,
            L.empty(5, 6, dtype=L.float64),
            lambda o: L.addmm(L.tensor(_OUT_C[0]), L.tensor(_OUT_A), L.tensor(_OUT_B), out=o),
        ),
        lambda L: _into(L, L.tensor(_OUT_C), lambda c: L.addmm(c, L.tensor(_OUT_A), L.tensor(_OUT_B), out=c)),
        lambda L: _into(L, L.tensor(_OUT_B[:, :4].copy()), lambda b: L.mm(L.ones(4, 4, dtype=L.float64), b, out=b)),
    ],
)
def test_products_written_into_out(case):
    """mm/addmm written straight into a suitable out= or in-place tensor give the bits of a fresh result."""
    import warnings

    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = case(lib)
        results.append((tuple(t.shape), tuple(t.stride()), t.float().numpy()))
    assert results[1][:2] == results[0][:2]
    np.testing.assert_array_equal(results[1][2], results[0][2])
