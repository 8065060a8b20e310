"""bfloat16 (and float16) convolutions against PyTorch, which hands them to
oneDNN on CPUs with bfloat16 kernels (Note [16-bit convolutions through
oneDNN]): the output and the gradients of input, weight and bias."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cpu_flags, torch

import ember

# The bits were compared on AVX-512 machines with AMX, where oneDNN 3.2 (Ember's) and
# 3.12 (PyTorch's) run the same kinds of AMX kernels.
AMX_BF16 = {"avx512bw", "avx512vl", "avx512dq", "amx_bf16"} <= cpu_flags() and "oneDNN" in ember.__config__.show()
needs_amx = pytest.mark.skipif(not AMX_BF16, reason="bits compared where oneDNN runs AMX bfloat16 kernels")


def run(L, fn, arrays, dtype, channels_last=False, **kw):
    """fn's output and the gradients of input, weight and bias, as float32 arrays."""
    x, w, b, gy = (L.from_numpy(a.copy()).to(getattr(L, dtype)) for a in arrays)
    if channels_last:
        x = x.contiguous(memory_format=L.channels_last)
    for t in (x, w, b):
        t.requires_grad_()
    y = getattr(L.nn.functional, fn)(x, w, b, **kw)
    y.backward(gy)
    assert all(t.dtype == getattr(L, dtype) for t in (y, x.grad, w.grad, b.grad))
    return [t.detach().float().numpy() for t in (y, x.grad, w.grad, b.grad)]


def arrays_for(fn, n, c, o, size, k, seed, **kw):
    rng = np.random.default_rng(seed)
    one_d = fn == "conv1d"
    x = rng.standard_normal((n, c, size) if one_d else (n, c, size, size)).astype(np.float32)
    groups = kw.get("groups", 1)
    if fn == "conv_transpose2d":
        w = rng.standard_normal((c, o // groups, k, k)).astype(np.float32)
    else:
        w = rng.standard_normal((o, c // groups) + ((k,) if one_d else (k, k))).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    with torch.no_grad():
        shape = getattr(torch.nn.functional, fn)(torch.from_numpy(x), torch.from_numpy(w), **kw).shape
    return [x, w, b, rng.standard_normal(tuple(shape)).astype(np.float32)]


CASES = [
    # fn, n, c, o, size, k, channels_last, keywords
    ("conv2d", 1, 16, 16, 14, 3, False, {}),
    ("conv2d", 8, 16, 32, 14, 3, False, {"padding": 2, "dilation": 2}),
    ("conv2d", 8, 32, 32, 14, 3, True, {"stride": 2}),
    ("conv2d", 8, 64, 32, 14, 5, True, {}),
    ("conv2d", 1, 32, 64, 14, 1, False, {"stride": 2}),
    ("conv2d", 8, 32, 16, 14, 1, True, {"stride": 2, "padding": 1}),
    ("conv2d", 64, 16, 64, 8, 3, False, {"padding": 1}),
    ("conv2d", 64, 64, 64, 8, 3, True, {"stride": 2, "padding": 1, "groups": 2}),
    ("conv2d", 64, 16, 16, 8, 1, False, {"groups": 2}),
    ("conv2d", 8, 32, 32, 14, 3, False, {"padding": 1, "groups": 32}),  # depthwise
    ("conv1d", 8, 64, 64, 20, 1, False, {"padding": 1}),
    ("conv1d", 64, 32, 32, 20, 3, False, {"padding": 1}),
    ("conv_transpose2d", 8, 16, 16, 7, 3, False, {"padding": 1}),
    ("conv_transpose2d", 8, 16, 32, 7, 3, False, {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose2d", 8, 32, 16, 7, 4, False, {"stride": 2, "padding": 1}),
    ("conv_transpose2d", 8, 32, 32, 7, 3, False, {"stride": 2, "output_padding": 1, "groups": 2}),
]


@needs_amx
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_bfloat16_convolution_bits_as_torch(case, threads):
    fn, n, c, o, size, k, channels_last, kw = case
    arrays = arrays_for(fn, n, c, o, size, k, seed=n * 1000 + c * 10 + k, **kw)
    old = ember.get_num_threads(), torch.get_num_threads()
    ember.set_num_threads(threads), torch.set_num_threads(threads)
    try:
        got = run(ember, fn, arrays, "bfloat16", channels_last, **kw)
        want = run(torch, fn, arrays, "bfloat16", channels_last, **kw)
    finally:
        ember.set_num_threads(old[0]), torch.set_num_threads(old[1])
    for name, g, e in zip(("output", "input grad", "weight grad", "bias grad"), got, want):
        assert np.array_equal(g.view(np.uint32), e.view(np.uint32)), name


@needs_amx
@pytest.mark.parametrize("c", [1, 3, 8])
def test_bfloat16_convolution_few_input_channels(c):
    """With fewer than 16 input channels per group oneDNN 3.12 (PyTorch's)
    blocks the forward sum in a way 3.2 (Ember's) does not: now and then an
    output element lies one bfloat16 step away (or, where the sum cancels to
    near zero, a float32 rounding away); the gradients match."""
    arrays = arrays_for("conv2d", 8, c, 64, 14, 3, seed=c, padding=1)
    got = run(ember, "conv2d", arrays, "bfloat16", padding=1)
    want = run(torch, "conv2d", arrays, "bfloat16", padding=1)
    np.testing.assert_allclose(got[0], want[0], rtol=2**-7, atol=1e-5)
    for g, e in zip(got[1:], want[1:]):
        assert np.array_equal(g, e)


@needs_amx
@pytest.mark.parametrize("fn", ["conv2d", "conv_transpose2d"])
def test_float16_convolution_close_to_torch(fn):
    """PyTorch takes oneDNN's AMX-FP16 kernels (3.12); oneDNN 3.2 has none
    and runs its AVX512-FP16 ones, which sum in float32 in another order:
    results within a float16 step or two."""
    kw = {"padding": 1} if fn == "conv2d" else {"stride": 2, "padding": 1}
    arrays = arrays_for(fn, 8, 16, 32, 12, 3, seed=7, **kw)
    got = run(ember, fn, arrays, "float16", **kw)
    want = run(torch, fn, arrays, "float16", **kw)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=2**-9, atol=2**-9 * np.abs(e).max())


def _small_cnn(L):
    nn = L.nn
    L.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(16, 64, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=2, padding=1, groups=64),
        nn.Flatten(),
        nn.Linear(64 * 7 * 7, 10),
    )
    return model, L.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


@needs_amx
@pytest.mark.parametrize("threads", [1, 2])
def test_autocast_cnn_training_losses_as_torch(threads):
    """A few SGD steps of a small CNN under CPU bfloat16 autocast print
    PyTorch's losses (no batch norm, whose 16-bit statistics are not yet
    PyTorch's bits, and no layer with fewer than 16 input channels)."""
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((32, 16, 14, 14)).astype(np.float32)
    ya = rng.integers(0, 10, 32)

    def losses(L):
        model, opt = _small_cnn(L)
        x, y = L.from_numpy(xa.copy()), L.from_numpy(ya.copy())
        out = []
        for _ in range(5):
            opt.zero_grad()
            with L.autocast("cpu", dtype=L.bfloat16):
                loss = L.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            out.append(loss.item())
        return out

    old = ember.get_num_threads(), torch.get_num_threads()
    ember.set_num_threads(threads), torch.set_num_threads(threads)
    try:
        assert losses(ember) == losses(torch)
    finally:
        ember.set_num_threads(old[0]), torch.set_num_threads(old[1])
