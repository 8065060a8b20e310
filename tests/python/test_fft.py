"""ember.fft, the window functions and stft/istft against PyTorch.

Values: FFTs are not bit-reproducible across engines (PyTorch's CPU build runs
MKL, Ember its own mixed-radix/Bluestein plans), so results are compared with
rtol 1e-5 (float32) / 1e-12 (float64) and an absolute tolerance of the same
size times the largest magnitude of the result: a transform's rounding error
grows with the norm of the whole signal, not with each output element.
Also compared: dtypes, shapes, output strides, exception types, gradients
(against torch's and by gradcheck in float64) and grad_fn names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import torch

import ember
import ember.fft as efft

RTOL = {"float32": 1e-5, "complex64": 1e-5, "float64": 1e-12, "complex128": 1e-12}


def _name(dtype):
    return str(dtype).split(".")[1]


def make(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    arr = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        arr = arr + 1j * rng.standard_normal(shape)
    arr = arr.astype(dtype)
    return ember.tensor(arr.tolist(), dtype=getattr(ember, dtype)).reshape(shape), torch.tensor(arr)


def close(e, t, scale=1.0):
    """Values, dtype and shape of e equal t's within the FFT tolerance."""
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    if t.numel() == 0:
        return
    got = torch.tensor(e.detach().tolist(), dtype=t.dtype).reshape(t.shape)
    rtol = RTOL[_name(t.dtype)] * scale
    atol = rtol * max(float(t.detach().abs().max()), 1.0)
    torch.testing.assert_close(got, t.detach(), rtol=rtol, atol=atol)


def both_raise(fe, ft):
    with pytest.raises(Exception) as expected:  # noqa: PT011
        ft()
    with pytest.raises(type(expected.value)) as got:
        fe()
    return str(got.value), str(expected.value)


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}


def input_dtypes(name):
    return ["float32", "float64"] if name in REAL_ONLY else ["float32", "float64", "complex64", "complex128"]


# ---- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 12, 16, 30, 49, 60, 97, 128, 360, 1000, 1009])
def test_one_dim_lengths(name, n):
    for dtype in input_dtypes(name):
        e, t = make((3, n), dtype)
        if name in ("irfft", "hfft") and n == 1:
            close(getattr(efft, name)(e, n=2), getattr(torch.fft, name)(t, n=2))
            continue
        close(getattr(efft, name)(e), getattr(torch.fft, name)(t))


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", [None, "backward", "forward", "ortho"])
def test_one_dim_norm_n_dim(name, norm):
    for dtype in input_dtypes(name):
        e, t = make((4, 10, 6), dtype, seed=1)
        for n in [None, 3, 10, 17]:
            for dim in [-1, 0, 1]:
                got = getattr(efft, name)(e, n=n, dim=dim, norm=norm)
                want = getattr(torch.fft, name)(t, n=n, dim=dim, norm=norm)
                close(got, want)
                assert got.stride() == want.stride(), (n, dim, got.stride(), want.stride())


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
def test_n_dim(name, norm):
    two = name.endswith("2")
    cases = [dict(), dict(s=(5, 8)), dict(dim=(0, 2)), dict(s=(4, -1), dim=(2, 0))]
    if not two:
        cases += [dict(dim=(1,)), dict(s=(3, 4, 6)), dict(dim=(-1, 0, 1))]
    for dtype in input_dtypes(name):
        e, t = make((6, 5, 7), dtype, seed=2)
        for kw in cases:
            got = getattr(efft, name)(e, norm=norm, **kw)
            want = getattr(torch.fft, name)(t, norm=norm, **kw)
            close(got, want)
            assert got.stride() == want.stride(), (kw, got.stride(), want.stride())


def test_large_and_batched():
    for n in [4096, 4099, 2 * 3 * 5 * 7 * 11, 31 * 37]:
        for dtype in ["complex64", "complex128"]:
            e, t = make((2, n), dtype, seed=n)
            close(efft.fft(e), torch.fft.fft(t))
            close(efft.ifft(e), torch.fft.ifft(t))
        e, t = make((3, n), "float32", seed=n)
        close(efft.rfft(e), torch.fft.rfft(t))
        close(efft.irfft(efft.rfft(e), n=n), torch.fft.irfft(torch.fft.rfft(t), n=n))
    e, t = make((64, 48, 40), "complex64", seed=5)
    close(efft.fftn(e), torch.fft.fftn(t))
    close(efft.fft2(e), torch.fft.fft2(t))


def test_non_contiguous_and_views():
    e, t = make((8, 12, 10), "complex128", seed=3)
    for fe, ft in [
        (lambda x: x.transpose(0, 2), lambda x: x.transpose(0, 2)),
        (lambda x: x[:, ::2, 1::3], lambda x: x[:, ::2, 1::3]),
        (lambda x: x[2:5].permute(1, 2, 0), lambda x: x[2:5].permute(1, 2, 0)),
    ]:
        for dim in [0, 1, -1]:
            got, want = efft.fft(fe(e), dim=dim), torch.fft.fft(ft(t), dim=dim)
            close(got, want)
            assert got.stride() == want.stride()
        close(efft.fftn(fe(e), dim=(0, 2)), torch.fft.fftn(ft(t), dim=(0, 2)))
        close(efft.irfftn(fe(e), dim=(1, 0)), torch.fft.irfftn(ft(t), dim=(1, 0)))
        close(efft.rfft(fe(e).real, dim=1), torch.fft.rfft(ft(t).real, dim=1))
        assert efft.irfftn(fe(e), dim=(1, 0)).stride() == torch.fft.irfftn(ft(t), dim=(1, 0)).stride()
    # expanded (stride 0) input
    close(efft.fft(e[0, 0].expand(3, 10), dim=0), torch.fft.fft(t[0, 0].expand(3, 10), dim=0))


def test_empty_batches_and_scalars():
    # PyTorch's MKL path raises "Inconsistent configuration parameters" for an
    # empty batch (its pocketfft path returns an empty result, as Ember does).
    e, t = make((0, 8), "complex64")
    for got, shape, dtype in [
        (efft.fft(e), (0, 8), ember.complex64),
        (efft.rfft(e.real), (0, 5), ember.complex64),
        (efft.irfft(e), (0, 14), ember.float32),
        (efft.fftn(e, dim=(1,)), (0, 8), ember.complex64),
        (efft.rfftn(e.real.double(), dim=(1,)), (0, 5), ember.complex128),
    ]:
        assert tuple(got.shape) == shape and got.dtype == dtype
    both_raise(lambda: efft.fft(e, dim=0), lambda: torch.fft.fft(t, dim=0))
    s_e, s_t = ember.tensor(2.0), torch.tensor(2.0)
    both_raise(lambda: efft.fft(s_e), lambda: torch.fft.fft(s_t))
    close(efft.fftn(s_e), torch.fft.fftn(s_t))
    close(efft.ifftn(s_e), torch.fft.ifftn(s_t))


def test_dtype_promotion():
    ints_e = ember.tensor([[1, 2, 3, 4], [5, 6, 7, 9]])
    ints_t = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 9]])
    for name in ONE_D + N_D:
        close(getattr(efft, name)(ints_e), getattr(torch.fft, name)(ints_t))
        close(getattr(efft, name)(ints_e.bool()), getattr(torch.fft, name)(ints_t.bool()))
    prev_e, prev_t = ember.get_default_dtype(), torch.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        torch.set_default_dtype(torch.float64)
        close(efft.fft(ints_e), torch.fft.fft(ints_t))
        close(efft.irfft(ints_e), torch.fft.irfft(ints_t))
    finally:
        ember.set_default_dtype(prev_e)
        torch.set_default_dtype(prev_t)
    for dtype in ["float16", "bfloat16"]:
        he = ember.ones(8, dtype=getattr(ember, dtype))
        ht = torch.ones(8, dtype=getattr(torch, dtype))
        for name in ONE_D + N_D:
            msg, want = both_raise(lambda: getattr(efft, name)(he), lambda: getattr(torch.fft, name)(ht))
            assert msg == want


# ---- errors ---------------------------------------------------------------------------------


def test_errors():
    e, t = make((4, 6), "complex64")
    r_e, r_t = make((4, 6), "float32")
    cases = [
        ("fft", (e,), dict(norm="bad")),
        ("fft", (e,), dict(n=0)),
        ("fft", (e,), dict(n=-2)),
        ("fft", (e,), dict(dim=2)),
        ("irfft", (e,), dict(n=0)),
        ("irfft", (e[:, :1],), dict()),
        ("rfft", (e,), dict()),
        ("ihfft", (e,), dict()),
        ("rfftn", (e,), dict()),
        ("ihfftn", (e,), dict()),
        ("fftn", (e,), dict(dim=(0, 0))),
        ("fftn", (e,), dict(dim=(0, -2))),
        ("fftn", (e,), dict(s=(2, 3, 4))),
        ("fftn", (e,), dict(s=(2, 3), dim=(0,))),
        ("fftn", (e,), dict(s=(0, 3))),
        ("rfftn", (r_e,), dict(dim=())),
        ("irfftn", (e,), dict(dim=())),
        ("fft2", (e[0],), dict()),
        ("fft", (e,), dict(out=ember.empty(0))),
        ("rfft", (r_e,), dict(out=ember.empty(0))),
        ("irfft", (e,), dict(out=ember.empty(0, dtype=ember.complex64))),
    ]
    for name, args, kw in cases:
        targs = tuple(
            t if a is e else r_t if a is r_e else t[0] if a.dim() == 1 and a.dtype == e.dtype else t[:, :1]
            for a in args
        )
        tkw = dict(kw)
        if "out" in kw:
            tkw["out"] = torch.empty(0, dtype=getattr(torch, _name(kw["out"].dtype)))
        msg, want = both_raise(
            lambda: getattr(efft, name)(*args, **kw), lambda: getattr(torch.fft, name)(*targs, **tkw)
        )
        assert msg == want, (name, kw)


def test_out():
    e, t = make((3, 8), "complex64")
    out_e = ember.empty(0, dtype=ember.complex64)
    out_t = torch.empty(0, dtype=torch.complex64)
    res = efft.fft(e, out=out_e)
    torch.fft.fft(t, out=out_t)
    assert res is out_e
    close(out_e, out_t)
    out_e, out_t = ember.empty(2, dtype=ember.float32), torch.empty(2, dtype=torch.float32)
    efft.irfft(e, n=10, out=out_e)
    torch.fft.irfft(t, n=10, out=out_t)
    close(out_e, out_t)
    out_e, out_t = ember.empty(0, dtype=ember.complex64), torch.empty(0, dtype=torch.complex64)
    efft.rfftn(e.real, out=out_e)
    torch.fft.rfftn(t.real, out=out_t)
    close(out_e, out_t)


# ---- helpers --------------------------------------------------------------------------------


def test_fftfreq_and_shift():
    for n in [1, 2, 5, 8, 11]:
        for d in [1.0, 0.1, 3]:
            close(efft.fftfreq(n, d), torch.fft.fftfreq(n, d))
            close(efft.rfftfreq(n, d), torch.fft.rfftfreq(n, d))
            close(efft.fftfreq(n, d, dtype=ember.float64), torch.fft.fftfreq(n, d, dtype=torch.float64))
    f = efft.fftfreq(4, requires_grad=True)
    assert f.requires_grad and f.is_leaf
    both_raise(lambda: efft.fftfreq(4, dtype=ember.int64), lambda: torch.fft.fftfreq(4, dtype=torch.int64))
    e, t = make((4, 5, 3), "float32")
    msg, want = both_raise(lambda: efft.fftshift(e, ()), lambda: torch.fft.fftshift(t, ()))
    assert msg == want
    for dim in [None, 0, (1, 2), -1, [0, 2]]:
        close(efft.fftshift(e, dim), torch.fft.fftshift(t, dim))
        close(efft.ifftshift(e, dim), torch.fft.ifftshift(t, dim))
    close(efft.ifftshift(efft.fftshift(e)), t)


def test_import_forms():
    import importlib

    mod = importlib.import_module("ember.fft")
    assert mod is ember.fft and ember.fft.fft is efft.fft
    wanted = set(torch.fft.__all__) - {"Tensor"}
    assert wanted <= set(dir(ember.fft)), wanted - set(dir(ember.fft))


# ---- gradients ------------------------------------------------------------------------------


def _loss_grads(fn_e, fn_t, e, t, seed=7, same_node=True):
    """Gradients of a real loss sum(w * view_as_real(f(x))) in both libraries."""
    e = e.detach().requires_grad_(True)
    t = t.detach().requires_grad_(True)
    out_e, out_t = fn_e(e), fn_t(t)
    assert type(out_e.grad_fn).__name__ == type(out_t.grad_fn).__name__ or not same_node
    w_np = np.random.default_rng(seed).standard_normal(
        tuple(torch.view_as_real(out_t.resolve_conj()).shape if out_t.is_complex() else out_t.shape)
    )
    w_t = torch.tensor(w_np, dtype=torch.float64)
    w_e = ember.tensor(w_np.tolist(), dtype=ember.float64)
    le = (ember.view_as_real(out_e.resolve_conj()) if out_e.is_complex() else out_e).double().mul(w_e).sum()
    lt = (torch.view_as_real(out_t.resolve_conj()) if out_t.is_complex() else out_t).double().mul(w_t).sum()
    le.backward()
    lt.backward()
    close(e.grad, t.grad)


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_gradients_match_torch(name):
    for dtype in input_dtypes(name):
        e, t = make((4, 6), "float64" if dtype.startswith("float") else "complex128", seed=11)
        for kw in [dict(), dict(norm="ortho"), dict(norm="forward")]:
            _loss_grads(lambda x: getattr(efft, name)(x, **kw), lambda x: getattr(torch.fft, name)(x, **kw), e, t)
        if name in ONE_D:
            for n in [3, 5, 9]:
                _loss_grads(
                    lambda x: getattr(efft, name)(x, n=n, dim=0),
                    lambda x: getattr(torch.fft, name)(x, n=n, dim=0),
                    e,
                    t,
                )
        else:
            _loss_grads(
                lambda x: getattr(efft, name)(x, s=(3, 7)), lambda x: getattr(torch.fft, name)(x, s=(3, 7)), e, t
            )


def real_gradcheck(fn, x):
    """gradcheck of fn through real views of complex inputs and outputs (the
    Jacobian of the real map is what PyTorch's convention encodes)."""

    def as_real(y):  # ifft and ihfft of real input are conjugate views, as in PyTorch
        return ember.view_as_real(y.resolve_conj()) if y.is_complex() else y

    if x.is_complex():
        arg = ember.view_as_real(x).detach().clone().requires_grad_(True)
        return ember.autograd.gradcheck(lambda v: as_real(fn(ember.view_as_complex(v))), (arg,))
    arg = x.detach().clone().requires_grad_(True)
    return ember.autograd.gradcheck(lambda v: as_real(fn(v)), (arg,))


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_gradcheck(name):
    for dtype in input_dtypes(name):
        if dtype in ("float32", "complex64"):
            continue
        e, _ = make((3, 5), dtype, seed=13)
        fn = getattr(efft, name)
        assert real_gradcheck(lambda x: fn(x), e)
        assert real_gradcheck(lambda x: fn(x, norm="ortho", s=(4, 6)) if name in N_D else fn(x, n=6), e)


def test_operators_directly():
    e, t = make((3, 8), "complex128")
    for dim, norm, fwd, last in [([1], 0, True, 14), ([0, 1], 1, False, 14), ([0], 2, True, 4), ([1, 0], 1, True, 5)]:
        close(ember._fft_c2c(e, dim, norm, fwd), torch._fft_c2c(t, dim, norm, fwd))
        close(ember._fft_r2c(e.real, dim, norm, fwd), torch._fft_r2c(t.real, dim, norm, fwd))
        close(ember._fft_c2r(e, dim, norm, last), torch._fft_c2r(t, dim, norm, last))
    m = ember.empty(4, 9, 7, dtype=ember.complex64, device="meta")
    r = ember._fft_c2r(m, [1, 2], 2, 12)
    assert r.device.type == "meta" and tuple(r.shape) == (4, 9, 12) and r.dtype == ember.float32
    assert tuple(ember._fft_r2c(r, [1, 2], 0, True).shape) == (4, 9, 7)


# ---- windows --------------------------------------------------------------------------------

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows(name):
    for n in [0, 1, 2, 5, 16, 101]:
        for periodic in [True, False]:
            for dtype in ["float32", "float64"]:
                got = getattr(ember, name)(n, periodic, dtype=getattr(ember, dtype))
                want = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
                close(got, want, scale=10)
                assert got.stride() == want.stride()
    close(getattr(ember, name)(7), getattr(torch, name)(7))
    w = getattr(ember, name)(8, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    if name == "hamming_window":
        close(ember.hamming_window(9, False, 0.6, 0.3), torch.hamming_window(9, False, 0.6, 0.3))
    if name == "kaiser_window":
        close(ember.kaiser_window(9, False, 5.0), torch.kaiser_window(9, False, 5.0), scale=10)
    msg, want = both_raise(
        lambda: getattr(ember, name)(4, dtype=ember.int64), lambda: getattr(torch, name)(4, dtype=torch.int64)
    )
    assert msg == want
    msg, want = both_raise(lambda: getattr(ember, name)(-1), lambda: getattr(torch, name)(-1))
    assert msg == want


# ---- stft / istft ---------------------------------------------------------------------------


def _stft_pair(e, t, **kw):
    kw_e = dict(kw)
    kw_t = dict(kw)
    if "window" in kw:
        kw_t["window"] = torch.tensor(kw["window"].tolist(), dtype=getattr(torch, _name(kw["window"].dtype)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ember.stft(e, **kw_e), torch.stft(t, **kw_t)


def test_stft_values():
    e, t = make((2, 200), "float64", seed=21)
    win = ember.hann_window(32, dtype=ember.float64)
    for kw in [
        dict(n_fft=64, return_complex=True),
        dict(n_fft=64, hop_length=10, window=win, win_length=32, return_complex=True),
        dict(n_fft=32, window=win, center=False, return_complex=True),
        dict(n_fft=32, window=win, pad_mode="constant", normalized=True, return_complex=True),
        dict(n_fft=32, window=win, pad_mode="replicate", onesided=False, return_complex=True),
        dict(n_fft=32, window=win, return_complex=False),
        dict(n_fft=31, hop_length=7, return_complex=True),
    ]:
        got, want = _stft_pair(e, t, **kw)
        close(got, want)
        got, want = _stft_pair(e[0], t[0], **kw)
        close(got, want)
    c_e, c_t = make((150,), "complex128", seed=22)
    got, want = _stft_pair(c_e, c_t, n_fft=16, window=ember.hann_window(16, dtype=ember.float64))
    close(got, want)
    x_e = ember.tensor(t.float().tolist())
    got, want = _stft_pair(x_e, t.float(), n_fft=16, return_complex=True)
    close(got, want)
    assert got.stride() == want.stride()
    assert ember.randn(100).stft(16, return_complex=True).shape == (9, 26)


def test_stft_errors():
    e, t = make((100,), "float32")
    for kw in [
        dict(n_fft=16),
        dict(n_fft=200, center=False, return_complex=True),
        dict(n_fft=16, hop_length=0, return_complex=True),
        dict(n_fft=16, win_length=20, return_complex=True),
        dict(n_fft=16, window=ember.ones(5), return_complex=True),
        dict(n_fft=16, onesided=True, window=ember.ones(16, dtype=ember.complex64), return_complex=True),
    ]:
        kw_t = dict(kw)
        if "window" in kw:
            kw_t["window"] = torch.tensor(kw["window"].tolist(), dtype=getattr(torch, _name(kw["window"].dtype)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            both_raise(lambda: ember.stft(e, **kw), lambda: torch.stft(t, **kw_t))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msg, want = both_raise(lambda: ember.stft(e, 16), lambda: torch.stft(t, 16))
    assert msg == want
    both_raise(
        lambda: ember.stft(ember.ones(2, 3, 40), 8, return_complex=True),
        lambda: torch.stft(torch.ones(2, 3, 40), 8, return_complex=True),
    )


def test_istft_round_trip_and_values():
    e, t = make((2, 300), "float64", seed=23)
    win_e = ember.hann_window(64, dtype=ember.float64)
    win_t = torch.hann_window(64, dtype=torch.float64)
    for kw in [
        dict(),
        dict(hop_length=8),
        dict(normalized=True),
        dict(length=250),
        dict(length=320),
    ]:
        stft_kw = {k: v for k, v in kw.items() if k in ("hop_length", "center", "normalized")}
        spec_e = ember.stft(e, 64, window=win_e, return_complex=True, **stft_kw)
        spec_t = torch.stft(t, 64, window=win_t, return_complex=True, **stft_kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = ember.istft(spec_e, 64, window=win_e, **kw)
            want = torch.istft(spec_t, 64, window=win_t, **kw)
        close(got, want)
        close(ember.istft(spec_e[0], 64, window=win_e, **kw), torch.istft(spec_t[0], 64, window=win_t, **kw))
    spec_e = ember.stft(
        e, 32, window=ember.hann_window(20, dtype=ember.float64), win_length=20, onesided=False, return_complex=True
    )
    spec_t = torch.stft(
        t, 32, window=torch.hann_window(20, dtype=torch.float64), win_length=20, onesided=False, return_complex=True
    )
    for rc in [False, True]:
        got = ember.istft(
            spec_e, 32, window=ember.hann_window(20, dtype=ember.float64), win_length=20, return_complex=rc
        )
        want = torch.istft(
            spec_t, 32, window=torch.hann_window(20, dtype=torch.float64), win_length=20, return_complex=rc
        )
        close(got, want)
    assert spec_e.istft(32, window=ember.hann_window(20, dtype=ember.float64), win_length=20).shape == (2, 296)


def test_istft_errors():
    spec_e, spec_t = make((9, 12), "complex64")
    close(ember.istft(spec_e, 16, window=ember.hann_window(16)), torch.istft(spec_t, 16, window=torch.hann_window(16)))
    for kw in [
        dict(n_fft=16, hop_length=20),
        dict(n_fft=17, onesided=False),
        dict(n_fft=16, window=ember.ones(3)),
        dict(n_fft=16, return_complex=True),
    ]:
        kw_t = dict(kw)
        if "window" in kw:
            kw_t["window"] = torch.ones(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            both_raise(lambda: ember.istft(spec_e, **kw), lambda: torch.istft(spec_t, **kw_t))
    both_raise(lambda: ember.istft(spec_e.real, 16), lambda: torch.istft(spec_t.real, 16))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both_raise(
            lambda: ember.istft(ember.zeros(9, 12, dtype=ember.complex64), 16, window=ember.zeros(16)),
            lambda: torch.istft(torch.zeros(9, 12, dtype=torch.complex64), 16, window=torch.zeros(16)),
        )


def test_stft_istft_gradients():
    e, t = make((90,), "float64", seed=31)
    win_e, win_t = make((16,), "float64", seed=32)
    win_e, win_t = win_e.abs() + 0.5, win_t.abs() + 0.5
    _loss_grads(
        lambda x: ember.stft(x, 16, hop_length=4, window=win_e, return_complex=True),
        lambda x: torch.stft(x, 16, hop_length=4, window=win_t, return_complex=True),
        e,
        t,
        same_node=False,
    )
    _loss_grads(
        lambda w: ember.stft(e, 16, hop_length=4, window=w, return_complex=True),
        lambda w: torch.stft(t, 16, hop_length=4, window=w, return_complex=True),
        win_e,
        win_t,
        same_node=False,
    )
    spec_e = ember.stft(e, 16, hop_length=4, window=win_e, return_complex=True).detach()
    spec_t = torch.stft(t, 16, hop_length=4, window=win_t, return_complex=True).detach()
    _loss_grads(
        lambda s: ember.istft(s, 16, hop_length=4, window=win_e),
        lambda s: torch.istft(s, 16, hop_length=4, window=win_t),
        spec_e,
        spec_t,
        same_node=False,
    )
    assert real_gradcheck(lambda v: ember.stft(v, 16, hop_length=4, window=win_e, return_complex=True), e)
    assert real_gradcheck(lambda v: ember.istft(v, 16, hop_length=4, window=win_e), spec_e)


_WARNING_PROGRAM = """
import warnings
warnings.simplefilter("default")
import {lib} as torch
x = torch.randn(2, 300)
for n in (64, 32):
    s = torch.stft(x, n, return_complex=True)
    torch.istft(s, n)
    torch.stft(x, n, window=torch.hann_window(n), return_complex=False)
"""


def test_stft_warnings_once_per_process():
    """PyTorch warns of a missing window and of real output once per process
    (not once per calling line)."""
    import subprocess
    import sys

    def warnings_of(lib):
        run = subprocess.run([sys.executable, "-c", _WARNING_PROGRAM.format(lib=lib)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        return sorted(line.split("UserWarning: ")[1][:60] for line in run.stderr.splitlines() if "UserWarning" in line)

    assert warnings_of("ember") == warnings_of("torch")
    assert len(warnings_of("ember")) == 3
