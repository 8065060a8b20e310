"""GELU and its gradient bit for bit against PyTorch: oneDNN's primitive
where PyTorch takes it (contiguous float32, and bfloat16/float16 where the
CPU multiplies them with oneDNN), PyTorch's vector loop and scalar remainder
elsewhere, both forms, every floating dtype, with torch.backends.mkldnn on
and off. float64's erf form is held to its last bits: PyTorch's SLEEF 3.6
erf is not available here (Note [GELU loops])."""

import contextlib

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _inputs(n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((2, n)) * 4).astype("float32")
    specials = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, -9.5, 9.5]
    x[0, : min(n, len(specials))] = specials[: min(n, len(specials))]
    g = rng.standard_normal((2, n)).astype("float32")
    return x, g


def _layout(lib, arr, layout):
    t = lib.from_numpy(arr.copy())
    if layout == "strided":
        return lib.from_numpy(np.repeat(arr, 2, axis=1).copy())[:, ::2]
    if layout == "transposed":
        return t.t().contiguous().t()
    return t


def _assert_bits(e, t, exact):
    a, b = e.to(ember.float64).numpy(), t.to(torch.float64).numpy()
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        # 1 + erf(x) cancels for x << 0: the erf's last bit is an absolute error there.
        np.testing.assert_allclose(a, b, rtol=1e-15, atol=4e-15)


@contextlib.contextmanager
def _onednn(enabled):
    with torch.backends.mkldnn.flags(enabled=enabled), ember.backends.mkldnn.flags(enabled=enabled):
        yield


@pytest.mark.parametrize("onednn", [True, False])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 17, 64, 100, 1000, 20000])
def test_gelu_forward_and_gradient(n, dtype, approximate, layout, onednn):
    x, g = _inputs(n)
    exact = not (dtype == "float64" and approximate == "none")
    out = []
    with _onednn(onednn):
        for lib in (ember, torch):
            xl = _layout(lib, x, layout).to(getattr(lib, dtype)).requires_grad_(True)
            gl = lib.from_numpy(g.copy()).to(getattr(lib, dtype))
            y = lib.nn.functional.gelu(xl, approximate=approximate)
            y.backward(gl)
            out.append((y.detach(), xl.grad))
    (ye, ge), (yt, gt) = out
    _assert_bits(ye, yt, exact)
    _assert_bits(ge, gt, exact)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gelu_out_inplace_and_module(dtype):
    x, _ = _inputs(300)
    res = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).to(getattr(lib, dtype))
        out = lib.empty(2, 300, dtype=xl.dtype)
        lib.ops.aten.gelu.out(xl, out=out)
        inplace = xl.clone()
        lib.ops.aten.gelu_(inplace)
        module = lib.nn.GELU()(xl)
        res.append((out, inplace, module))
    for e, t in zip(*res):
        _assert_bits(e, t, True)
    # PyTorch leaves a strided out= of its oneDNN path unwritten; Ember fills it.
    strided = ember.empty(300, 2, dtype=res[0][0].dtype).t()
    ember.ops.aten.gelu.out(ember.from_numpy(x.copy()).to(strided.dtype), out=strided)
    _assert_bits(strided, torch.from_numpy(res[0][0].to(ember.float64).numpy()), True)


def test_gelu_grad_broadcast_and_two_threads():
    x, g = _inputs(40000)
    res = []
    for lib in (ember, torch):
        threads = lib.get_num_threads()
        lib.set_num_threads(2)
        try:
            xl = lib.from_numpy(x.copy()).to(lib.float16)
            gl = lib.from_numpy(g[:1].copy()).to(lib.float16).expand(2, 40000)
            grad = lib.ops.aten.gelu_backward(gl, xl, approximate="tanh")
            y = lib.nn.functional.gelu(xl.double(), approximate="tanh")
        finally:
            lib.set_num_threads(threads)
        res.append((grad, y))
    for e, t in zip(*res):
        _assert_bits(e, t, True)


def test_mkldnn_switches_as_pytorch():
    for lib in (ember, torch):
        m = lib.backends.mkldnn
        assert m.enabled is True and m.deterministic is False and m.allow_tf32 is None
        with m.flags(enabled=False, deterministic=True):
            assert m.enabled is False and m.deterministic is True
        assert m.enabled is True and m.deterministic is False
        previous = m.set_flags(False)
        assert previous == (True, False, None, "none") and m.enabled is False
        m.enabled = True
        assert m.enabled is True and m.VERBOSE_ON == 1 and m.is_available()
        with m.verbose(m.VERBOSE_OFF):
            pass
