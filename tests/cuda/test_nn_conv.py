"""Convolutions on CUDA (cuDNN) against PyTorch (on CUDA where available):
1-d, 2-d and 3-d, grouped, dilated, padded, strided and transposed, forward
and both gradients, in float32 (full precision and TF32), float64, float16
and bfloat16, contiguous and channels-last; torch.backends.cudnn's switches."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
import torch
from _compare import DEVICE, cuda_only, make, pair, to_torch
from _compare import check as _check

import ember

pytestmark = pytest.mark.requires_cuda


def check(e, t, rtol=None, atol=None):
    """_compare.check on detached results (gradients' graphs are not compared)."""
    _check(e.detach(), t.detach(), rtol, atol)


# cuDNN's algorithms sum in their own orders; fp32 without TF32 stays close.
TOL = {
    torch.float32: (1e-4, 1e-4),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (5e-3, 5e-3),
    torch.bfloat16: (4e-2, 4e-2),
}


@pytest.fixture(autouse=True)
def full_precision():
    """Full float32 in both libraries unless a test asks for TF32."""
    saved = (ember.backends.cudnn.allow_tf32, torch.backends.cudnn.allow_tf32)
    ember.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    ember.backends.cudnn.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


# (input shape, weight shape, kwargs, transposed)
CASES = [
    ((2, 3, 17), (4, 3, 3), dict(padding=1), False),
    ((2, 4, 17), (6, 2, 5), dict(stride=2, dilation=2, groups=2), False),
    ((2, 3, 9, 11), (5, 3, 3, 3), dict(padding=1), False),
    ((2, 4, 12, 10), (8, 1, 3, 3), dict(stride=2, padding=1, groups=4), False),
    ((1, 2, 13, 13), (3, 2, 3, 2), dict(stride=(2, 1), padding=(2, 0), dilation=(2, 3)), False),
    ((2, 2, 5, 6, 7), (3, 2, 3, 3, 3), dict(padding=1), False),
    ((2, 4, 5, 6, 7), (4, 2, 2, 3, 1), dict(stride=(1, 2, 1), groups=2), False),
    ((2, 4, 9), (4, 3, 3), dict(stride=2, padding=1, output_padding=1), True),
    ((2, 4, 6, 7), (4, 2, 3, 3), dict(stride=2, padding=1, output_padding=1, groups=2), True),
    ((1, 3, 4, 5, 3), (3, 2, 3, 3, 3), dict(stride=2, padding=1), True),
]


def conv_fn(lib, x, w, b, kw, transposed):
    dims = w.dim() - 2
    name = f"conv_transpose{dims}d" if transposed else f"conv{dims}d"
    return getattr(lib.nn.functional, name)(x, w, b, **kw)


def bias_len(wshape, kw, transposed):
    return wshape[1] * kw.get("groups", 1) if transposed else wshape[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_forward_and_gradients(case, dtype):
    xshape, wshape, kw, transposed = CASES[case]
    x_e, x_t = pair(make(xshape, dtype, seed=1))
    w_e, w_t = pair(make(wshape, dtype, seed=2, low=-0.5, high=0.5))
    b_e, b_t = pair(make((bias_len(wshape, kw, transposed),), dtype, seed=3))
    for t in (x_e, w_e, b_e, x_t, w_t, b_t):
        t.requires_grad_(True)
    y_e = conv_fn(ember, x_e, w_e, b_e, kw, transposed)
    y_t = conv_fn(torch, x_t, w_t, b_t, kw, transposed)
    rtol, atol = TOL[dtype]
    check(y_e, y_t, rtol, atol)
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=4))
    y_e.backward(g_e)
    y_t.backward(g_t)
    # Gradients sum over more terms: a looser bound for the 16-bit types.
    scale = 1 if dtype in (torch.float32, torch.float64) else 4
    for a, b in ((x_e, x_t), (w_e, w_t), (b_e, b_t)):
        check(a.grad, b.grad, rtol * scale, atol * scale)


@cuda_only
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_channels_last_keeps_layout(dtype):
    x_e, x_t = pair(make((2, 8, 9, 9), dtype, seed=5))
    w_e, w_t = pair(make((16, 8, 3, 3), dtype, seed=6, low=-0.5, high=0.5))
    x_e = x_e.contiguous(memory_format=ember.channels_last)
    x_t = x_t.contiguous(memory_format=torch.channels_last)
    y_e = ember.nn.functional.conv2d(x_e, w_e, None, padding=1)
    y_t = torch.nn.functional.conv2d(x_t, w_t, None, padding=1)
    assert y_e.is_contiguous(memory_format=ember.channels_last) == y_t.is_contiguous(memory_format=torch.channels_last)
    check(y_e, y_t, *TOL[dtype])


@cuda_only
def test_tf32_follows_the_switch():
    x_e, x_t = pair(make((4, 32, 16, 16), torch.float32, seed=7))
    w_e, w_t = pair(make((32, 32, 3, 3), torch.float32, seed=8))
    exact = torch.nn.functional.conv2d(x_t.double(), w_t.double(), padding=1)
    ember.backends.cudnn.allow_tf32 = False
    full = to_torch(ember.nn.functional.conv2d(x_e, w_e, padding=1)).double()
    ember.backends.cudnn.allow_tf32 = True
    tf32 = to_torch(ember.nn.functional.conv2d(x_e, w_e, padding=1)).double()
    err_full = ((full - exact.cpu()).norm() / exact.norm()).item()
    err_tf32 = ((tf32 - exact.cpu()).norm() / exact.norm()).item()
    assert err_full < 1e-6
    assert err_tf32 < 3e-3


@cuda_only
# Not named `benchmark`: pytest-benchmark owns that fixture name.
@pytest.mark.parametrize("use_benchmark", [False, True])
def test_benchmark_and_deterministic_modes(use_benchmark):
    x_e, x_t = pair(make((4, 16, 20, 20), torch.float32, seed=9))
    w_e, w_t = pair(make((16, 16, 3, 3), torch.float32, seed=10))
    want = torch.nn.functional.conv2d(x_t, w_t, padding=1)
    with ember.backends.cudnn.flags(enabled=True, benchmark=use_benchmark, deterministic=True, allow_tf32=False):
        assert ember.backends.cudnn.benchmark is use_benchmark
        assert ember.backends.cudnn.deterministic is True
        x_e.requires_grad_(True)
        w_e.requires_grad_(True)
        first = ember.nn.functional.conv2d(x_e, w_e, padding=1)
        first.sum().backward()
        gw1 = to_torch(w_e.grad)
        w_e.grad = None
        ember.nn.functional.conv2d(x_e, w_e, padding=1).sum().backward()
        # Deterministic algorithms: the same gradient bit for bit.
        assert torch.equal(gw1, to_torch(w_e.grad))
    check(first.detach(), want.detach(), *TOL[torch.float32])


@cuda_only
@pytest.mark.parametrize("limit", [1, 0])
def test_benchmark_limit(limit):
    """cudnn.benchmark times at most benchmark_limit plans (0: every admitted one); each pass
    (forward, input and weight gradients) gives torch's values whichever plan wins."""
    x_e, x_t = pair(make((2, 8, 12, 12), torch.float32, seed=11))
    w_e, w_t = pair(make((8, 8, 3, 3), torch.float32, seed=12))
    x_t.requires_grad_(True)
    w_t.requires_grad_(True)
    want = torch.nn.functional.conv2d(x_t, w_t, padding=1)
    want.sum().backward()
    with ember.backends.cudnn.flags(enabled=True, benchmark=True, benchmark_limit=limit, allow_tf32=False):
        x_e.requires_grad_(True)
        w_e.requires_grad_(True)
        got = ember.nn.functional.conv2d(x_e, w_e, padding=1)
        got.sum().backward()
    check(got.detach(), want.detach(), *TOL[torch.float32])
    check(x_e.grad, x_t.grad, *TOL[torch.float32])
    check(w_e.grad, w_t.grad, *TOL[torch.float32])


@cuda_only
def test_cudnn_reports_its_version():
    assert ember.backends.cudnn.is_available()
    v = ember.backends.cudnn.version()
    assert isinstance(v, int) and v >= 90000
    if torch.cuda.is_available():
        # The same library major version as PyTorch's.
        assert v // 10000 == torch.backends.cudnn.version() // 10000


def test_bad_arguments_raise_pytorchs_errors():
    x_e, x_t = pair(make((1, 3, 8, 8)))
    w_e, w_t = pair(make((4, 2, 3, 3)))
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.conv2d(x_t, w_t)
    with pytest.raises(RuntimeError) as got:
        ember.nn.functional.conv2d(x_e, w_e)
    assert str(got.value) == str(want.value)


@cuda_only
def test_integer_input_is_not_implemented():
    x = ember.ones((1, 1, 4, 4), dtype=ember.int64, device=DEVICE)
    w = ember.ones((1, 1, 3, 3), dtype=ember.int64, device=DEVICE)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.nn.functional.conv2d(x, w)


def test_empty_batch():
    x_e, x_t = pair(make((0, 3, 8, 8)))
    w_e, w_t = pair(make((4, 3, 3, 3)))
    check(ember.nn.functional.conv2d(x_e, w_e), torch.nn.functional.conv2d(x_t, w_t))


_LEGACY_SCRIPT = """
import sys
import numpy as np
import torch
sys.path.insert(0, sys.argv[1])
from _compare import pair, to_torch
import ember
ember.backends.cudnn.allow_tf32 = False
data = torch.load(sys.argv[2])
out = {}
for name, (x, w, cl) in data.items():
    x_e, w_e = pair(x)[0], pair(w)[0]
    if cl:
        x_e = x_e.contiguous(memory_format=ember.channels_last)
        w_e = w_e.contiguous(memory_format=ember.channels_last)
    x_e.requires_grad_(True)
    w_e.requires_grad_(True)
    y = ember.nn.functional.conv2d(x_e, w_e, padding=1)
    y.backward(ember.ones_like(y))
    out[name] = [to_torch(t).float() for t in (y.detach(), x_e.grad, w_e.grad)]
torch.save(out, sys.argv[3])
"""


@cuda_only
def test_graph_api_matches_the_legacy_api(tmp_path):
    """The graph API's plans (the default) and the legacy calls (EMBER_CUDNN_GRAPH=0) agree."""
    data = {
        "f32": (make((4, 16, 12, 12), torch.float32, seed=11), make((8, 16, 3, 3), torch.float32, seed=12), False),
        "bf16_cl": (make((4, 16, 12, 12), torch.bfloat16, seed=13), make((8, 16, 3, 3), torch.bfloat16, seed=14), True),
    }
    torch.save(data, tmp_path / "in.pt")
    env = dict(os.environ, EMBER_CUDNN_GRAPH="0")
    here = str(pathlib.Path(__file__).parent)
    subprocess.run(
        [sys.executable, "-c", _LEGACY_SCRIPT, here, str(tmp_path / "in.pt"), str(tmp_path / "out.pt")],
        env=env,
        check=True,
    )
    legacy = torch.load(tmp_path / "out.pt")
    for name, (x, w, cl) in data.items():
        x_e, w_e = pair(x)[0], pair(w)[0]
        if cl:
            x_e = x_e.contiguous(memory_format=ember.channels_last)
            w_e = w_e.contiguous(memory_format=ember.channels_last)
        x_e.requires_grad_(True)
        w_e.requires_grad_(True)
        y = ember.nn.functional.conv2d(x_e, w_e, padding=1)
        y.backward(ember.ones_like(y))
        tol = TOL[x.dtype]
        for got, want in zip((y.detach(), x_e.grad, w_e.grad), legacy[name]):
            torch.testing.assert_close(to_torch(got).float(), want, rtol=tol[0], atol=tol[1] * 10)
