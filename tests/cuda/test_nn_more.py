"""nll_loss on 4-d inputs (nll_loss2d) and embedding's max_norm renormalisation
on CUDA against PyTorch (on CUDA where available)."""

from __future__ import annotations

import pytest
import torch
from _compare import check as _check
from _compare import cuda_only, make, pair

import ember

pytestmark = pytest.mark.requires_cuda

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (2e-2, 2e-2),
}


def check(e, t, rtol=None, atol=None):
    _check(e.detach(), t.detach(), rtol, atol)


def targets(shape, classes, seed, ignore=None):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, classes, shape, generator=g)
    if ignore is not None:
        t[..., 0] = ignore
    return t


NLL2D = [
    ((2, 4, 5, 6), dict(reduction="mean")),
    ((2, 4, 5, 6), dict(reduction="sum")),
    ((2, 4, 5, 6), dict(reduction="none")),
    ((3, 5, 7, 9), dict(reduction="mean", ignore_index=2)),
    ((1, 3, 40, 50), dict(reduction="mean", weighted=True)),
    ((2, 3, 4, 4), dict(reduction="none", weighted=True, ignore_index=1)),
    ((4, 6, 64, 64), dict(reduction="sum")),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(NLL2D)))
def test_nll_loss2d(case, dtype):
    shape, kw = NLL2D[case]
    kw = dict(kw)
    weighted = kw.pop("weighted", False)
    x_e, x_t = pair(make(shape, dtype, seed=case))
    t_e, t_t = pair(targets((shape[0],) + shape[2:], shape[1], case, kw.get("ignore_index")))
    w = make((shape[1],), dtype, seed=case + 3, low=0.5, high=2.0) if weighted else None
    w_e, w_t = pair(w) if weighted else (None, None)
    x_e.requires_grad_(True)
    x_t.requires_grad_(True)
    y_e = ember.nn.functional.nll_loss(x_e, t_e, weight=w_e, **kw)
    y_t = torch.nn.functional.nll_loss(x_t, t_t, weight=w_t, **kw)
    rtol, atol = TOL[dtype]
    if kw["reduction"] == "sum" and dtype in (torch.float16, torch.bfloat16):
        rtol, atol = rtol * 4, atol * 40  # large sums, added in another order
    check(y_e, y_t, rtol, atol)
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=case + 5))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(x_e.grad, x_t.grad, *TOL[dtype])


def test_nll_loss2d_cross_entropy():
    x_e, x_t = pair(make((2, 5, 3, 4), torch.float32, seed=9))
    t_e, t_t = pair(targets((2, 3, 4), 5, 9))
    check(ember.nn.functional.cross_entropy(x_e, t_e), torch.nn.functional.cross_entropy(x_t, t_t))


def test_nll_loss2d_target_out_of_bounds():
    x_e, _ = pair(make((1, 3, 2, 2), torch.float32))
    t_e, _ = pair(torch.tensor([[[0, 1], [3, 0]]]))
    with pytest.raises(IndexError):
        ember.nn.functional.nll_loss(x_e, t_e)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm(norm_type, dtype):
    w_e, w_t = pair(make((10, 7), dtype, seed=2))
    idx_e, idx_t = pair(torch.tensor([[1, 4, 4, 9], [0, 1, 7, 7]]))
    y_e = ember.nn.functional.embedding(idx_e, w_e, max_norm=1.5, norm_type=norm_type)
    y_t = torch.nn.functional.embedding(idx_t, w_t, max_norm=1.5, norm_type=norm_type)
    check(y_e, y_t, *TOL[dtype])
    check(w_e, w_t, *TOL[dtype])  # renormalised in place


@cuda_only
def test_embedding_renorm_index_error():
    w_e, _ = pair(make((4, 3), torch.float32))
    idx_e, _ = pair(torch.tensor([0, 5]))
    with pytest.raises(IndexError):
        ember.embedding_renorm_(w_e, idx_e, 1.0, 2.0)


FRACTIONAL = [
    ((2, 3, 9, 11), (2, 3), (5, 4)),
    ((3, 10, 10), (3, 3), (4, 7)),
    ((1, 2, 7, 7), (2, 2), (1, 6)),
]


# Ember's CPU kernel picks another bfloat16 window than PyTorch's CPU once
# here; the CUDA kernel is checked against PyTorch's CUDA one.
@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, pytest.param(torch.bfloat16, marks=cuda_only)],
)
@pytest.mark.parametrize("case", range(len(FRACTIONAL)))
def test_fractional_max_pool2d(case, dtype):
    shape, kernel, out = FRACTIONAL[case]
    planes = shape[0] * shape[1] if len(shape) == 4 else shape[0]
    g = torch.Generator().manual_seed(case)
    samples = torch.rand(
        (1 if len(shape) == 3 else shape[0], planes // (1 if len(shape) == 3 else shape[0]), 2), generator=g
    )
    s_e, s_t = pair(samples.to(dtype))
    x_e, x_t = pair(make(shape, dtype, seed=case))
    x_e.requires_grad_(True)
    x_t.requires_grad_(True)
    y_e, i_e = ember.nn.functional.fractional_max_pool2d(
        x_e, kernel, output_size=out, return_indices=True, _random_samples=s_e
    )
    y_t, i_t = torch.nn.functional.fractional_max_pool2d(
        x_t, kernel, output_size=out, return_indices=True, _random_samples=s_t
    )
    check(y_e, y_t, 0, 0)
    check(i_e, i_t)
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=case + 1))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(x_e.grad, x_t.grad, *TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_bag_max(dtype):
    w_e, w_t = pair(make((12, 5), dtype, seed=4))
    w_e.requires_grad_(True)
    w_t.requires_grad_(True)
    idx = torch.tensor([3, 7, 7, 1, 0, 11, 3, 2, 9])
    offsets = torch.tensor([0, 3, 3, 6])  # the second bag is empty
    i_e, i_t = pair(idx)
    o_e, o_t = pair(offsets)
    y_e = ember.nn.functional.embedding_bag(i_e, w_e, o_e, mode="max")
    y_t = torch.nn.functional.embedding_bag(i_t, w_t, o_t, mode="max")
    check(y_e, y_t, 0, 0)
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=5))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(w_e.grad, w_t.grad, *TOL[dtype])


GRID_MODES = [
    (m, p, a)
    for m in ("bilinear", "nearest", "bicubic")
    for p in ("zeros", "border", "reflection")
    for a in (False, True)
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", range(len(GRID_MODES)))
def test_grid_sample_2d(case, dtype):
    mode, padding, align = GRID_MODES[case]
    x_e, x_t = pair(make((2, 3, 6, 7), dtype, seed=case))
    # points inside, on the border and outside the image
    g_e, g_t = pair(make((2, 5, 4, 2), dtype, seed=case + 1, low=-1.3, high=1.3))
    for t in (x_e, x_t, g_e, g_t):
        t.requires_grad_(True)
    kw = dict(mode=mode, padding_mode=padding, align_corners=align)
    y_e = ember.nn.functional.grid_sample(x_e, g_e, **kw)
    y_t = torch.nn.functional.grid_sample(x_t, g_t, **kw)
    check(y_e, y_t, *TOL[dtype])
    o_e, o_t = pair(make(tuple(y_t.shape), dtype, seed=case + 2))
    y_e.backward(o_e)
    y_t.backward(o_t)
    check(x_e.grad, x_t.grad, *TOL[dtype])
    check(g_e.grad, g_t.grad, *(TOL[dtype] if dtype == torch.float64 else (1e-4, 1e-4)))


GRID_MODES_3D = [
    (m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection") for a in (False, True)
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", range(len(GRID_MODES_3D)))
def test_grid_sample_3d(case, dtype):
    mode, padding, align = GRID_MODES_3D[case]
    x_e, x_t = pair(make((2, 2, 4, 5, 3), dtype, seed=case))
    g_e, g_t = pair(make((2, 3, 2, 4, 3), dtype, seed=case + 1, low=-1.3, high=1.3))
    for t in (x_e, x_t, g_e, g_t):
        t.requires_grad_(True)
    kw = dict(mode=mode, padding_mode=padding, align_corners=align)
    y_e = ember.nn.functional.grid_sample(x_e, g_e, **kw)
    y_t = torch.nn.functional.grid_sample(x_t, g_t, **kw)
    check(y_e, y_t, *TOL[dtype])
    o_e, o_t = pair(make(tuple(y_t.shape), dtype, seed=case + 2))
    y_e.backward(o_e)
    y_t.backward(o_t)
    check(x_e.grad, x_t.grad, *TOL[dtype])
    check(g_e.grad, g_t.grad, *(TOL[dtype] if dtype == torch.float64 else (1e-4, 1e-4)))


def test_grid_sample_3d_bicubic_refused():
    x_e, x_t = pair(make((1, 1, 2, 2, 2), torch.float32))
    g_e, g_t = pair(make((1, 1, 1, 1, 3), torch.float32))
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.grid_sample(x_t, g_t, mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError) as got:
        ember.nn.functional.grid_sample(x_e, g_e, mode="bicubic", align_corners=False)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_ctc_loss(dtype, reduction):
    t_steps, batch, classes = 12, 3, 6
    logits = make((t_steps, batch, classes), dtype, seed=3)
    lp_e, lp_t = pair(torch.log_softmax(logits, -1))
    lp_e.requires_grad_(True)
    lp_t.requires_grad_(True)
    targets = torch.tensor([[1, 2, 2, 3], [4, 1, 5, 0], [2, 3, 0, 0]])
    tg_e, tg_t = pair(targets)
    in_lens, tg_lens = [12, 10, 7], [4, 3, 2]
    y_e = ember.nn.functional.ctc_loss(lp_e, tg_e, in_lens, tg_lens, reduction=reduction)
    y_t = torch.nn.functional.ctc_loss(lp_t, tg_t, in_lens, tg_lens, reduction=reduction)
    check(y_e, y_t, *TOL[dtype])
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=4))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(lp_e.grad, lp_t.grad, 1e-4 if dtype == torch.float32 else 1e-10, 1e-5 if dtype == torch.float32 else 1e-10)
