"""Values that differed from PyTorch's in a ninth fuzzing round
(tools/fuzz/fuzz.py)."""

from __future__ import annotations

import pytest
from conftest import torch
from test_hardening import check_same

import ember


@pytest.mark.parametrize(
    "code",
    [
        # isin compares in result_type's dtype: a Python number or 0-dim operand wraps into the other's dtype.
        "torch.isin(-2**62, torch.tensor([0, 1, -3, 7, 2, -1]).to(torch.int16))",
        "torch.isin(torch.tensor(65536), torch.tensor([0, 1, -3, 7, 2, -1]).to(torch.int16))",
        "torch.isin(torch.tensor([0, 1, -3, 7, 2, -1]).to(torch.int16), torch.tensor(65535))",
        "torch.isin(torch.tensor([0, 1, -3]).to(torch.int16), torch.tensor([65536, 3]))",
        "torch.isin(torch.tensor([0, 1, -3]).to(torch.uint8), -3, invert=True)",
        "torch.isin(2.5, torch.tensor([2, 3]))",
        # Many test elements: both sides flattened and sorted in their promoted dtype (no wrapping).
        "torch.isin(-2**62, (torch.arange(24) % 7 - 3).to(torch.int8).reshape((2, 3, 2, 2)))",
        "torch.isin(torch.tensor(-2**62), (torch.arange(24) % 7 - 3).to(torch.int8))",
        "torch.isin(torch.tensor([256] * 40), (torch.arange(24) % 7 - 3).to(torch.int8)).any()",
        "torch.isin((torch.arange(24) % 7 - 3).to(torch.int8), torch.tensor([256, 0])).any()",
    ],
)
def test_isin_dtypes_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # margin is a double in PyTorch's signature: integer inputs give a float loss.
        "F.margin_ranking_loss(torch.arange(3) - 3, torch.arange(3) - 3, torch.arange(3) - 3, 2)",
        "F.margin_ranking_loss(torch.arange(3) - 3, torch.arange(3), torch.ones(3, dtype=torch.int64), "
        "reduction='none')",
    ],
)
def test_margin_ranking_loss_dtype_as_torch(code):
    check_same(code)


def _assigned(dtype, value):
    return f"(lambda x: (x.__setitem__(0, {value}), x)[1])(torch.zeros(2, dtype=torch.{dtype}))"


@pytest.mark.parametrize(
    "dtype", ["float16", "bfloat16", "float32", "float64", "int64", "uint8", "int8", "bool", "complex64", "complex128"]
)
@pytest.mark.parametrize(
    "value",
    [
        "5+5j",
        "5+0j",
        "1e300+0j",
        "complex('nan+1j')",
        "complex('nan+0j')",
        "-3+0j",
        "complex('inf+0j')",
        "complex('inf+1e300j')",
        "1e300",
        "70000.",
        "float('nan')",
    ],
)
def test_python_number_assignment_as_torch(dtype, value):
    # x[i] = complex number (was a TypeError); 16-bit floats take a large float as inf.
    check_same(_assigned(dtype, value))


@pytest.mark.parametrize(
    "code",
    [
        # A number on the left adds as tensor.add(number): a complex infinity keeps its zero imaginary part.
        "0 + torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5]).to(torch.complex64)",
        "torch.sym_sum(torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0]).to(torch.complex64))",
        "0.5 + torch.tensor(float('inf')).to(torch.complex128)",
        "(1+1j) + torch.tensor(float('-inf')).to(torch.complex64)",
        "2 - torch.tensor(float('inf')).to(torch.complex64)",
        "1 + torch.tensor([1.5, 2.25]).to(torch.bfloat16)",
    ],
)
def test_number_on_the_left_as_torch(code):
    check_same(code)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["bmm", "baddbmm"])
def test_small_complex_bmm_with_infinities_as_torch(dtype, op):
    # The small-matrix loop multiplies part by part, as c10::complex (no C99 inf/nan recovery).
    import itertools

    import numpy as np
    import torch

    import ember

    parts = [float("inf"), -float("inf"), float("nan"), 0.0, 1.5, 1e300]
    values = np.array([complex(a, b) for a, b in itertools.product(parts, parts)], dtype=dtype)
    n = len(values)  # every pair of values multiplied once: batch i is values[i] times the row of all values
    a = values.reshape(n, 1, 1)
    b = np.tile(values, (n, 1)).reshape(n, 1, n)
    c = np.roll(b, 1).reshape(n, 1, n)
    results = []
    for L in (torch, ember):
        x, y, z = (L.from_numpy(v.copy()) for v in (a, b, c))
        r = L.bmm(x, y) if op == "bmm" else L.baddbmm(z, x, y, beta=0.5 - 1j, alpha=2 + 0.5j)
        results.append(repr(r.tolist()))
    assert results[0] == results[1]


def _complex_data(dtype, shape, seed=0):
    import numpy as np

    g = np.random.default_rng(seed)
    return (g.standard_normal(shape) + 1j * g.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("dim", [0, 1])
def test_complex_cumprod_bits_as_torch(dtype, dim):
    # complex128 products are c10::complex's, fused where the build has FMA (1795 of 2000 differed).
    import numpy as np
    import torch

    import ember

    z = _complex_data(dtype, (50, 40))
    t, e = (L.from_numpy(z.copy()).cumprod(dim).numpy() for L in (torch, ember))
    assert np.array_equal(t.view(t.real.dtype), e.view(e.real.dtype))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("exponent", [3, -2, 0.5, -0.5, -1, 2.5, 1j])
def test_complex_pow_special_exponents_as_torch(dtype, exponent):
    # PyTorch computes z**3 as z*z*z, z**-2 as 1/(z*z), and 0.5/-0.5/-1 as sqrt/rsqrt/reciprocal
    # (e^(w log z) differed in most elements). 64 elements: whole vectors only, no remainder loop.
    import numpy as np
    import torch

    import ember

    z = _complex_data(dtype, (64,), seed=3)
    t, e = (L.from_numpy(z.copy()).pow(exponent).numpy() for L in (torch, ember))
    assert np.array_equal(t.view(t.real.dtype), e.view(e.real.dtype), equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("contiguous", [True, False])
def test_solve_gradients_bits_as_torch(dtype, left, contiguous):
    # The backward solves through the forward's LU factors (getrs with the adjoint), as PyTorch's
    # (refactoring A^H differed in the last bits, and wholly for nearly singular A).
    import numpy as np
    import torch

    import ember

    g = np.random.default_rng(0)
    a, b, gx = (g.standard_normal(s).astype(dtype) for s in ((4, 5, 5), (4, 5, 3), (4, 5, 3)))
    if not left:
        b, gx = b.swapaxes(-1, -2).copy(), gx.swapaxes(-1, -2).copy()
    grads = []
    for L in (torch, ember):
        A = L.from_numpy(a.copy())
        A = (A if contiguous else A.mT.contiguous().mT).requires_grad_()
        B = L.from_numpy(b.copy()).requires_grad_()
        L.linalg.solve(A, B, left=left).backward(L.from_numpy(gx.copy()))
        grads.append([t.grad.resolve_conj().numpy() if L is torch else t.grad.numpy() for t in (A, B)])
    for t, e in zip(*grads):
        assert np.array_equal(t, e)


@pytest.mark.parametrize(
    "code",
    [
        # Python-level out= writes complex results exactly (a complex product by 1 turned inf + nan j into nan).
        "(lambda o: (torch.float_power(torch.tensor([2.0, -0.0]).to(torch.float16), "
        "torch.tensor([float('inf'), 1]).to(torch.complex64), out=o), o)[1])(torch.zeros(2, dtype=torch.complex128))",
    ],
)
def test_complex_out_written_exactly_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.spmm(m.arange(3), m.ones(2, 2)),
        lambda m: m.spmm(m.ones(()), m.ones(())),
        lambda m: m.spmm(m.ones(2, 3), m.ones(3, 2)),
        lambda m: m.spmm(m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(), m.ones(2, 3)),
        lambda m: m.rsub(m.ones(4), m.ones(2, 4), -1),
        lambda m: m.rsub(m.ones(3), 2, alpha=True),
        lambda m: m.rsub(m.ones(3, dtype=m.int32), 2.5),
        lambda m: m.rsub(m.ones(3), 2, alpha=2),
    ],
)
def test_spmm_is_mm_and_rsub_alpha_is_keyword(call):
    """spmm is PyTorch's mm binding (dense operands too); rsub's alpha is
    keyword-only and a bool alpha needs a bool result."""

    def outcome(m):
        try:
            r = call(m)
        except Exception as e:  # the type is the comparison
            return type(e).__name__
        return str(r.dtype).split(".")[-1], r.tolist() if r.layout == m.strided else r.to_dense().tolist()

    assert outcome(ember) == outcome(torch)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.ones(2, 3, dtype=m.complex64).amin(),
        lambda m: m.ones(2, 3, dtype=m.complex128).amax((0, 1)),
        lambda m: m.ones(2, 3, dtype=m.complex64).min(1),
        lambda m: m.ones(2, 3, dtype=m.complex64).max(0, keepdim=True),
        lambda m: m.ones(2, 3, dtype=m.complex64).aminmax(),
        lambda m: m.ones(2, 3, dtype=m.complex64).aminmax(dim=1),
        lambda m: m.ones(0, dtype=m.complex64).amax(),
        lambda m: m.ones(3, dtype=m.bool).trace(),
        lambda m: m.ones(3, dtype=m.int32).trace(),
        # argument checks in PyTorch's order
        lambda m: m.ones(1).slice_scatter(m.ones(2, 3), 1),
        lambda m: m.ones(2, 3).slice_scatter(m.ones(5, 5), 1),
        lambda m: m.ones(0).kthvalue(4),
        lambda m: m.ones(0, 3).kthvalue(1, 0),
        lambda m: m.ones(2, 0).kthvalue(5, 0),
        lambda m: m.ones(2, 3, 2, 2).repeat_interleave(-3, 5, output_size=1),
        lambda m: m.ones(3).repeat_interleave(-1),
        lambda m: m.ones(2, 3).sspaddmm(m.ones(2, 2), m.ones(2, 3)),
    ],
)
def test_complex_extremes_and_trace_refuse_as_pytorch(call):
    """Complex amin/amax name PyTorch's kernels (an internal assertion before),
    max/min over a dim and aminmax refuse in its words; trace checks the
    dtype before the matrix."""

    def outcome(m):
        try:
            call(m)
        except Exception as e:  # the type and message are the comparison
            return type(e).__name__, str(e)
        return "ok"

    assert outcome(ember) == outcome(torch)


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"])
def test_inplace_comparison_in_a_graph(name):
    """x.gt_(y) on a tensor in a graph: the gradient through it is zero, as
    PyTorch's (Ember kept the graph of what x held before); leaves refuse."""

    def outcome(m):
        x = m.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x * 2
        getattr(y, name)(2.0)
        (y * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        try:
            getattr(m.ones(2, requires_grad=True), name)(1)
            leaf = "ok"
        except RuntimeError as e:
            leaf = str(e)
        return y.tolist(), x.grad.tolist(), leaf

    assert outcome(ember) == outcome(torch)
