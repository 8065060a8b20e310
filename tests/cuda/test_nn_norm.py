"""batch_norm (training statistics, running-statistic update, evaluation),
instance_norm and group_norm on CUDA against PyTorch (on CUDA where
available), forward and backward; dropout's mask and scaling."""

from __future__ import annotations

import pytest
import torch
from _compare import DEVICE, make, pair, to_torch
from _compare import check as _check

import ember

pytestmark = pytest.mark.requires_cuda


def check(e, t, rtol=None, atol=None):
    """_compare.check on detached results (gradients' graphs are not compared)."""
    _check(e.detach(), t.detach(), rtol, atol)


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {
    torch.float32: (2e-5, 2e-5),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (4e-3, 4e-3),
    torch.bfloat16: (3e-2, 3e-2),
}


def with_grad(*ts):
    for t in ts:
        t.requires_grad_(True)
    return ts


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(8, 5), (4, 3, 7), (2, 6, 5, 4), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(shape, dtype, training):
    c = shape[1]
    x_e, x_t = pair(make(shape, dtype, seed=1))
    w_e, w_t = pair(make((c,), torch.float32 if dtype != torch.float64 else dtype, seed=2))
    b_e, b_t = pair(make((c,), w_t.dtype, seed=3))
    rm_e, rm_t = pair(make((c,), w_t.dtype, seed=4))
    rv_e, rv_t = pair(make((c,), w_t.dtype, seed=5, low=0.5, high=2.0))
    # 16-bit input takes float32 parameters and statistics, as under autocast.
    x16 = dtype in (torch.float16, torch.bfloat16)
    with_grad(x_e, w_e, b_e, x_t, w_t, b_t)
    y_e = ember.nn.functional.batch_norm(x_e, rm_e, rv_e, w_e, b_e, training=training, momentum=0.2, eps=1e-4)
    y_t = torch.nn.functional.batch_norm(x_t, rm_t, rv_t, w_t, b_t, training=training, momentum=0.2, eps=1e-4)
    check(y_e, y_t, *TOL[dtype])
    check(rm_e, rm_t, *TOL[torch.float32 if x16 else dtype])
    check(rv_e, rv_t, *TOL[torch.float32 if x16 else dtype])
    g_e, g_t = pair(make(shape, dtype, seed=6))
    y_e.backward(g_e)
    y_t.backward(g_t)
    scale = 1 if not x16 else 2
    check(x_e.grad, x_t.grad, TOL[dtype][0] * scale, TOL[dtype][1] * scale)
    check(w_e.grad, w_t.grad, 10 * TOL[dtype][0], 10 * TOL[dtype][1])
    check(b_e.grad, b_t.grad, 10 * TOL[dtype][0], 10 * TOL[dtype][1])


def test_native_batch_norm_statistics():
    x_e, x_t = pair(make((4, 3, 5, 5), torch.float32, seed=7))
    out_e = ember.native_batch_norm(x_e, None, None, None, None, True, 0.1, 1e-5)
    out_t = torch.native_batch_norm(x_t, None, None, None, None, True, 0.1, 1e-5)
    for a, b in zip(out_e, out_t):
        check(a, b, *TOL[torch.float32])


@pytest.mark.parametrize("dtype", FLOATS)
def test_instance_norm(dtype):
    x_e, x_t = pair(make((3, 4, 6, 5), dtype, seed=8))
    w_e, w_t = pair(make((4,), dtype, seed=9))
    b_e, b_t = pair(make((4,), dtype, seed=10))
    with_grad(x_e, w_e, b_e, x_t, w_t, b_t)
    y_e = ember.nn.functional.instance_norm(x_e, weight=w_e, bias=b_e)
    y_t = torch.nn.functional.instance_norm(x_t, weight=w_t, bias=b_t)
    check(y_e, y_t, *TOL[dtype])
    y_e.sum().backward()
    y_t.sum().backward()
    check(w_e.grad, w_t.grad, 10 * TOL[dtype][0], 10 * TOL[dtype][1])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 4), 3), ((3, 4, 7), 2), ((2, 8), 8)])
def test_group_norm(shape, groups, dtype):
    c = shape[1]
    x_e, x_t = pair(make(shape, dtype, seed=11))
    w_e, w_t = pair(make((c,), dtype, seed=12))
    b_e, b_t = pair(make((c,), dtype, seed=13))
    with_grad(x_e, w_e, b_e, x_t, w_t, b_t)
    y_e = ember.nn.functional.group_norm(x_e, groups, w_e, b_e, eps=1e-4)
    y_t = torch.nn.functional.group_norm(x_t, groups, w_t, b_t, eps=1e-4)
    check(y_e, y_t, *TOL[dtype])
    g_e, g_t = pair(make(shape, dtype, seed=14))
    y_e.backward(g_e)
    y_t.backward(g_t)
    for a, b in ((x_e, x_t), (w_e, w_t), (b_e, b_t)):
        check(a.grad, b.grad, 10 * TOL[dtype][0], 10 * TOL[dtype][1])


def test_dropout_mask_and_scale():
    ember.manual_seed(0)
    x = ember.ones((4096,), device=DEVICE)
    y = to_torch(ember.nn.functional.dropout(x, p=0.25, training=True))
    kept = y != 0
    # Kept values are scaled by 1 / (1 - p); about 75% are kept.
    assert torch.allclose(y[kept], torch.full_like(y[kept], 1 / 0.75))
    assert 0.70 < kept.float().mean().item() < 0.80
    assert torch.equal(to_torch(ember.nn.functional.dropout(x, p=0.25, training=False)), to_torch(x))
