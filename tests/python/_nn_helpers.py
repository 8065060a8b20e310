"""Helpers shared by the convolution, pooling and normalisation tests."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

# Tolerances: float64 results should agree to rounding; float32 ones to a few
# ulps of the largest terms (summation order differs between libraries).
TOL = {"float64": {"rtol": 1e-9, "atol": 1e-9}, "float32": {"rtol": 1e-4, "atol": 1e-4}}


def from_torch(t, requires_grad=None):
    """An ember tensor with the values, dtype and shape of torch tensor t."""
    name = str(t.dtype).split(".")[1]
    e = ember.tensor(t.detach().tolist(), dtype=getattr(ember, name)).reshape(list(t.shape))
    if requires_grad if requires_grad is not None else t.requires_grad:
        e.requires_grad_(True)
    return e


def as_torch(e):
    name = str(e.dtype).split(".")[1]
    return torch.tensor(e.tolist(), dtype=getattr(torch, name)).reshape(tuple(e.shape))


def close(e, t, dtype_name=None, **kw):
    """e (ember) has t's (torch) dtype, shape and values within the tolerance of the dtype."""
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    name = dtype_name or str(t.dtype).split(".")[1]
    tol = dict(TOL.get(name, {"rtol": 1e-2, "atol": 1e-2}))
    tol.update(kw)
    got = as_torch(e)
    if name == "float32" and "atol" not in kw and t.numel() > 0:
        # Long float32 sums: absolute error grows with the size of the terms.
        tol["atol"] = tol["atol"] * max(1.0, float(t.detach().abs().max()))
    if t.dtype.is_floating_point:
        torch.testing.assert_close(got, t.detach(), equal_nan=True, **tol)
    else:
        assert torch.equal(got, t), f"{got} != {t}"


def pair_randn(shape, dtype_name="float64", requires_grad=False, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    t = (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(
        getattr(torch, dtype_name)
    )
    if requires_grad and t.dtype.is_floating_point:
        t.requires_grad_(True)
    return from_torch(t), t


def same_error(fe, ft, match_message=True):
    """fe() and ft() raise the same exception type (and message)."""
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value).__name__ == type(et.value).__name__, f"{ee.value!r} vs {et.value!r}"
    if match_message:
        assert str(ee.value) == str(et.value), f"\n ember: {ee.value}\n torch: {et.value}"
    return ee.value


HAS_UNIFORM = hasattr(ember.Tensor, "uniform_")


@pytest.fixture
def init_without_rng(monkeypatch):
    """Module constructors draw their initial weights with Tensor.uniform_.
    Where this build has no random operators yet, the draws become no-ops so
    that structure (repr, state_dict, forward with copied weights) is still tested."""
    if not HAS_UNIFORM:
        monkeypatch.setattr(ember.nn.init, "kaiming_uniform_", lambda t, *a, **k: t)
        monkeypatch.setattr(ember.nn.init, "uniform_", lambda t, *a, **k: t)


def copy_params(em, tm):
    """Copies every parameter and buffer of torch module tm into ember module em."""
    with ember.no_grad():
        for (ne, pe), (nt, pt) in zip(em.named_parameters(), tm.named_parameters()):
            assert ne == nt
            pe.copy_(from_torch(pt.detach()))
        for (ne, be), (nt, bt) in zip(em.named_buffers(), tm.named_buffers()):
            assert ne == nt
            be.copy_(from_torch(bt))
