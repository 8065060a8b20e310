"""Autograd against torch: higher-order gradients, autograd.grad, hooks,
retain_grad, grad modes, detach/version counters, error types and messages,
gradcheck."""

from __future__ import annotations

import pytest
from conftest import pair, torch

import ember


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


def same_error(f_e, f_t):
    got, want = err(f_e), err(f_t)
    assert want is not None, "torch did not raise"
    assert got == want


def test_double_backward_matches():
    for lib, x in zip((ember, torch), pair([1.0, -2.0, 3.0], "float64", requires_grad=True)):
        y = (x * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        assert g.requires_grad
        (g2,) = lib.autograd.grad(g.sum(), x)
        assert g2.tolist() == [6.0, -12.0, 18.0]


def test_backward_create_graph_accumulates_graph():
    for lib, x in zip((ember, torch), pair([2.0], "float64", requires_grad=True)):
        (x * x * x).sum().backward(create_graph=True)
        assert x.grad.requires_grad
        assert x.grad.tolist() == [12.0]


def test_grad_allow_unused_and_errors():
    (xe, xt), (ye, yt) = pair([1.0], "float32", requires_grad=True), pair([2.0], "float32", requires_grad=True)
    assert ember.autograd.grad((xe * 2).sum(), [xe, ye], allow_unused=True)[1] is None
    same_error(lambda: ember.autograd.grad((xe * 2).sum(), [xe, ye]),
               lambda: torch.autograd.grad((xt * 2).sum(), [xt, yt]))


def test_grad_outputs_and_non_scalar():
    for lib, x in zip((ember, torch), pair([1.0, 2.0], "float64", requires_grad=True)):
        y = x * 3
        (g,) = lib.autograd.grad(y, x, lib.tensor([1.0, 10.0], dtype=lib.float64))
        assert g.tolist() == [3.0, 30.0]


def test_error_messages_match():
    def freed(lib, x):
        y = (x * x).sum()
        y.backward()
        y.backward()

    def saved_modified(lib, x):
        b = x * 2
        y = (b * b).sum()
        b.add_(1)
        y.backward()

    def leaf_saved_modified(lib, x):
        w = x.detach().clone().requires_grad_(True)
        c = x.detach().clone()
        y = (w * c).sum()
        c.add_(1)
        y.backward()

    cases = [
        freed,
        saved_modified,
        leaf_saved_modified,
        lambda lib, x: x.add_(1),
        lambda lib, x: lib.ones(2).sum().backward(),
        lambda lib, x: (x * 2).backward(),
        lambda lib, x: lib.tensor([1, 2]).requires_grad_(),
        lambda lib, x: (x * 2).requires_grad_(False),
        lambda lib, x: (x * 2).sum().backward(lib.ones(2)),
    ]
    for case in cases:
        xe, xt = pair([1.0, 2.0], "float32", requires_grad=True)
        same_error(lambda: case(ember, xe), lambda: case(torch, xt))


def test_tensor_hooks_and_retain_grad():
    results = []
    for lib, x in zip((ember, torch), pair([1.0, 2.0], "float64", requires_grad=True)):
        seen = []
        x.register_hook(lambda g: seen.append(g.tolist()))
        h = x * 3
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        z = h * h
        z.sum().backward()
        results.append((x.grad.tolist(), h.grad.tolist(), seen, h.retains_grad, h.is_leaf))
    assert results[0] == results[1]


def test_node_hooks_and_next_functions():
    for lib, x in zip((ember, torch), pair([1.0, 2.0], "float32", requires_grad=True)):
        y = x * 2
        calls = []
        y.grad_fn.register_hook(lambda gi, go: calls.append((len(gi), len(go))))
        y.sum().backward()
        assert calls == [(2, 1)]
        acc = y.grad_fn.next_functions[0][0]
        assert type(acc).__name__ == "AccumulateGrad"
        assert acc.variable is x
        assert y.grad_fn is y.grad_fn


def test_grad_modes():
    for lib, x in zip((ember, torch), pair([1.0], "float32", requires_grad=True)):
        with lib.no_grad():
            assert not (x * 2).requires_grad
            with lib.enable_grad():
                assert (x * 2).requires_grad
        assert (x * 2).requires_grad

        @lib.no_grad()
        def f(t):
            return t * 2

        assert not f(x).requires_grad
        lib.set_grad_enabled(False)
        assert not lib.is_grad_enabled()
        lib.set_grad_enabled(True)
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
        assert lib.is_grad_enabled()
        with lib.inference_mode():
            assert not (x * 2).requires_grad
        assert (x * 2).requires_grad


def test_detach_shares_storage_and_version():
    for lib, x in zip((ember, torch), pair([1.0, 2.0], "float32", requires_grad=True)):
        d = x.detach()
        assert not d.requires_grad and d.is_leaf
        v = x._version
        d.add_(1)
        assert x._version == v + 1
        assert x.tolist() == [2.0, 3.0]
        assert d.data_ptr() == x.data_ptr()


def test_views_share_version_counter():
    for lib in (ember, torch):
        a = lib.ones(2, 3)
        v = a.view(6)
        p = a.permute(1, 0)
        before = a._version
        v.add_(1)
        assert a._version == p._version == before + 1


def test_gradcheck():
    xe = ember.tensor([0.5, -1.5, 2.0], dtype=ember.float64, requires_grad=True)
    ye = ember.tensor([[1.0], [2.0]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: (a * b + a - b * 3).sum(0), (xe, ye))
    assert ember.autograd.gradcheck(lambda a: ember.cat([a, a * a]).unbind(0)[4], (xe,))
    with pytest.raises(ValueError):
        ember.autograd.gradcheck(lambda a: a * 2, (ember.ones(2, dtype=ember.float64),))


def test_leaf_grad_is_contiguous_copy():
    for lib, x in zip((ember, torch), pair([1.0, 2.0, 3.0], "float32", requires_grad=True)):
        x.sum().backward()
        assert x.grad.is_contiguous() and x.grad.tolist() == [1.0, 1.0, 1.0]
        x.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
