"""Gradients of complex inputs through operators whose formulas take PyTorch's conjugate-Wirtinger convention
(Note [Complex gradients]): the values PyTorch gives, for a real loss of the complex output."""

import warnings

import numpy as np
import pytest
import torch

import ember

_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((3, 4)) + 1j * _RNG.standard_normal((3, 4))
B = _RNG.standard_normal((4, 3)) + 1j * _RNG.standard_normal((4, 3))
V = _RNG.standard_normal(4) + 1j * _RNG.standard_normal(4)

OPS = {
    "tanh": lambda m, z: z.tanh(),
    "sigmoid": lambda m, z: z.sigmoid(),
    "cumprod": lambda m, z: z.cumprod(1),
    "cumprod with zero": lambda m, z: m.cat([z[:, :1], z[:, 1:2] * 0, z[:, 2:]], 1).cumprod(1),
    "std": lambda m, z: z.std(),
    "var dim": lambda m, z: z.var(1, unbiased=False),
    "var correction": lambda m, z: m.var(z, dim=0, correction=0),
    "std_mean": lambda m, z: m.std_mean(z, 1)[0],
    "var_mean": lambda m, z: m.var_mean(z, 1)[0] + m.var_mean(z, 1)[1],
    "trace": lambda m, z: z[:, :3].trace(),
    "logsumexp": lambda m, z: z.logsumexp(1),
    "roll": lambda m, z: z.roll(1, 0),
    "addmm": lambda m, z: m.addmm(z[:, :3], z, m.from_numpy(B)),
    "addmm complex alpha beta": lambda m, z: m.addmm(z[:, :3], z, m.from_numpy(B), beta=1 - 2j, alpha=0.5 + 1j),
    "linear": lambda m, z: m.nn.functional.linear(z, m.from_numpy(B).T, m.from_numpy(V[:3])),
    "addmv": lambda m, z: m.addmv(z[:, 0], z, m.from_numpy(V), alpha=2j),
    "baddbmm": lambda m, z: m.baddbmm(z[:, :3].unsqueeze(0), z.unsqueeze(0), m.from_numpy(B).unsqueeze(0), beta=1j),
    "addbmm": lambda m, z: m.addbmm(z[:, :3], z.unsqueeze(0), m.from_numpy(B).unsqueeze(0)),
    "pow tensor": lambda m, z: z.pow(z),
    "pow real base": lambda m, z: 2**z,
    "pow complex base": lambda m, z: (1 + 1j) ** z,
    "pow real self complex exponent": lambda m, z: m.from_numpy(np.abs(A)).requires_grad_().pow(z),
    "repeat": lambda m, z: z.repeat(2, 1),
    "gather": lambda m, z: z.gather(1, m.tensor([[0, 1], [2, 3], [1, 1]])),
    "index_select": lambda m, z: z.index_select(1, m.tensor([0, 2, 2])),
    "masked_fill": lambda m, z: z.masked_fill(m.tensor([True, False, True, False]), 1j),
    "unbind": lambda m, z: m.stack(z.unbind(0)[::-1]),
    "take": lambda m, z: z.take(m.tensor([0, 5, 5])),
    "index": lambda m, z: z[m.tensor([0, 2, 0])],
    "unfold": lambda m, z: z.unfold(1, 2, 1),
    "reflection pad": lambda m, z: m.nn.functional.pad(z.unsqueeze(0), (2, 1), mode="reflect"),
    "replication pad 2d": lambda m, z: m.nn.functional.pad(z.reshape(1, 1, 3, 4), (1, 2, 1, 0), mode="replicate"),
    "real to complex": lambda m, z: m.from_numpy(np.real(A)).requires_grad_().to(m.complex128) * z,
    "index_put": lambda m, z: z.index_put((m.tensor([0, 2]),), z[1] * (1 + 2j)),
    "index_put accumulate": lambda m, z: z.index_put((m.tensor([0, 0]),), z[1] * (1 + 2j), accumulate=True),
    "index_fill": lambda m, z: z.index_fill(0, m.tensor([0]), 1j),
    "index_copy": lambda m, z: z.index_copy(0, m.tensor([0, 2]), z[:2] * (1 + 2j)),
    "masked_scatter": lambda m, z: z.masked_scatter(m.tensor([True, False, True, True]), z * (2 - 1j)),
    "scatter": lambda m, z: z.scatter(0, m.tensor([[0, 1, 2, 0]]), z[:1] * 3j),
    "put": lambda m, z: z.put(m.tensor([0, 0]), z[0, :2] * 1j, accumulate=True),
    "fill_": lambda m, z: z.clone().fill_(z[0, 0] * 1j),
    "split_with_sizes": lambda m, z: m.cat(z.split([1, 3], 1)[::-1], 1),
    "squeeze dims": lambda m, z: z.unsqueeze(0).unsqueeze(2).squeeze((0, 2)),
    "zero_": lambda m, z: z.clone().zero_() + z[0],
}


def _grads(m, name):
    z = m.from_numpy(A.copy()).requires_grad_()
    out = OPS[name](m, z)
    (out.abs().sum() if out.is_complex() else out.sum()).backward()
    return z.grad.numpy()


@pytest.mark.parametrize("name", list(OPS))
def test_complex_gradient_as_pytorch(name):
    got, want = _grads(ember, name), _grads(torch, name)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_real_to_complex_backward_warns_nothing():
    x = ember.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.to(ember.cfloat).abs().sum().backward()
    assert x.grad.dtype == ember.float32 and x.grad.tolist() == [1.0, 1.0, 1.0]


def test_complex_to_bool_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.tensor([0j, 1j, 1]).bool().tolist() == [False, True, True]


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.relu(m.tensor([1j])),
        lambda m: m.nn.functional.hardtanh(m.tensor([1j])),
        lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, dtype=m.cfloat), scale_factor=2),
        lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1, dtype=m.double), "sum"),
    ],
)
def test_errors_as_pytorch(call):
    got = want = None
    try:
        call(ember)
    except Exception as e:  # noqa: BLE001
        got = (type(e).__name__, str(e))
    try:
        call(torch)
    except Exception as e:  # noqa: BLE001
        want = (type(e).__name__, str(e))
    assert got == want and want is not None


def test_printed_class_paths():
    x = ember.ones(1, requires_grad=True).exp()
    assert str(type(x)) == "<class 'ember.Tensor'>"
    assert str(type(x.grad_fn)) == "<class 'ExpBackward0'>"
    assert repr(x.grad_fn).startswith("<ExpBackward0 object at ")
    assert str(ember.Size) == "<class 'ember.Size'>"
    assert str(ember.finfo) == "<class 'ember.finfo'>" and str(ember.iinfo) == "<class 'ember.iinfo'>"
    assert str(type(ember.strided)) == "<class 'ember.layout'>"


@pytest.mark.parametrize("beta", [1j, -2j, 1 + 0j, 0j, 0.5 - 1j])
def test_products_with_complex_scales(beta):
    # A beta with a zero real part is not zero (it once left the output unread).
    def run(m):
        s, a, b = (m.from_numpy(x.copy()) for x in (A[:, :3], A, B))
        return [
            m.addmm(s, a, b, beta=beta, alpha=2j),
            m.baddbmm(s.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0), beta=beta),
            m.addbmm(s, a.unsqueeze(0), b.unsqueeze(0), beta=beta),
            m.addmv(s[:, 0], a, b[:, 0], beta=beta),
            m.zeros(3, dtype=m.cdouble).index_add(0, m.tensor([0, 0]), m.ones(2, dtype=m.cdouble), alpha=beta),
        ]

    for got, want in zip(run(ember), run(torch)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_linalg_nodes_print_as_pytorch():
    a = ember.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
    d = ember.linalg.det(a)
    assert str(type(d.grad_fn)) == "<class 'LinalgDetBackward0'>"
    assert repr(d.grad_fn).startswith("<LinalgDetBackward0 object at ")
