"""The lazy conjugate and negative bits against PyTorch: conj() and imag of a
conjugate are views that read their storage conjugated or negated; views
carry the bits, other operators see resolved operands, and writes through a
conjugate view reach its base (docs/decisions/0029-conj-bit.md)."""

from __future__ import annotations

import io
import pickle

import pytest
from conftest import torch

import ember

Z = [[1 + 2j, 3 - 1j, -0.5 + 0.25j], [2 - 3j, -1 - 1j, 0.75 + 4j]]
X = [[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]]


def pair(values=Z, dtype="complex64"):
    return ember.tensor(values, dtype=getattr(ember, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


def lib_of(x):
    return torch if isinstance(x, torch.Tensor) else ember


def check(e, t):
    """Same bits, dtype, shape and values (exactly) as torch's result."""
    assert (e.is_conj(), e.is_neg()) == (t.is_conj(), t.is_neg())
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    assert e.tolist() == t.tolist()


def test_writes_through_conj_views_reach_the_base():
    e, t = pair([1 + 2j, 3 - 1j])
    ce, ct = e.conj(), t.conj()
    check(ce, ct)
    ce[0] = 5 + 5j
    ct[0] = 5 + 5j
    check(e, t)
    e.conj().mul_(2)
    t.conj().mul_(2)
    check(e, t)
    ie, it = e.conj().imag, t.conj().imag
    check(ie, it)
    ie[0] = 7
    it[0] = 7
    check(e, t)


VIEWS = {
    "conj": lambda x: x.conj(),
    "conj_conj": lambda x: x.conj().conj(),
    "_conj": lambda x: x._conj(),
    "real": lambda x: x.conj().real,
    "imag": lambda x: x.conj().imag,
    "imag_neg_view": lambda x: x.conj().imag._neg_view(),
    "neg_view": lambda x: x._neg_view(),
    "neg_conj": lambda x: x._neg_view().conj(),
    "transpose": lambda x: x.conj().t(),
    "mH": lambda x: x.mH,
    "select": lambda x: x.conj()[1],
    "slice": lambda x: x.conj()[:, 1:],
    "reshape_view": lambda x: x.conj().reshape(3, 2),
    "view": lambda x: x.conj().view(-1),
    "expand": lambda x: x.conj()[:1].expand(3, 3),
    "unsqueeze": lambda x: x.conj().unsqueeze(0),
    "diagonal": lambda x: x.conj().diagonal(),
    "detach": lambda x: x.conj().detach(),
    "contiguous": lambda x: x.conj().contiguous(),
    "contiguous_copy": lambda x: x.conj().t().contiguous(),
    "clone": lambda x: x.conj().clone(),
    "resolve_conj": lambda x: x.conj().resolve_conj(),
    "resolve_neg": lambda x: x.conj().imag.resolve_neg(),
    "resolve_both": lambda x: x._neg_view().conj().resolve_conj(),
    "to_same": lambda x: x.conj().to(x.dtype),
    "to_double": lambda x: x.conj().to(lib_of(x).complex128),
    "conj_physical": lambda x: x.conj().conj_physical(),
    "mul": lambda x: x.conj() * 2,
    "add_conj": lambda x: x.conj() + x,
    "neg": lambda x: -x.conj(),
    "imag_add": lambda x: x.conj().imag + 1,
    "exp": lambda x: x.conj().exp(),
    "abs": lambda x: x.conj().abs(),
    "sum": lambda x: x.conj().sum(0),
    "prod": lambda x: x.conj().prod(),
    "cumsum": lambda x: x.conj().cumsum(1),
    "flip": lambda x: x.conj().flip(0),
    "cat": lambda x: lib_of(x).cat([x.conj(), x]),
    "eq": lambda x: x.conj() == x,
    "index": lambda x: x.conj()[[1, 0]],
    "where": lambda x: lib_of(x).where(x.real > 0, x.conj(), x),
    "empty_like_shape": lambda x: lib_of(x).zeros_like(x.conj()),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_bits_and_values_of_results(name):
    e, t = pair()
    check(VIEWS[name](e), VIEWS[name](t))


@pytest.mark.parametrize("name", ["conj", "transpose", "select", "slice", "imag", "detach"])
def test_views_share_storage(name):
    e, t = pair()
    re, rt = VIEWS[name](e), VIEWS[name](t)
    assert re._is_view() == rt._is_view()
    assert re.untyped_storage().data_ptr() == e.untyped_storage().data_ptr()


def test_real_conj_is_itself():
    x = ember.tensor(X)
    assert x.conj() is x and not x.conj().is_conj()
    check(x._neg_view(), torch.tensor(X)._neg_view())


INPLACE = {
    "add_": lambda x, y: x.add_(y),
    "mul_": lambda x, y: x.mul_(y),
    "copy_": lambda x, y: x.copy_(y),
    "zero_": lambda x, y: x.zero_(),
    "fill_": lambda x, y: x.fill_(2 - 1j),
    "exp_": lambda x, y: x.exp_(),
    "setitem": lambda x, y: x.__setitem__((0, slice(None)), y[1]),
    "index_put_": lambda x, y: x.index_put_((x.real.new_tensor([0, 1]).long(),), y[0]),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
@pytest.mark.parametrize("target", ["conj", "conj_t", "plain_from_conj"])
def test_inplace_writes(name, target):
    results = []
    for lib in (ember, torch):
        base = lib.tensor(Z, dtype=lib.complex64)
        other = lib.tensor(Z, dtype=lib.complex64).flip(1) * (0.5 + 1j)
        if target == "conj":
            view, src = base.conj(), other
        elif target == "conj_t":
            view, src = base.t().conj().t(), other.conj()
        else:
            view, src = base, other.conj()
        r = INPLACE[name](view, src)
        results.append((base, view, r))
    (be, ve, re), (bt, vt, rt) = results
    check(be, bt)
    check(ve, vt)
    if re is not None:
        assert re is ve and rt is vt


def test_imag_of_conj_written_in_place():
    e, t = pair()
    ie, it = e.conj().imag, t.conj().imag
    ie.add_(1)
    it.add_(1)
    check(e, t)
    check(ie, it)


@pytest.mark.parametrize("op", ["add", "mul", "neg", "sum"])
def test_out_with_a_conj_output(op):
    res = []
    for lib in (ember, torch):
        a = lib.tensor(Z, dtype=lib.complex64)
        base = lib.zeros(2, 3, dtype=lib.complex64) if op != "sum" else lib.zeros(3, dtype=lib.complex64)
        out = base.conj()
        if op == "add":
            lib.add(a, a.conj(), out=out)
        elif op == "mul":
            lib.mul(a, 2 - 1j, out=out)
        elif op == "neg":
            lib.neg(a, out=out)
        else:
            lib.sum(a, 0, out=out)
        res.append((base, out))
    check(res[0][0], res[1][0])
    check(res[0][1], res[1][1])


def test_copy_in_both_directions_and_across_dtypes():
    e, t = pair()
    for f in (
        lambda lib, x: lib.empty_like(x).copy_(x.conj()),
        lambda lib, x: lib.zeros_like(x).conj().copy_(x),
        lambda lib, x: lib.zeros_like(x).conj().copy_(x.conj()),
        lambda lib, x: lib.zeros(2, 3, dtype=lib.complex128).copy_(x.conj()),
        lambda lib, x: lib.zeros(2, 3).copy_(x.conj().imag),
        lambda lib, x: lib.zeros(2, 3, dtype=lib.complex64).conj().copy_(x.conj().imag),
    ):
        check(f(ember, e), f(torch, t))


def test_numpy_refuses_and_force_resolves():
    e, t = pair()
    for f in (lambda x: x.conj().numpy(), lambda x: x.conj().imag.numpy()):
        with pytest.raises(RuntimeError) as ee:
            f(e)
        with pytest.raises(RuntimeError) as et:
            f(t)
        assert str(ee.value) == str(et.value)
    assert e.conj().numpy(force=True).tolist() == t.conj().numpy(force=True).tolist()
    with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved conjugated tensors"):
        ember.view_as_real(e.conj())


def test_printing_item_tolist():
    e, t = pair()
    assert repr(e.conj()) == repr(t.conj()).replace("torch", "ember")
    assert repr(e.conj().imag) == repr(t.conj().imag)
    assert e.conj()[1, 2].item() == t.conj()[1, 2].item()
    assert e.conj().imag[0, 0].item() == t.conj().imag[0, 0].item()
    assert complex(e.conj()[0, 1]) == complex(t.conj()[0, 1])


def test_pickle_and_save_keep_the_bits():
    e, t = pair()
    for x in (e.conj(), e.conj().imag):
        y = pickle.loads(pickle.dumps(x))
        assert (y.is_conj(), y.is_neg(), y.tolist()) == (x.is_conj(), x.is_neg(), x.tolist())
    buf = io.BytesIO()
    ember.save(e.conj().imag, buf)
    buf.seek(0)
    check(torch.load(buf), t.conj().imag)
    buf = io.BytesIO()
    ember.save([e, e.conj()], buf)
    buf.seek(0)
    check(torch.load(buf)[1], t.conj())
    buf.seek(0)
    back = ember.load(buf)
    check(back[1], t.conj())
    back[1][0, 0] = 9j
    assert back[0][0, 0].item() == -9j


def test_public_functions():
    e, _ = pair()
    c = e.conj()
    assert ember.is_conj(c) and not ember.is_conj(e)
    assert ember.resolve_conj(e) is e and not ember.resolve_conj(c).is_conj()
    assert ember.is_neg(c.imag) and not ember.resolve_neg(c.imag).is_neg()
    assert ember.resolve_neg(e) is e
    x = e.clone()
    x.conj_physical_()
    check(x, torch.tensor(Z, dtype=torch.complex64).conj_physical())


def test_autograd_nodes_and_gradients():
    grads = []
    for lib in (ember, torch):
        a = lib.tensor(Z, dtype=lib.complex64, requires_grad=True)
        b = lib.tensor(X, requires_grad=True)
        c = a.conj()
        n = b._neg_view()
        assert type(c.grad_fn).__name__ == "ConjBackward0"
        assert type(n.grad_fn).__name__ == "NegViewBackward0"
        loss = (c * (1 + 2j)).abs().sum() + (c.imag * n).sum() + (a.mH @ a).real.sum()
        loss.backward()
        grads.append((a.grad.tolist(), b.grad.tolist()))
    (ga_e, gb_e), (ga_t, gb_t) = grads
    torch.testing.assert_close(torch.tensor(ga_e), torch.tensor(ga_t))
    torch.testing.assert_close(torch.tensor(gb_e), torch.tensor(gb_t))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "case",
    [
        "a.mH @ b",
        "a.conj() @ b.t()",
        "torch.mm(a.conj(), b.mT)",
        "torch.bmm(a.conj().unsqueeze(0), b.mH.unsqueeze(0))",
        "torch.addmm(c, a, b.mH)",
        "torch.dot(a[0].conj(), b[1])",
        "torch.vdot(a[0].conj(), b[1])",
        "torch.vdot(a[0], b[1])",
        "torch.dot(a[0].conj(), b[1].conj())",
        "torch.vdot(a[0], b[1].conj())",
        "torch.vdot(a[0].conj(), b[1].conj())",
        "torch.matmul(a.conj().unsqueeze(0), b.mH)",
        "torch.mm(a.mH, b)",
        "torch.addmm(c[:, :1], a.conj(), b.mH, beta=0.5)",
    ],
)
def test_products_with_conjugate_operands(dtype, case):
    """MKL's conjugate-transposed operands and PyTorch's dot/vdot rewriting
    (a conjugate result where PyTorch gives one)."""
    g = torch.Generator().manual_seed(0)
    at = torch.randn(5, 7, dtype=getattr(torch, dtype), generator=g)
    bt = torch.randn(5, 7, dtype=getattr(torch, dtype), generator=g)
    ct = torch.randn(5, 5, dtype=getattr(torch, dtype), generator=g)
    ae, be, ce = (ember.tensor(x.tolist(), dtype=getattr(ember, dtype)) for x in (at, bt, ct))
    re = eval(case, {"torch": ember, "a": ae, "b": be, "c": ce})
    rt = eval(case, {"torch": torch, "a": at, "b": bt, "c": ct})
    check(re, rt)


GRAD_CASES = {
    "mul_through_conj": lambda b, w: (b.conj().mul_(2 + 1j), b)[1],
    "add_returns_the_view": lambda b, w: b.conj().add_(w),
    "setitem_through_conj": lambda b, w: (b.conj().__setitem__(0, w[1]), b)[1],
    "copy_into_conj": lambda b, w: (b.conj().copy_(w * b), b)[1],
    "neg_view_of_conj_written": lambda b, w: (b.conj()._neg_view().mul_(w), b)[1],
    "conj_times": lambda b, w: b.conj() * w,
    "mH_product": lambda b, w: (b.mH @ w)[:2],
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_through_conj_views(name):
    """In-place changes through conjugate views: the base's gradient is the
    view's conjugated (CopySlices), a stale view's history conjugates too."""
    grads = []
    for lib in (ember, torch):
        a = lib.tensor(Z, dtype=lib.complex128, requires_grad=True)
        w = lib.tensor([[0.3 - 1j, 2 + 0.5j, 1j], [1.5, -2j, 0.25 + 0.75j]], dtype=lib.complex128)
        out = GRAD_CASES[name](a * 1, w)
        lib.view_as_real((out * w).resolve_conj()).sum().backward()
        grads.append((a.grad.tolist(), type(out.grad_fn).__name__))
    assert grads[0][1] == grads[1][1]
    torch.testing.assert_close(torch.tensor(grads[0][0]), torch.tensor(grads[1][0]))
