"""Reductions, softmax and layer_norm on CUDA against PyTorch (on CUDA where
available). Reduction orders differ from PyTorch's, so floating results are
compared with tolerances; integer, boolean and index results exactly."""

from __future__ import annotations

import pytest
import torch
from _compare import TORCH_DEVICE, check, cuda_only, make, pair, to_torch

import ember

pytestmark = pytest.mark.requires_cuda

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {
    torch.float32: (2e-5, 2e-5),
    torch.float64: (1e-9, 1e-9),
    torch.float16: (4e-3, 4e-3),
    torch.bfloat16: (2e-2, 2e-2),
}
SHAPES_DIMS = [
    ((37,), None),
    ((37,), 0),
    ((33, 65), 1),
    ((33, 65), 0),
    ((4, 5, 6), (0, 2)),
    ((4, 5, 6), -2),
    ((2, 3, 1025), -1),
    ((0, 4), 1),
]


def call(lib, name, x, dim, keepdim, **kw):
    fn = getattr(lib, name)
    if dim is None:
        return fn(x, **kw)
    return fn(x, dim, keepdim=keepdim, **kw)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["sum", "mean", "nansum", "amax", "amin", "logsumexp", "var", "std"])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_float_reductions(name, shape, dim, dtype):
    if name == "logsumexp" and dim is None:
        dim = tuple(range(len(shape)))
    if name in ("amax", "amin") and 0 in shape and dim in (None, 0):
        pytest.skip("reduction over an empty dim has no identity")
    e, t = pair(make(shape, dtype))
    for keepdim in (False, True):
        want = call(torch, name, t, dim, keepdim)
        got = call(ember, name, e, dim, keepdim)
        check(got, want, *TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool, torch.float32])
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "all", "any"])
def test_integer_and_bool_reductions_exact(name, dtype):
    e, t = pair(make((9, 17), dtype, low=0.5, high=1.5))
    for dim in (None, 0, 1):
        want = call(torch, name, t, dim, False)
        got = call(ember, name, e, dim, False)
        check(got, want, *(TOL[torch.float32] if dtype == torch.float32 else (0, 0)))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
def test_max_min_dim_values_and_indices(dtype):
    base = make((6, 40), torch.float32)
    base[1, 3] = base[1, 10] = 5.0  # ties: the first index wins
    base[2, 7] = float("nan") if dtype.is_floating_point else 0
    e, t = pair(base.to(dtype))
    for fname in ("max", "min"):
        for dim in (0, 1, -1):
            wv, wi = getattr(torch, fname)(t, dim)
            gv, gi = getattr(ember, fname)(e, dim)
            check(gv, wv, 0, 0)
            check(gi, wi, 0, 0)
    for fname in ("argmax", "argmin"):
        check(getattr(ember, fname)(e), getattr(torch, fname)(t), 0, 0)
        check(getattr(ember, fname)(e, 1, keepdim=True), getattr(torch, fname)(t, 1, keepdim=True), 0, 0)


def test_nan_propagates_through_max_and_sum():
    x = make((3, 50))
    x[0, 17] = float("nan")
    e, t = pair(x)
    check(ember.amax(e, 1), torch.amax(t, 1))
    check(ember.sum(e, 1), torch.sum(t, 1), *TOL[torch.float32])
    check(ember.nansum(e, 1), torch.nansum(t, 1), *TOL[torch.float32])
    check(ember.max(e), torch.max(t))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_large_reductions_take_two_passes(dtype):
    # 2^22 elements to one output: the reduced range is split across blocks.
    x = make((1 << 22,), dtype, low=-1, high=1)
    e, t = pair(x)
    tol = (1e-4, 1e-3) if dtype == torch.float32 else ((1e-2, 1e-1) if dtype == torch.float16 else (0, 0))
    check(ember.sum(e), torch.sum(t), *tol)
    check(ember.amax(e), torch.amax(t), 0, 0)
    if dtype.is_floating_point:
        check(ember.mean(e), torch.mean(t), *tol)
        check(ember.var(e), torch.var(t), *tol)
    # Few wide columns: a column reduction that is split too.
    y = make((1 << 16, 40), dtype, low=-1, high=1)
    e, t = pair(y)
    check(ember.sum(e, 0), torch.sum(t, 0), *tol)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.uint8, torch.bool]
)
def test_column_reductions_several_outputs_per_thread(dtype):
    """Column sums whose plan is rewritten in vectors of adjacent outputs (4 per thread), and
    the layouts that keep one output per thread: a width not a multiple of the vector, an
    unaligned start, and kept dims around reduced ones."""
    x = make((300, 516), dtype, low=0.5, high=1.5)
    e, t = pair(x)
    tol = (0, 0) if not dtype.is_floating_point else TOL[dtype]
    cases = [
        lambda lib, v: lib.sum(v, 0),
        lambda lib, v: lib.sum(v[:, :512], 0),  # strides multiples of 4, width 512
        lambda lib, v: lib.sum(v[:, 1:513], 0),  # unaligned start
        lambda lib, v: lib.sum(v[:, :258], 0),  # 258 outputs: not a multiple of 4
        lambda lib, v: lib.sum(v[:, :512].reshape(3, 100, 4, 128), (0, 2)),  # kept (100, 128)
    ]
    if dtype.is_floating_point:
        cases += [lambda lib, v: lib.mean(v, 0), lambda lib, v: lib.nansum(v[:, :512], 0)]
    if dtype != torch.bool:
        cases.append(lambda lib, v: lib.prod(v[:8, :512], 0))
    for case in cases:
        check(case(ember, e), case(torch, t), *tol)


def test_large_reductions_every_mode():
    # nansum, prod and argmax over 2^22 elements: each mode takes both passes.
    x = make((1 << 22,), low=-1, high=1)
    x[12345] = float("nan")
    e, t = pair(x)
    check(ember.nansum(e), torch.nansum(t), 1e-4, 1e-3)
    check(ember.sum(e), torch.sum(t))
    near_one = make((1 << 22,), low=0.99999, high=1.00001)
    e, t = pair(near_one)
    check(ember.prod(e), torch.prod(t), 1e-4, 1e-4)
    peaks = make((1 << 22,), low=-1, high=1)
    peaks[777] = peaks[3_000_001] = 5.0  # a tie across slices: the first index wins
    e, t = pair(peaks)
    check(ember.argmax(e), torch.argmax(t), 0, 0)
    # A misaligned start: no 16-byte loads.
    e, t = pair(make(((1 << 20) + 1,), low=-1, high=1))
    check(ember.sum(e[1:]), torch.sum(t[1:]), 1e-4, 1e-3)


def test_non_contiguous_inputs():
    x = make((24, 31, 5))
    e, t = pair(x)
    et, tt = e.transpose(0, 2), t.transpose(0, 2)
    for dim in (0, 1, 2, (0, 1), (1, 2)):
        check(ember.sum(et, dim), torch.sum(tt, dim), *TOL[torch.float32])
        check(ember.amax(et, dim), torch.amax(tt, dim), 0, 0)
    check(ember.var(et[::2], 1), torch.var(tt[::2], 1), *TOL[torch.float32])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", [0, 1, 2, 3.5, float("inf"), float("-inf")])
def test_vector_norm(ord, dtype):
    e, t = pair(make((17, 300), dtype))
    for dim in (None, 1, 0):
        check(ember.linalg.vector_norm(e, ord, dim), torch.linalg.vector_norm(t, ord, dim), *TOL[dtype])


def test_var_mean_std_mean_correction():
    e, t = pair(make((8, 129)))
    for corr in (0, 1, 2):
        gv, gm = ember.var_mean(e, 1, correction=corr)
        wv, wm = torch.var_mean(t, 1, correction=corr)
        check(gv, wv, *TOL[torch.float32])
        check(gm, wm, *TOL[torch.float32])
        gs, gm = ember.std_mean(e, None, correction=corr)
        ws, wm = torch.std_mean(t, None, correction=corr)
        check(gs, ws, *TOL[torch.float32])


def test_logsumexp_infinities():
    x = torch.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")], [float("inf"), 1.0], [float("nan"), 1.0]])
    e, t = pair(x)
    check(ember.logsumexp(e, 1), torch.logsumexp(t, 1))


def test_errors_match():
    e, t = pair(make((3, 4), torch.int64))
    with pytest.raises(RuntimeError) as want:
        torch.mean(t)
    with pytest.raises(RuntimeError) as got:
        ember.mean(e)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int32, torch.int64])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans(name, dtype):
    # Rows longer than one block's chunk (carry between chunks), and columns.
    x = make((3, 700), dtype, low=0.9, high=1.1) if name == "cumprod" else make((3, 700), dtype)
    if not dtype.is_floating_point and name == "cumprod":
        x = make((3, 700), dtype).clamp(-1, 1)
    e, t = pair(x)
    tol = {torch.float32: (1e-3, 1e-4), torch.float64: (1e-10, 1e-10), torch.float16: (1e-2, 1e-1)}.get(dtype, (0, 0))
    for dim in (1, 0, -1):
        check(getattr(ember, name)(e, dim), getattr(torch, name)(t, dim), *tol)
    e3, t3 = pair(make((4, 5, 6), dtype).clamp(-1, 1))
    check(getattr(ember, name)(e3, 1), getattr(torch, name)(t3, 1), *tol)


# ---- softmax, log_softmax --------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((7, 10), -1), ((5, 1024), 1), ((3, 1500), -1), ((4, 6, 9), 1), ((2, 3), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_backward(shape, dim, dtype, log):
    x = make(shape, dtype, low=-4, high=4)
    e, t = pair(x)
    e.requires_grad_(True)
    t.requires_grad_(True)
    name = "log_softmax" if log else "softmax"
    ge = getattr(ember.nn.functional, name)(e, dim)
    gt = getattr(torch.nn.functional, name)(t, dim)
    check(ge.detach(), gt.detach(), *TOL[dtype])
    go = make(shape, dtype, seed=1)
    ee, tt = pair(go)
    ge.backward(ee)
    gt.backward(tt)
    check(e.grad, t.grad, *TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1028, 4096, 4100, 16384, 20000])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_long_rows(n, dtype, log):
    # Rows held in registers (16-byte aligned rows of up to 4096 vectors) and
    # the rows that are not (a misaligned start, too long, not whole vectors).
    x = make((3, n), dtype, low=-6, high=6)
    e, t = pair(x)
    name = "log_softmax" if log else "softmax"
    ye, yt = getattr(ember, name)(e, -1), getattr(torch, name)(t, -1)
    check(ye, yt, *TOL[dtype])
    e, t = pair(make((2 * n + 1,), dtype, low=-6, high=6))
    ev, tv = e[1:].view(2, n), t[1:].view(2, n)
    check(getattr(ember, name)(ev, -1), getattr(torch, name)(tv, -1), *TOL[dtype])
    # Backward, with an aligned and a misaligned gradient.
    backward = "_log_softmax_backward_data" if log else "_softmax_backward_data"
    ge, gt = pair(make((3 * n + 1,), dtype, seed=1))
    for start in (0, 1):
        gev, gtv = ge[start : start + 3 * n].view(3, n), gt[start : start + 3 * n].view(3, n)
        got = getattr(ember, backward)(gev, ye, -1, e.dtype)
        want = getattr(torch, backward)(gtv, yt, -1, t.dtype)
        check(got, want, *TOL[dtype])


@cuda_only
def test_softmax_half_to_float_long_rows():
    e, t = pair(make((4, 4096), torch.float16))
    if TORCH_DEVICE == "cuda":
        want = torch._softmax(t, -1, True)
    else:
        want = torch.softmax(t.float(), -1)
    check(ember._softmax(e, -1, True), want, 1e-3, 1e-4)


@cuda_only
def test_softmax_half_to_float():
    e, t = pair(make((6, 300), torch.float16))
    if TORCH_DEVICE == "cuda":
        want = torch._softmax(t, -1, True)
    else:
        want = torch.softmax(t.float(), -1)
    check(ember._softmax(e, -1, True), want, 1e-3, 1e-4)


def test_softmax_extremes():
    x = torch.tensor([[1e4, 0.0, -1e4], [float("-inf"), 0.0, 1.0], [float("nan"), 0.0, 1.0]])
    e, t = pair(x)
    check(ember.softmax(e, -1), torch.softmax(t, -1))
    check(ember.log_softmax(e, -1), torch.log_softmax(t, -1))


# ---- layer_norm ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "shape,normalized", [((4, 7, 32), (32,)), ((3, 1000), (1000,)), ((600, 16), (16,)), ((2, 3, 4, 5), (4, 5))]
)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_forward_backward(shape, normalized, affine, dtype):
    e, t = pair(make(shape, dtype))
    e.requires_grad_(True)
    t.requires_grad_(True)
    ew = eb = tw = tb = None
    if affine:
        ew, tw = pair(make(normalized, dtype, seed=2))
        eb, tb = pair(make(normalized, dtype, seed=3))
        for a in (ew, tw, eb, tb):
            a.requires_grad_(True)
    ye = ember.nn.functional.layer_norm(e, normalized, ew, eb, 1e-5)
    yt = torch.nn.functional.layer_norm(t, normalized, tw, tb, 1e-5)
    check(ye.detach(), yt.detach(), *TOL[dtype])
    ge, gt = pair(make(shape, dtype, seed=4))
    ye.backward(ge)
    yt.backward(gt)
    rtol, atol = TOL[dtype]
    check(e.grad, t.grad, rtol * 10, atol * 10)
    if affine:
        # Parameter gradients sum over the rows: 16-bit roundings of the terms add up.
        rows = t.numel() // tw.numel()
        scale = rows**0.5 if dtype in (torch.float16, torch.bfloat16) else 1.0
        check(ew.grad, tw.grad, rtol * 10, atol * 10 * scale)
        check(eb.grad, tb.grad, rtol * 10, atol * 10 * scale)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("D", [4096, 1002, 12288, 40000])
def test_layer_norm_long_rows(D, dtype):
    # Rows held in registers (16-byte aligned, whole vectors, not too long) and the others.
    x = make((3, D), dtype, low=-3, high=5)
    w, b = make((D,), dtype, seed=2), make((D,), dtype, seed=3)
    (e, t), (ew, tw), (eb, tb) = pair(x), pair(w), pair(b)
    for args_e, args_t in (((ew, eb), (tw, tb)), ((ew, None), (tw, None)), ((None, None), (None, None))):
        ye, me, re = ember.native_layer_norm(e, [D], *args_e, 1e-5)
        yt, mt, rt = torch.native_layer_norm(t, [D], *args_t, 1e-5)
        for g, want in ((ye, yt), (me, mt), (re, rt)):
            check(g, want, *TOL[dtype])
    # A misaligned start.
    e, t = pair(make((3 * D + 1,), dtype))
    ye = ember.nn.functional.layer_norm(e[1:].view(3, D), (D,), ew, eb)
    yt = torch.nn.functional.layer_norm(t[1:].view(3, D), (D,), tw, tb)
    check(ye, yt, *TOL[dtype])
    # Gradients, with and without the affine weight.
    rtol, atol = TOL[dtype]
    for affine in (True, False):
        (e, t), (ew, tw), (eb, tb) = pair(x), pair(w), pair(b)
        params_e, params_t = ((ew, eb), (tw, tb)) if affine else ((None, None), (None, None))
        for a in (e, t, *params_e, *params_t):
            if a is not None:
                a.requires_grad_(True)
        ye = ember.nn.functional.layer_norm(e, (D,), *params_e)
        yt = torch.nn.functional.layer_norm(t, (D,), *params_t)
        ge, gt = pair(make((3, D), dtype, seed=4))
        ye.backward(ge)
        yt.backward(gt)
        check(e.grad, t.grad, rtol * 10, atol * 10)
        if affine:
            check(ew.grad, tw.grad, rtol * 10, atol * 10)
            check(eb.grad, tb.grad, rtol * 10, atol * 10)


def test_layer_norm_saved_statistics():
    e, t = pair(make((5, 64)))
    ye, me, re = ember.native_layer_norm(e, [64], None, None, 1e-5)
    yt, mt, rt = torch.native_layer_norm(t, [64], None, None, 1e-5)
    for g, w in ((ye, yt), (me, mt), (re, rt)):
        check(g, w, *TOL[torch.float32])
    assert to_torch(me).shape == mt.shape
