"""Autograd behaviour seen from user scripts, against torch: the double
backward of layer_norm and batch_norm (their own backward-backward nodes,
PyTorch's bits), forward AD through nn.LSTM (PyTorch's float32 layer op has
no tangent formula), the nodes of tangents that record a graph and the
anomaly-mode report's forward trace."""

from __future__ import annotations

import warnings

import pytest
from conftest import torch

import ember


def bits(t):
    if t is None:
        return None
    t = t.detach()
    return t.numpy().view("u4" if t.dtype == t.new_zeros(()).float().dtype else "u8").tolist()


def norm_case(lib, kind, shape, affine, train):
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(*shape, requires_grad=True)
    n = shape[-1] if kind == "ln" else shape[1]
    params = [lib.randn(n, requires_grad=True) for _ in range(2)] if affine else []
    rm, rv = lib.randn(n), lib.rand(n) + 0.5
    if kind == "ln":
        y = F.layer_norm(x, (n,), *params)
    else:
        y = F.batch_norm(x, None if train else rm, None if train else rv, *params, training=train)
    w = lib.randn(y.shape, requires_grad=True)
    grads = lib.autograd.grad((y * w).sum(), [x] + params, create_graph=True)
    vs = [lib.randn(g.shape) for g in grads]
    second = lib.autograd.grad(grads, [x, w] + params, grad_outputs=vs, allow_unused=True)
    out = [[type(g.grad_fn).__name__ for g in grads], [bits(g) for g in second]]
    if kind == "ln":  # batch_norm's first-order kernel is checked elsewhere
        out.append([bits(g) for g in grads])
    return out


@pytest.mark.parametrize(
    "kind,shape,affine,train",
    [
        ("ln", (4, 5), True, True),
        ("ln", (2, 3, 6), False, True),
        ("bn", (4, 3), True, True),
        ("bn", (2, 3, 4, 5), True, True),
        ("bn", (2, 3, 4), False, True),
        ("bn", (2, 3, 4, 4), True, False),
        ("bn", (2, 3, 4), False, False),
    ],
)
def test_norm_double_backward_matches_torch(kind, shape, affine, train):
    got = norm_case(ember, kind, shape, affine, train)
    want = norm_case(torch, kind, shape, affine, train)
    assert got[0] == want[0]
    assert want[0][0] in ("NativeLayerNormBackwardBackward0", "NativeBatchNormBackwardBackward0")
    assert got[1:] == want[1:]


def test_layer_norm_hessian_matches_torch():
    def run(lib):
        lib.manual_seed(0)
        ln = lib.nn.LayerNorm(4)
        x = lib.randn(3, 4)
        return bits(lib.autograd.functional.hessian(lambda x: ln(x).pow(3).sum(), x))

    assert run(ember) == run(torch)


def lstm_tangent(lib, cls, dtype):
    fw = lib.autograd.forward_ad
    lib.manual_seed(0)
    m = getattr(lib.nn, cls)(3, 4, num_layers=2).to(getattr(lib, dtype))
    x = lib.randn(5, 2, 3, dtype=getattr(lib, dtype))
    with fw.dual_level():
        try:
            out, _ = m(fw.make_dual(x, lib.ones_like(x)))
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return bits(fw.unpack_dual(out).tangent)


@pytest.mark.parametrize("cls,dtype", [("LSTM", "float32"), ("LSTM", "float64"), ("GRU", "float32")])
def test_recurrent_forward_ad_as_torch(cls, dtype):
    want = lstm_tangent(torch, cls, dtype)
    assert lstm_tangent(ember, cls, dtype) == want
    if (cls, dtype) == ("LSTM", "float32"):
        assert want[0] == "NotImplementedError"


def test_lstm_in_a_dual_level_without_tangents_runs():
    for lib in (ember, torch):
        with lib.autograd.forward_ad.dual_level():
            out, _ = lib.nn.LSTM(3, 4)(lib.ones(2, 1, 3))
        assert tuple(out.shape) == (2, 1, 4)


def anomaly_messages(lib):
    F = lib.nn.functional
    x = lib.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            z = F.softplus(x * float("nan"))
            with pytest.raises(RuntimeError):
                z.sum().backward()
    text = [str(w.message) for w in caught if str(w.message).startswith("Error detected")][0]
    # the innermost frame is the softplus call's line here (pytest's frames precede it)
    return text.splitlines()[-3:]


def test_anomaly_trace_ends_at_the_callers_frame():
    assert anomaly_messages(ember) == anomaly_messages(torch)


def layer_tangent_nodes(lib):
    """grad_fn of the tangents of common layers whose parameters require grad."""
    nn, fw = lib.nn, lib.autograd.forward_ad
    lib.manual_seed(0)
    cases = [
        (nn.Linear(4, 3), (2, 4)),
        (nn.Linear(4, 3, bias=False), (2, 4)),
        (nn.Conv2d(2, 3, 3), (1, 2, 5, 5)),
        (nn.Conv1d(2, 3, 2, bias=False), (2, 2, 5)),
        (nn.BatchNorm2d(2), (3, 2, 4, 4)),
        (nn.LayerNorm(4), (2, 4)),
        (nn.LayerNorm(4, elementwise_affine=False), (2, 4)),
        (nn.GroupNorm(1, 2), (2, 2, 3, 3)),
        (nn.Sequential(nn.Linear(4, 4), nn.Tanh()), (2, 4)),
    ]
    out = []
    for m, shape in cases:
        x = lib.randn(*shape)
        with fw.dual_level():
            t = fw.unpack_dual(m(fw.make_dual(x, lib.ones_like(x)))).tangent
            out.append((type(t.grad_fn).__name__, t.requires_grad, bits(t)))
    return out


def test_forward_ad_tangent_nodes_with_parameters_requiring_grad():
    got, want = layer_tangent_nodes(ember), layer_tangent_nodes(torch)
    assert got == want
    assert want[0][0] == "AddBackward0"


def packed_shapes(lib, fn):
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return shapes


def saved_order_cases(lib):
    lib.manual_seed(0)
    a = lib.randn(2, 3, requires_grad=True)
    m = lib.randn(3, 5, requires_grad=True)
    w = lib.randn(4, 3, requires_grad=True)
    bias = lib.randn(4, requires_grad=True)
    return [
        packed_shapes(lib, lambda: lib.addmm(lib.zeros(2, 5), a, m)),
        packed_shapes(lib, lambda: lib.nn.functional.linear(a, w, bias)),
        packed_shapes(lib, lambda: a.mm(m)),
        packed_shapes(lib, lambda: a / lib.randn(3)),
    ]


def test_saved_tensors_are_packed_in_pytorchs_order():
    assert saved_order_cases(ember) == saved_order_cases(torch)


def checkpoint_packs(lib):
    lib.manual_seed(0)
    block = lib.nn.Sequential(lib.nn.Linear(8, 6), lib.nn.Tanh())
    x = lib.randn(4, 8, requires_grad=True)
    seen = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(tuple(t.shape)) or t * 2, lambda t: t / 2):
        y = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=False).pow(2).sum()
    y.backward()
    return seen, bits(x.grad)


def test_checkpoint_saves_its_inputs_through_the_active_hooks():
    got, want = checkpoint_packs(ember), checkpoint_packs(torch)
    assert got == want
    assert want[0] == [(4, 8), (4, 6)]


def linear_param_jacobian(lib):
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)
    params = {k: v.detach() for k, v in lin.named_parameters()}
    x = lib.tensor([1.5, -0.3, -2.2])
    jac = lib.func.jacrev(lambda p, v: lib.func.functional_call(lin, p, (v,)))(params, x)
    return bits(jac["weight"]), bits(jac["bias"])


def test_jacrev_of_a_linear_weight_keeps_pytorchs_signed_zeros():
    # PyTorch folds the batch of cotangents into one mm against the unbatched input: 0 * -0.3 is -0.0
    got, want = linear_param_jacobian(ember), linear_param_jacobian(torch)
    assert got == want
    assert 0x80000000 in want[0][0][1]


PROJECTION_SCRIPT = """
import warnings
import {lib} as torch
m = torch.nn.LSTM(3, 4, proj_size=2)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    m(torch.randn(5, 2, 3))
    m(torch.randn(5, 2, 3))
    m.double()(torch.randn(5, 2, 3, dtype=torch.float64))
print([(x.category.__name__, str(x.message)) for x in w])
"""


def test_lstm_with_projections_warns_once_as_torch():
    import subprocess
    import sys

    out = [
        subprocess.run(
            [sys.executable, "-c", PROJECTION_SCRIPT.format(lib=lib)], capture_output=True, text=True, timeout=120
        ).stdout
        for lib in ("ember", "torch")
    ]
    assert out[0] == out[1]
    assert "LSTM with projections is not supported with oneDNN" in out[1]


def saved_attributes(lib):
    x = lib.randn(2, 3, requires_grad=True)
    outs = [
        x.sum(1, keepdim=True),
        lib.add(x, x, alpha=2),
        x.pow(2),
        x.view(3, 2),
        x.softmax(1),
        lib.nn.functional.leaky_relu(x, 0.2),
        x.transpose(0, 1),
        x.clamp(min=0),
        lib.nn.functional.gelu(x),
        x.sum((0, 1)),
        x.to(lib.float64),
    ]
    shown = []
    for out in outs:
        fn = out.grad_fn
        names = sorted(a for a in dir(fn) if a.startswith("_saved_"))
        shown.append(
            [
                (n, tuple(getattr(fn, n).shape) if isinstance(getattr(fn, n), lib.Tensor) else getattr(fn, n))
                for n in names
            ]
        )
    return shown


def test_nodes_show_their_saved_values_as_torch():
    got, want = saved_attributes(ember), saved_attributes(torch)
    assert got == want
    assert ("_saved_dim", (1,)) in want[0] and ("_saved_alpha", 2) in want[1]


def integer_results(lib):
    """Integer and bool results of a tensor that requires grad get no history."""
    x = lib.tensor([1.5, -2.5, 0.25], requires_grad=True)
    a = lib.zeros(3, dtype=lib.long)
    a.copy_(x)
    b = lib.zeros(3, dtype=lib.int32)
    b[0] = x[0]
    values = x.max(0)
    outs = [x.long(), x.to(lib.int32), x.to(lib.bool), x.round().int(), a, b, values.indices, (x * 2).long()]
    return [(str(o), o.requires_grad, o.grad_fn is None) for o in outs] + [type(values.values.grad_fn).__name__]


def test_integer_results_have_no_history():
    assert integer_results(ember) == integer_results(torch)
