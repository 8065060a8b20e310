"""Values that differed from PyTorch's in an eighth fuzzing round
(tools/fuzz/fuzz.py), compared with PyTorch bit for bit where the
difference was in the last bits or a NaN's sign."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from test_hardening import check_same

import ember

NAN = float("nan")


@pytest.mark.parametrize(
    "code",
    [
        # huber_loss keeps the input's dtype (PyTorch's loss is empty_like(input)), computed in the promoted one.
        "F.huber_loss(torch.full((4,), 0.5), torch.tensor(1.9, dtype=torch.float64))",
        "F.huber_loss(torch.full((4,), 0.5), torch.tensor(1.9, dtype=torch.float64), reduction='none').dtype",
        "F.huber_loss(torch.full((4,), 0.5).to(torch.bfloat16), torch.full((4,), 1.9), delta=0.5)",
        "F.huber_loss(torch.full((4,), 0.5), torch.full((4,), 1j))",
        # poisson_nll_loss adds the Stirling term in place: the loss keeps its dtype.
        "F.poisson_nll_loss(torch.tensor(-1.9).to(torch.bfloat16), torch.arange(6).to(torch.int16), full=True)",
        "F.poisson_nll_loss(torch.tensor([0.5, 2.]).to(torch.float16), torch.tensor([3., 4.]), full=True, "
        "reduction='none')",
    ],
)
def test_loss_dtypes_as_torch(code):
    check_same(code)


def _bits(t):
    return t.detach().contiguous().numpy().tobytes()


def _addr_operands(L, dtype, n, m, layout):
    g = np.random.default_rng(n * 1000 + m)
    M = g.standard_normal((n, m)).astype(dtype)
    v1 = g.standard_normal(n).astype(dtype)
    v2 = g.standard_normal(2 * m).astype(dtype)
    self_, vec2 = L.from_numpy(M.copy()), L.from_numpy(v2.copy())[:m]
    if layout == "self_transposed":
        self_ = L.from_numpy(np.ascontiguousarray(M.T)).t()
    elif layout == "vec2_strided":
        vec2 = L.from_numpy(v2.copy())[::2]
    elif layout == "self_row":
        self_ = self_[0]
    return self_, L.from_numpy(v1.copy()), vec2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (2, 15), (3, 16), (2, 31), (4, 40), (3, 70)])
@pytest.mark.parametrize("layout", ["contiguous", "self_transposed", "vec2_strided", "self_row"])
def test_addr_bits_as_torch(dtype, shape, layout):
    # Note [addr in PyTorch's forms]: fused differently in blocks of 16 floats / 8 doubles and past them.
    for beta, alpha in ((0.7, 1.3), (1, 1), (1, 1.3), (0, 2.5)):
        t = torch.addr(*_addr_operands(torch, dtype, *shape, layout), beta=beta, alpha=alpha)
        e = ember.addr(*_addr_operands(ember, dtype, *shape, layout), beta=beta, alpha=alpha)
        assert _bits(e) == _bits(t), (beta, alpha)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_addr_gradients_as_torch(dtype):
    results = []
    for L in (torch, ember):
        g = np.random.default_rng(3)
        parts = [
            g.standard_normal(s) + (1j * g.standard_normal(s) if dtype == "complex128" else 0) for s in ((3, 4), 3, 4)
        ]
        M, a, b = (L.from_numpy(np.asarray(p, dtype=dtype)).requires_grad_() for p in parts)
        beta, alpha = (0.5 - 1j, 2 + 0.5j) if dtype == "complex128" else (0.5, 2.0)
        r = L.addr(M, a, b, beta=beta, alpha=alpha)
        grads = L.autograd.grad(r.abs().sum(), (M, a, b))
        results.append((r.grad_fn.name(), [g.numpy() for g in grads]))
    assert results[1][0] == results[0][0] == "AddrBackward0"
    for t, e in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def _nan_copies(L):
    nan32 = L.full((100,), NAN)
    nan64 = L.full((100,), NAN, dtype=L.float64)
    out = {}
    for n in (1, 15, 16, 33, 100):
        out[f"float {n}"] = nan32[:n].to(L.bfloat16)
        out[f"double {n}"] = nan64[:n].to(L.bfloat16)
    out["float strided"] = nan32[::2].to(L.bfloat16)
    out["float one of strided"] = nan32[::2][:1].to(L.bfloat16)
    out["float 0-dim"] = L.tensor(NAN).to(L.bfloat16)
    out["float (1, 1, 1)"] = L.full((1, 1, 1), NAN).to(L.bfloat16)
    out["float transposed"] = L.full((5, 7), NAN).t().to(L.bfloat16)
    out["float16"] = L.full((40,), NAN, dtype=L.float16).to(L.bfloat16)
    dst = L.empty(40, dtype=L.bfloat16)
    out["copy_"] = dst.copy_(nan32[:40])
    out["copy_ into strided"] = L.empty(80, dtype=L.bfloat16)[::2].copy_(nan32[:40])
    out["copy_ of a 0-dim"] = L.empty(3, dtype=L.bfloat16).copy_(L.tensor(NAN))
    return {k: v.contiguous().view(L.int16).tolist() for k, v in out.items()}


def test_bfloat16_nan_bits_of_copies_as_torch():
    # Note [bfloat16 NaN in copies]: 0xffff from the vector form, 0x7fc0 from the scalar one.
    t, e = _nan_copies(torch), _nan_copies(ember)
    assert e == t
    assert -1 in t["float 1"] and 32704 in t["double 33"]  # both forms are exercised


def test_bfloat16_nan_signbit_as_torch():
    check_same("torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, 1.5, -2.0]).to(torch.bfloat16).signbit()")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["24", "40", "64", "100", "strided", "broadcast"])
def test_16bit_rsqrt_bits_as_torch(dtype, layout):
    # Note [16-bit rsqrt]: blocks of 32 in float, the rest with sqrt rounded to the dtype first.
    def run(L):
        x = (L.arange(200, dtype=L.float64) * 0.173 + 0.01).to(getattr(L, dtype))
        x = {"strided": x[::2], "broadcast": x[7:8].expand(50)}.get(layout, x[: int(layout) if layout.isdigit() else 0])
        return L.rsqrt(x).contiguous().view(L.int16).tolist()

    assert run(ember) == run(torch)


def test_16bit_rsqrt_into_double_out_as_torch():
    check_same(
        "torch.rsqrt((torch.arange(24, dtype=torch.float64) * 0.73 - 1.9).to(torch.float16).reshape((2, 3, 2, 2)), "
        "out=torch.zeros(2, 3, dtype=torch.float64))"
    )


def test_exit_with_hooks_still_registered():
    # A node hook, a tensor hook and a post-accumulate hook alive at exit: their Python
    # references were released after the interpreter had finalized (a segfault at exit).
    script = (
        "import ember as torch\n"
        "w = torch.randn(3, requires_grad=True)\n"
        "m = w * w\n"
        "m.grad_fn.register_hook(lambda gi, go: None)\n"
        "m.register_hook(lambda g: g)\n"
        "w.register_post_accumulate_grad_hook(lambda p: None)\n"
        "m.sum().backward()\n"
        "print('done')\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout) == (0, "done\n"), p.stderr[-2000:]


def test_custom_function_node_repr_names_its_module():
    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    node = Double.apply(ember.ones(2, requires_grad=True)).grad_fn
    assert repr(node).startswith("<ember.autograd.function.DoubleBackward object at 0x")
    assert repr(ember.ones(2, requires_grad=True).exp().grad_fn).startswith("<ExpBackward0 object at 0x")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("zeros", [0, 1, 2])
@pytest.mark.parametrize("shape_dim", [((4, 37), 1), ((5, 6, 7), 0), ((3, 50), -1), ((6,), 0)])
def test_cumprod_gradient_bits_as_torch(dtype, zeros, shape_dim):
    # Note [cumprod gradient]: PyTorch's formula step by step, with and without zeros in a slice.
    shape, dim = shape_dim
    rng = np.random.default_rng(len(shape) * 10 + zeros)
    a = rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    for i in range(zeros):
        flat[(i * 7 + 2) % flat.size] = 0
    g = rng.standard_normal(shape).astype(dtype)
    results = []
    for L in (torch, ember):
        x = L.from_numpy(a.copy()).requires_grad_()
        (first,) = L.autograd.grad(x.cumprod(dim), x, L.from_numpy(g.copy()), create_graph=True)
        (second,) = L.autograd.grad((first * first).sum(), x)
        (plain,) = L.autograd.grad(x.cumprod(dim), x, L.from_numpy(g.copy()))
        results.append((plain.numpy().tobytes(), first.grad_fn.name(), second.numpy()))
    assert results[1][:2] == results[0][:2]
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-5 if dtype == "float32" else 1e-12)


def test_node_metadata_lives_with_the_node():
    u = ember.randn(2, requires_grad=True) * 2
    u.grad_fn.metadata["tag"] = 7  # a new wrapper of the same node sees it
    assert u.grad_fn.metadata == {"tag": 7}
    assert torch.randn(2, requires_grad=True).mul(2).grad_fn.metadata == {}


def test_unpacked_primal_node_named_as_torch():
    names = []
    for L in (torch, ember):
        w = L.randn(3, requires_grad=True)
        with L.autograd.forward_ad.dual_level():
            dual = L.autograd.forward_ad.make_dual(w, L.ones(3))
            names.append(L.autograd.forward_ad.unpack_dual(dual * 2).primal.grad_fn.name())
    assert names[1] == names[0] == "torch::autograd::Identity"


C = "((torch.arange({n}, dtype=torch.float64) * 0.73 - 1.9) * (1 - 0.5j) + 0.25j).to(torch.{dt})"


@pytest.mark.parametrize(
    "code",
    [
        # Complex var/std into out=: each part's variance in out's real dtype, added there (a complex sqrt for std).
        f"torch.std({C.format(n=1, dt='complex128')}, keepdim=True, out=torch.zeros(3, 1, dtype=torch.complex64))",
        f"torch.var({C.format(n=24, dt='complex128')}.reshape(2, 3, 2, 2), dim=2, keepdim=True, "
        "out=torch.zeros(2, 3, 1, 2).to(torch.bfloat16))",
        f"torch.std({C.format(n=0, dt='complex128')}, out={C.format(n=0, dt='complex128')})",
        f"torch.std({C.format(n=12, dt='complex64')}.reshape(3, 4), dim=1, out=torch.zeros(3, dtype=torch.complex64))",
        # A negative eps is no eps: the gradient is NaN outside [0, 1].
        "_grad(torch.logit((torch.arange(6.) * 0.4 - 0.5).requires_grad_(), eps=-3))",
        # block_diag's dtype: a 0-dim complex128 does not promote a dimensioned complex64.
        "torch.block_diag(torch.full((4,), 0.5).to(torch.complex64), torch.tensor(1 + 2j, dtype=torch.complex128))",
        "torch.block_diag(torch.ones(2, dtype=torch.int32), torch.tensor(2.5)).dtype",
    ],
)
def test_reductions_and_shapes_as_torch(code):
    check_same(code)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int64", "bool"])
@pytest.mark.parametrize("n", [1, 5, 17, 100])
def test_mode_as_torch(dtype, n):
    # Note [mode in PyTorch's order]: std::sort of (value, index) pairs; NaNs and ties as PyTorch's.
    rng = np.random.default_rng(n)
    for pool in (3, 1000):
        a = rng.integers(0, pool, (4, n)).astype("float64")
        if dtype in ("float32", "float64", "bfloat16", "float16"):
            a[rng.random((4, n)) < 0.1] = np.nan
        for dim in (0, 1):
            results = []
            for L in (torch, ember):
                values, indices = L.from_numpy(a.copy()).to(getattr(L, dtype)).mode(dim)
                bits = values.view(L.int16) if values.dtype in (L.float16, L.bfloat16) else values
                results.append((bits.numpy().tobytes(), indices.tolist()))
            assert results[1] == results[0]


def test_mode_gradient_node_as_torch():
    names = [L.tensor([1.0, 2, 2, 3], requires_grad=True).mode()[0].grad_fn.name() for L in (torch, ember)]
    assert names[1] == names[0] == "ModeBackward0"


@pytest.mark.parametrize(
    "code",
    [
        # One float result: PyTorch's all-reduce in the input's dtype, then out filled with it.
        "torch.var(torch.tensor([1.0, 3, 0, -2]), out=torch.empty(0, dtype=torch.float64))",
        "torch.std(torch.tensor([[1.1, 3.3, 0.7, -2.9]]), dim=1, out=torch.empty(0, dtype=torch.float64)).item()",
        "torch.var(torch.tensor([1.1, 3.3, 0.7, -2.9], dtype=torch.float64), out=torch.empty(0).to(torch.bfloat16))",
        "torch.std(torch.tensor([[1.1, 3.3], [0.7, -2.9]]), dim=1, out=torch.empty(0, dtype=torch.float64)).tolist()",
    ],
)
def test_var_into_wider_out_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # cov's correction given as an integer 0-dim tensor is read as the int (no uint8 wrap).
        "torch.tensor(3, dtype=torch.uint8).cov(correction=torch.tensor(253, dtype=torch.uint8))",
        # matrix_power(A, 0): the identity copied into a clone of A (a zero gradient, CopyBackwards).
        "_grad(torch.linalg.matrix_power(torch.tensor([[-1.9]], dtype=torch.float64).requires_grad_(), 0))",
        "torch.linalg.matrix_power(torch.ones(2, 3, 3, requires_grad=True), 0).grad_fn.name()",
        # A 0-dim input normed along a named dim: PyTorch's power and root (inf past the range).
        "torch.linalg.vector_norm(torch.tensor(-2.2472), 1e3, 0)",
        "F.normalize(torch.tensor(-1.9 + 1.2j, dtype=torch.complex64), 2**63 - 1, 0)",
        "torch.linalg.vector_norm(torch.tensor(-2.2472), 1e3, ())",
        # normal(0-dim mean, std): the two-tensor overload, the mean's dtype.
        "torch.normal(torch.tensor(-1.9), torch.ones(2).to(torch.bfloat16)).dtype",
        "torch.normal(torch.tensor(-1.9), torch.zeros(0).to(torch.bfloat16))",
    ],
)
def test_round8_held_out_values_as_torch(code):
    check_same(code)
