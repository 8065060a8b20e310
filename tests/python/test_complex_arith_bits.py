"""Complex products, sums with alpha and quotients give PyTorch's bits: the
vector form on whole vector pairs, GCC's fused and rounded forms of the
scalar one on remainders and strided rows (Notes [Complex products and
quotients], [Complex product remainders]); reductions and means of complex
tensors in PyTorch's order."""

import numpy as np
import pytest
from conftest import machine_has_avx512, run_under_capability, torch

import ember

DTYPES = ["complex64", "complex128"]
# Whole vector pairs, every remainder of both widths, a long odd row.
LENGTHS = list(range(1, 34)) + [77, 4000, 4001]


def _values(dname, n, seed):
    real = "float32" if dname == "complex64" else "float64"
    rng = np.random.default_rng(seed)
    z = (rng.normal(0, 3, (2, n)) * np.exp(rng.uniform(-5, 5, (2, n)))).astype(real)
    return (z[0] + 1j * z[1]).astype(dname)


def _same_bits(fn, *arrays):
    t = fn(torch, *[torch.from_numpy(a.copy()) for a in arrays]).numpy()
    e = fn(ember, *[ember.from_numpy(a.copy()) for a in arrays]).numpy()
    assert t.dtype == e.dtype and t.shape == e.shape
    assert t.tobytes() == e.tobytes(), int(np.count_nonzero(t != e))


CASES = {
    "mul": lambda L, a, b: a * b,
    "mul_strided": lambda L, a, b: a[::3] * b[::3],
    "mul_python_scalar": lambda L, a, b: a * (1.5 - 2.25j),
    "mul_tensor_first": lambda L, a, b: L.tensor(0.75 + 1.5j, dtype=a.dtype) * a,
    "mul_rows": lambda L, a, b: a[: 2 * (a.numel() // 2)].view(2, -1) * b[: a.numel() // 2],
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=1.5 - 0.5j),
    "add_alpha_scalar": lambda L, a, b: L.add(a, L.tensor(2 - 1j, dtype=a.dtype), alpha=0.5 + 3j),
    "div": lambda L, a, b: a / b,
    "div_strided": lambda L, a, b: a[::3] / b[::3],
    "div_python_scalar": lambda L, a, b: a / (1.5 - 2.25j),
    "div_real_tensor": lambda L, a, b: a / L.tensor(3),
    "div_real": lambda L, a, b: a / b.real,
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dname", DTYPES)
def test_complex_arithmetic_bits(case, dname):
    for n in LENGTHS:
        _same_bits(CASES[case], _values(dname, n, n), _values(dname, n, n + 1000))


SUM_SHAPES = [(2, 3), (4, 5), (16, 16), (3, 100), (1, 7), (5, 1001), (2, 3, 37), (1, 20000)]
SUMS = {
    "sum_last": lambda a: a.sum(-1),
    "sum_first": lambda a: a.sum(0),
    "sum_all": lambda a: a.sum(),
    "mean_last": lambda a: a.mean(-1),
    "mean_first": lambda a: a.mean(0),
    "mean_all": lambda a: a.mean(),
    "sum_last_over_3": lambda a: a.sum(-1) / 3,
    "sum_strided": lambda a: a[..., ::2].sum(-1),
    "sum_keepdim": lambda a: a.sum(-1, keepdim=True),
}


@pytest.mark.parametrize("case", sorted(SUMS))
@pytest.mark.parametrize("dname", DTYPES)
def test_complex_sum_and_mean_bits(case, dname):
    for shape in SUM_SHAPES:
        n = int(np.prod(shape))
        a = _values(dname, n, n).reshape(shape)
        _same_bits(lambda L, x: SUMS[case](x), a)


def _check_all():
    for dname in DTYPES:
        for case in CASES:
            test_complex_arithmetic_bits(case, dname)
        for case in SUMS:
            test_complex_sum_and_mean_bits(case, dname)
    return ember._C._cpu_capability()


@pytest.mark.parametrize("cap", ["avx2", "default"])
def test_complex_arithmetic_bits_other_capabilities(cap):
    run_under_capability(cap, "test_complex_arith_bits", "_check_all")


def test_complex_arithmetic_bits_avx512():
    if not machine_has_avx512():
        pytest.skip("this CPU has no AVX-512")
    run_under_capability("avx512", "test_complex_arith_bits", "_check_all")
