"""ember.ops.aten: the built-in operators as torch.ops.aten has them, the
internal ones (the *_backward functions) included; values against torch's.
leaky_relu_backward, elu_backward and log_sigmoid_backward keep Ember's own
schemas (without PyTorch's self_is_result / buffer arguments)."""

import pytest
import torch

import ember

G = [[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]]
X = [[0.3, -1.7, 2.2], [-0.4, 0.9, 3.1]]


def _both(fn):
    """fn(lib, t) with t making lib's float32 tensors; results as nested lists."""
    got = fn(ember.ops.aten, lambda v: ember.tensor(v))
    want = fn(torch.ops.aten, lambda v: torch.tensor(v))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        return [(g.tolist(), w.tolist()) for g, w in zip(got, want)]
    assert got.dtype.__str__() == want.dtype.__str__() and tuple(got.shape) == tuple(want.shape)
    return [(got.tolist(), want.tolist())]


CASES = {
    "tanh_backward": lambda a, t: a.tanh_backward(t(G), t(X)),
    "sigmoid_backward": lambda a, t: a.sigmoid_backward(t(G), t(X)),
    "silu_backward": lambda a, t: a.silu_backward(t(G), t(X)),
    "threshold_backward": lambda a, t: a.threshold_backward(t(G), t(X), 0.3),
    "gelu_backward": lambda a, t: a.gelu_backward(t(G), t(X)),
    "gelu_backward_tanh": lambda a, t: a.gelu_backward(t(G), t(X), approximate="tanh"),
    "hardsigmoid_backward": lambda a, t: a.hardsigmoid_backward(t(G), t(X)),
    "hardtanh_backward": lambda a, t: a.hardtanh_backward(t(G), t(X), -1.0, 1.0),
    "softplus_backward": lambda a, t: a.softplus_backward(t(G), t(X), 1.0, 20.0),
    "hardswish_backward": lambda a, t: a.hardswish_backward(t(G), t(X)),
    "mish_backward": lambda a, t: a.mish_backward(t(G), t(X)),
    "_softmax": lambda a, t: a._softmax(t(X), 1, False),
    "_log_softmax": lambda a, t: a._log_softmax(t(X), 0, False),
    "add.Tensor": lambda a, t: a.add.Tensor(t(X), t(G), alpha=2),
    "add packet": lambda a, t: a.add(t(X), t(G)),
    "mul.Tensor": lambda a, t: a.mul.Tensor(t(X), t(G)),
    "mm.default": lambda a, t: a.mm.default(t(X), t(G).t()),
    "sum.dim_IntList": lambda a, t: a.sum.dim_IntList(t(X), [1], True),
    "max.dim": lambda a, t: a.max.dim(t(X), 1),
    "clamp.Tensor": lambda a, t: a.clamp.Tensor(t(X), t(G)),
    "where.self": lambda a, t: a.where.self(t(X) > 0, t(X), t(G)),
    "view.default": lambda a, t: a.view.default(t(X), [3, 2]),
    "convolution": lambda a, t: a.convolution(
        t([[X]]), t([[[[1.0, -1.0], [0.5, 0.25]]]]), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_values_as_torch(case):
    # Within float32 rounding: gelu's erf and a log_softmax across rows round
    # differently from PyTorch's kernels (tests/python/test_kernel_paths.py).
    for got, want in _both(CASES[case]):
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=2e-6, atol=1e-6)


def test_out_overload_and_inplace():
    x, g = ember.tensor(X), ember.tensor(G)
    out = ember.empty(2, 3)
    assert ember.ops.aten.add.out(x, g, out=out) is out
    assert out.tolist() == (x + g).tolist()
    y = x.clone()
    assert ember.ops.aten.add_.Tensor(y, g) is y
    assert y.tolist() == (x + g).tolist()


def test_records_autograd():
    x = ember.tensor(X, requires_grad=True)
    ember.ops.aten.mul.Tensor(x, x).sum().backward()
    assert x.grad.tolist() == (2 * ember.tensor(X)).tolist()


def test_names_and_errors_as_torch():
    packet = ember.ops.aten.add
    assert repr(packet) == repr(torch.ops.aten.add)
    assert repr(packet.Tensor) == repr(torch.ops.aten.add.Tensor)
    assert packet.Tensor.name() == torch.ops.aten.add.Tensor.name()
    assert ember.ops.aten.tanh_backward.default.name() == torch.ops.aten.tanh_backward.default.name()
    assert str(packet.Tensor._schema) == str(torch.ops.aten.add.Tensor._schema)
    assert {"Tensor", "out"} <= set(packet.overloads())
    for lib in (ember, torch):
        with pytest.raises(AttributeError) as err:
            lib.ops.aten.not_an_operator  # noqa: B018
        assert str(err.value) == "'_OpNamespace' 'aten' object has no attribute 'not_an_operator'"
    with pytest.raises(TypeError):
        ember.ops.aten.tanh_backward(ember.tensor(G))
