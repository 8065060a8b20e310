"""Padding (reflection, replication), upsampling (nearest, nearest-exact,
linear, bilinear) and embedding's backward on CUDA against PyTorch (on CUDA
where available), forward and backward."""

from __future__ import annotations

import pytest
import torch
from _compare import FLOAT_TOL as TOL
from _compare import FLOATS, make, pair
from _compare import check_detached as check

import ember

pytestmark = pytest.mark.requires_cuda


def forward_backward(fn, shape, dtype, seed=0, grad_tol=None):
    x_e, x_t = pair(make(shape, dtype, seed=seed))
    x_e.requires_grad_(True)
    x_t.requires_grad_(True)
    y_e, y_t = fn(ember, x_e), fn(torch, x_t)
    check(y_e, y_t, *TOL[dtype])
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=seed + 1))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(x_e.grad, x_t.grad, *(grad_tol or TOL[dtype]))


PADS = [
    ("reflect", (2, 3, 9), (2, 3)),
    ("reflect", (2, 3, 6, 7), (1, 2, 3, 1)),
    ("reflect", (1, 2, 4, 5, 6), (1, 1, 2, 0, 1, 3)),
    ("replicate", (2, 3, 9), (4, 1)),
    ("replicate", (2, 3, 6, 7), (3, 0, 2, 5)),
    ("replicate", (1, 2, 4, 5, 6), (2, 1, 0, 1, 1, 2)),
    ("reflect", (2, 3, 6, 7), (-1, 2, 1, -2)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(PADS)))
def test_pad(case, dtype):
    mode, shape, pad = PADS[case]
    # Reflection's backward adds the mirrored gradients with atomics in both
    # frameworks: in 16 bits their order changes the result by a few ulps.
    grad_tol = {torch.float16: (1.6e-2, 1e-2), torch.bfloat16: (4e-2, 6.4e-2)}.get(dtype) if mode == "reflect" else None
    fn = lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode)  # noqa: E731
    forward_backward(fn, shape, dtype, seed=case, grad_tol=grad_tol)


UPSAMPLE = [
    ((2, 3, 7), dict(size=15, mode="nearest")),
    ((2, 3, 5, 6), dict(scale_factor=(2.5, 1.5), mode="nearest")),
    ((1, 2, 3, 4, 5), dict(size=(5, 7, 9), mode="nearest")),
    ((2, 3, 5, 6), dict(size=(9, 4), mode="nearest-exact")),
    ((2, 3, 7), dict(size=12, mode="linear", align_corners=False)),
    ((2, 3, 7), dict(scale_factor=2.3, mode="linear", align_corners=True)),
    ((2, 3, 5, 6), dict(size=(11, 13), mode="bilinear", align_corners=False)),
    ((2, 3, 5, 6), dict(size=(3, 4), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 6), dict(scale_factor=1.7, mode="bilinear", align_corners=False)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(UPSAMPLE)))
def test_upsample(case, dtype):
    shape, kw = UPSAMPLE[case]
    tol = TOL[dtype]
    if dtype == torch.bfloat16 and kw["mode"] in ("linear", "bilinear"):
        tol = (4e-2, 4e-2)  # atomic 16-bit gradient sums in another order
    x_e, x_t = pair(make(shape, dtype, seed=case))
    x_e.requires_grad_(True)
    x_t.requires_grad_(True)
    y_e = ember.nn.functional.interpolate(x_e, **kw)
    y_t = torch.nn.functional.interpolate(x_t, **kw)
    check(y_e, y_t, *tol)
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=case + 7))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(x_e.grad, x_t.grad, *tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_backward(dtype, scale_grad_by_freq):
    w_e, w_t = pair(make((10, 6), dtype, seed=1))
    idx = torch.tensor([[1, 3, 3, 0], [9, 1, 1, 1]])
    i_e, i_t = pair(idx)
    w_e.requires_grad_(True)
    w_t.requires_grad_(True)
    y_e = ember.nn.functional.embedding(i_e, w_e, padding_idx=0, scale_grad_by_freq=scale_grad_by_freq)
    y_t = torch.nn.functional.embedding(i_t, w_t, padding_idx=0, scale_grad_by_freq=scale_grad_by_freq)
    check(y_e, y_t)
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=2))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(w_e.grad, w_t.grad, *TOL[dtype])
