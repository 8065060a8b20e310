"""Autograd node names of composites Ember writes in Python, against torch: the
whole graph (names and next_functions, None edges included), the values and the
gradients of cross_entropy with probabilities, pairwise_distance, conv3d,
trapezoid, quantile, atleast_nd and broadcast_to."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import ember


def graph(node, depth=0, limit=8):
    """The node's name and, recursively, its next functions' (None for a missing edge)."""
    if node is None:
        return None
    if depth == limit:
        return node.name()
    return (node.name(), tuple(graph(n, depth + 1, limit) for n, _ in node.next_functions))


def run(lib, case):
    lib.manual_seed(0)
    F = lib.nn.functional
    x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
    p = lib.softmax(lib.randn(3, 4, dtype=lib.float64), 1).requires_grad_()
    x5 = lib.randn(1, 2, 4, 4, 4, dtype=lib.float64, requires_grad=True)
    w5 = lib.randn(3, 2, 3, 3, 3, dtype=lib.float64, requires_grad=True)
    b5 = lib.randn(3, dtype=lib.float64, requires_grad=True)
    leaves = [x, p, x5, w5, b5]
    cases = {
        "ce_probs": lambda: F.cross_entropy(x, p),
        "ce_probs_smoothing": lambda: F.cross_entropy(x, p, label_smoothing=0.1),
        "ce_probs_weight_smoothing": lambda: F.cross_entropy(
            x, p, weight=lib.arange(1.0, 5.0, dtype=lib.float64), label_smoothing=0.2
        ),
        "ce_index_smoothing": lambda: F.cross_entropy(x, lib.tensor([0, 1, 2]), label_smoothing=0.1),
        "pairwise_distance": lambda: F.pairwise_distance(x, p),
        "pairwise_distance_p1_keepdim": lambda: F.pairwise_distance(x, p, p=1, keepdim=True),
        "pairwise_distance_1d": lambda: F.pairwise_distance(x[0], p[0]),
        "cosine_similarity": lambda: F.cosine_similarity(x, p),
        "conv3d": lambda: F.conv3d(x5, w5),
        "conv3d_bias_unbatched": lambda: F.conv3d(x5[0], w5, b5, padding=1),
        "conv3d_same_even": lambda: F.conv3d(x5, w5[:, :, :2], padding="same"),
        "trapezoid": lambda: lib.trapezoid(x),
        "trapezoid_dx": lambda: lib.trapezoid(x, dx=2.0, dim=0),
        "trapezoid_x": lambda: lib.trapezoid(x, lib.arange(4.0, dtype=lib.float64)),
        "cumulative_trapezoid": lambda: lib.cumulative_trapezoid(x, dx=0.5),
        "cumulative_trapezoid_x": lambda: lib.cumulative_trapezoid(x, lib.arange(4.0, dtype=lib.float64)),
        "quantile": lambda: x.quantile(0.3),
        "quantile_dim0_keepdim": lambda: x.quantile(0.3, dim=0, keepdim=True),
        "quantile_q_tensor": lambda: x.quantile(lib.tensor([0.2, 0.7], dtype=lib.float64), dim=1),
        "quantile_lower": lambda: x.quantile(0.3, dim=1, interpolation="lower"),
        "nanquantile": lambda: x.nanquantile(0.5),
        "nanquantile_q_tensor_keepdim": lambda: x.nanquantile(lib.tensor([0.1, 0.9], dtype=lib.float64), 0, True),
        "atleast_1d_0d": lambda: lib.atleast_1d(x[0, 0]),
        "atleast_2d_1d": lambda: lib.atleast_2d(x[0]),
        "atleast_3d_1d": lambda: lib.atleast_3d(x[:, 1]),
        "atleast_3d_2d": lambda: lib.atleast_3d(x),
        "broadcast_to_varargs": lambda: x[0].broadcast_to(3, 4),
        "broadcast_to_size": lambda: x[0].broadcast_to(size=(2, 4)),
    }
    out = cases[case]()
    names = graph(out.grad_fn)
    weights = lib.linspace(-1.0, 2.0, out.numel(), dtype=lib.float64).reshape(out.shape)
    grads = lib.autograd.grad((out * weights).sum(), leaves, allow_unused=True)
    values = [out.detach().numpy()] + [None if g is None else g.numpy() for g in grads]
    return names, tuple(out.shape), tuple(out.stride()), values


CASES = [
    "ce_probs",
    "ce_probs_smoothing",
    "ce_probs_weight_smoothing",
    "ce_index_smoothing",
    "pairwise_distance",
    "pairwise_distance_p1_keepdim",
    "pairwise_distance_1d",
    "cosine_similarity",
    "conv3d",
    "conv3d_bias_unbatched",
    "conv3d_same_even",
    "trapezoid",
    "trapezoid_dx",
    "trapezoid_x",
    "cumulative_trapezoid",
    "cumulative_trapezoid_x",
    "quantile",
    "quantile_dim0_keepdim",
    "quantile_q_tensor",
    "quantile_lower",
    "nanquantile",
    "nanquantile_q_tensor_keepdim",
    "atleast_1d_0d",
    "atleast_2d_1d",
    "atleast_3d_1d",
    "atleast_3d_2d",
    "broadcast_to_varargs",
    "broadcast_to_size",
]


@pytest.mark.parametrize("case", CASES)
def test_graph_and_values_as_pytorch(case):
    got_names, got_shape, got_stride, got = run(ember, case)
    want_names, want_shape, want_stride, want = run(torch, case)
    assert got_names == want_names
    assert (got_shape, got_stride) == (want_shape, want_stride)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_named_nodes_print_as_pytorch():
    x = ember.randn(3, 4, requires_grad=True)
    t = ember.trapezoid(x)
    assert repr(t.grad_fn).startswith("<MulBackward1 object at ")
    assert t.grad_fn._saved_other == 1
    q = x.quantile(0.5)
    assert str(type(q.grad_fn)) == "<class 'SqueezeBackward4'>"


def test_named_nodes_second_order_and_forward_ad():
    """The nodes' gradients are differentiable again, and forward-mode AD and the
    ember.func transforms see through them, as through PyTorch's operators."""
    for lib in (ember, torch):
        lib.manual_seed(0)
    results = []
    for lib in (ember, torch):
        x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
        target = lib.softmax(lib.randn(3, 4, dtype=lib.float64), 1)

        def f(a, lib=lib, target=target):
            F = lib.nn.functional
            return (F.pairwise_distance(a, target) ** 2).sum() * lib.trapezoid(a).sum() + a.quantile(0.3)

        (g,) = lib.autograd.grad(f(x), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.pow(2).sum(), x)
        v = lib.ones_like(x)
        _, jvp = lib.func.jvp(f, (x.detach(),), (v,))
        fg = lib.func.grad(f)(x.detach())
        results.append([t.detach().numpy() for t in (g, gg, jvp, fg)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_named_node_results_take_in_place_changes():
    x = ember.randn(3, 4, requires_grad=True)
    q = (x * 1).quantile(0.5, dim=1)
    q.add_(1)
    q.sum().backward()
    assert x.grad.sum().item() == pytest.approx(3.0)


def test_broadcast_to_argument_errors_as_pytorch():
    for args in [(), (3, "a"), ((3, 4), 5)]:
        errors = []
        for lib in (ember, torch):
            with pytest.raises(TypeError) as info:
                lib.randn(4).broadcast_to(*args)
            errors.append(str(info.value))
        assert errors[0] == errors[1]
