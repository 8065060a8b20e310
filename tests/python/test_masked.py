"""torch.masked's reductions and normalizations against PyTorch: random masks (rows fully masked included),
dims, keepdim, dtype, broadcast masks, gradients of the sums and means."""

from __future__ import annotations

import pytest
from conftest import to_torch, torch

import ember


def _pair(seed, shape=(3, 4, 5)):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    mask = torch.rand(shape, generator=g) > 0.5
    mask[0] = False  # a slice with nothing selected
    return x, mask, ember.tensor(x.tolist(), dtype=ember.float64), ember.tensor(mask.tolist())


def _check(e, t):
    got = to_torch(e)
    assert got.dtype == t.dtype and got.shape == t.shape, (got.dtype, t.dtype, got.shape, t.shape)
    torch.testing.assert_close(got, t, rtol=1e-12, atol=1e-12, equal_nan=True)


REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dim", [None, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(name, dim, keepdim):
    x, m, xe, me = _pair(1)
    if name == "logsumexp" and dim is None:
        dim = (0, 1, 2)
    t = getattr(torch.masked, name)(x, dim, keepdim=keepdim, mask=m)
    e = getattr(ember.masked, name)(xe, dim, keepdim=keepdim, mask=me)
    _check(e, t)


@pytest.mark.parametrize("name", ["median", "argmax", "argmin"])
@pytest.mark.parametrize("dim", [0, 2])
def test_single_dim_reductions(name, dim):
    x, m, xe, me = _pair(2)
    _check(getattr(ember.masked, name)(xe, dim, mask=me), getattr(torch.masked, name)(x, dim, mask=m))


@pytest.mark.parametrize("ord", [1.0, 2.0, 3.0, float("inf")])
def test_norm_and_normalize(ord):
    x, m, xe, me = _pair(3)
    _check(ember.masked.norm(xe, ord, (1, 2), mask=me), torch.masked.norm(x, ord, (1, 2), mask=m))
    _check(ember.masked.normalize(xe, ord, 1, mask=me), torch.masked.normalize(x, ord, 1, mask=m))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
def test_along_a_dim(name, dim=1):
    x, m, xe, me = _pair(4)
    _check(getattr(ember.masked, name)(xe, dim, mask=me), getattr(torch.masked, name)(x, dim, mask=m))


def test_options():
    x, m, xe, me = _pair(5)
    _check(ember.masked.var(xe, 1, unbiased=False, mask=me), torch.masked.var(x, 1, unbiased=False, mask=m))
    _check(ember.masked.var(xe, 1, correction=2, mask=me), torch.masked.var(x, 1, correction=2, mask=m))
    _check(ember.masked.mean(xe, 2, mask=me[:1, :1]), torch.masked.mean(x, 2, mask=m[:1, :1]))
    _check(ember.masked.sum(xe), torch.masked.sum(x))
    _check(ember.masked.sum(xe, 1, dtype=ember.float32, mask=me), torch.masked.sum(x, 1, dtype=torch.float32, mask=m))
    xi, mi = torch.arange(12).reshape(3, 4), torch.arange(12).reshape(3, 4) % 3 == 0
    ei, emi = ember.arange(12).reshape(3, 4), ember.arange(12).reshape(3, 4) % 3 == 0
    for name in ("sum", "prod", "amax", "amin"):
        _check(getattr(ember.masked, name)(ei, 1, mask=emi), getattr(torch.masked, name)(xi, 1, mask=mi))
    y, ye = x * 2, xe * 2
    _check(
        ember.masked.logaddexp(xe, ye, input_mask=me, other_mask=~me),
        torch.masked.logaddexp(x, y, input_mask=m, other_mask=~m),
    )


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "softmax"])
def test_gradients(name):
    x, m, xe, me = _pair(6)
    x.requires_grad_()
    xe.requires_grad_()
    m[0] = True  # every slice selects something, so every gradient is finite
    me = ember.tensor(m.tolist())
    args = (1,)
    getattr(torch.masked, name)(x, *args, mask=m).sum().backward()
    getattr(ember.masked, name)(xe, *args, mask=me).sum().backward()
    _check(xe.grad, x.grad)


def test_names():
    missing = set(torch.masked.__all__) - set(ember.masked.__all__)
    assert missing == {"MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"}
