"""torch.fft on CUDA (cuda/fft/SpectralOps.cpp: _fft_c2c, _fft_r2c and
_fft_c2r through cuFFT) against PyTorch's CUDA results: every function of
torch.fft's transforms with each norm, odd and even lengths, n/s that pad
or trim, batched and non-contiguous inputs (transposed, strided, offset so
a real input is not aligned as complex numbers, expanded), more than three
transformed dims (two cuFFT passes), the output strides, and gradients.
Skips, with the reason, without a CUDA device."""

from __future__ import annotations

import pytest
import torch
from _compare import DEVICE, make, pair, to_torch

import ember

pytestmark = pytest.mark.requires_cuda

NORMS = [None, "backward", "forward", "ortho"]
REAL = [torch.float32, torch.float64]
COMPLEX = [torch.complex64, torch.complex128]


def complex_sample(shape, dtype, seed=0):
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(make(shape, real, seed), make(shape, real, seed + 1))


def sample(shape, dtype, seed=0):
    return complex_sample(shape, dtype, seed) if dtype.is_complex else make(shape, dtype, seed)


def check_fft(e, t, strides=True):
    """Same dtype, shape and (by default) strides; values within FFT rounding
    relative to the largest magnitude (cuFFT's algorithms may differ by sizes)."""
    assert e.device.type == DEVICE
    assert str(e.dtype) == str(t.dtype), (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    if strides:
        assert tuple(e.stride()) == tuple(t.stride()), (e.stride(), t.stride())
    got, want = to_torch(e.detach().resolve_conj()), t.detach().cpu().resolve_conj()
    double = want.dtype in (torch.float64, torch.complex128)
    eps = 1e-12 if double else 2e-5
    scale = max(1.0, float(want.abs().max())) if want.numel() else 1.0
    err = float((got - want).abs().max()) if want.numel() else 0.0
    assert err <= eps * scale, f"max error {err} > {eps * scale}"


def both(fn, t):
    """fn on the Ember and torch copies of t."""
    e, tt = pair(t)
    return fn(ember, e), fn(torch, tt)


# ---- one-dimensional ------------------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", COMPLEX + REAL)
@pytest.mark.parametrize("n", [1, 7, 8, 15, 64, 97, 100])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_fft_ifft(name, n, dtype, norm):
    x = sample((3, n), dtype)
    e, t = both(lambda lib, v: getattr(lib.fft, name)(v, norm=norm), x)
    check_fft(e, t)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [1, 2, 7, 8, 15, 64, 97, 100])
@pytest.mark.parametrize("name", ["rfft", "ihfft"])
def test_rfft_ihfft(name, n, dtype, norm):
    e, t = both(lambda lib, v: getattr(lib.fft, name)(v, norm=norm), make((4, n), dtype))
    check_fft(e, t)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [None, 1, 2, 7, 8, 15, 16, 99])
@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_irfft_hfft(name, n, dtype, norm):
    # Half-spectra of 9 entries: n trims, pads or keeps (None: 16 points).
    x = complex_sample((3, 9), dtype)
    e, t = both(lambda lib, v: getattr(lib.fft, name)(v, n=n, norm=norm), x)
    check_fft(e, t)


@pytest.mark.parametrize("n", [5, 8, 13, 40])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_n_pads_or_trims(n, dtype):
    x = sample((2, 11), dtype)
    for name in ("fft", "ifft"):
        for norm in NORMS:
            e, t = both(lambda lib, v, name=name, norm=norm: getattr(lib.fft, name)(v, n=n, norm=norm), x)
            check_fft(e, t)
    if not dtype.is_complex:
        e, t = both(lambda lib, v: lib.fft.rfft(v, n=n), x)
        check_fft(e, t)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64, torch.float64])
def test_batched_along_each_dim(dim, dtype):
    x = sample((5, 6, 7), dtype)
    for name in ("fft", "ifft") + (("rfft", "ihfft") if not dtype.is_complex else ("irfft", "hfft")):
        e, t = both(lambda lib, v, name=name: getattr(lib.fft, name)(v, dim=dim, norm="ortho"), x)
        check_fft(e, t)


# Views applied to both copies: transposed, strided, offset, expanded, a size-1 dim.
VIEWS = {
    "transposed": lambda v: v.transpose(0, 1),
    "every_other": lambda v: v[:, ::2],
    "offset_by_one": lambda v: v.reshape(-1)[1 : 1 + (v.shape[0] - 1) * v.shape[1]].view(v.shape[0] - 1, v.shape[1]),
    "narrowed": lambda v: v[1:, 3:],
    "expanded": lambda v: v[:1].expand(4, -1),
    "unsqueezed": lambda v: v.unsqueeze(0).transpose(0, 1),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64, torch.float64, torch.complex128])
def test_non_contiguous_inputs(view, dtype):
    x = sample((6, 14), dtype)
    f = VIEWS[view]
    names = ("fft", "ifft") + (("rfft", "ihfft") if not dtype.is_complex else ("irfft", "hfft"))
    for name in names:
        for norm in (None, "ortho"):
            e, t = both(lambda lib, v, name=name, norm=norm: getattr(lib.fft, name)(f(v), norm=norm), x)
            check_fft(e, t)
            e, t = both(lambda lib, v, name=name: getattr(lib.fft, name)(f(v), dim=0), x)
            check_fft(e, t)


def test_misaligned_real_input():
    # A float32 view at an odd offset is not aligned as complex64: copied first.
    x = make((65,), torch.float32)
    for n in (64, 63):
        e, t = both(lambda lib, v, n=n: lib.fft.rfft(v[1 : 1 + n]), x)
        check_fft(e, t)
        e, t = both(lambda lib, v, n=n: lib.fft.fft(v[1 : 1 + n], norm="forward"), x)
        check_fft(e, t)


# ---- n-dimensional --------------------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", COMPLEX + REAL)
@pytest.mark.parametrize("shape", [(4, 6), (5, 7), (2, 3, 8, 9)])
@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn"])
def test_fft2_fftn(name, shape, dtype, norm):
    e, t = both(lambda lib, v: getattr(lib.fft, name)(v, norm=norm), sample(shape, dtype))
    check_fft(e, t)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("shape", [(4, 6), (5, 7), (2, 3, 8, 9), (3, 4, 5, 6, 2)])
@pytest.mark.parametrize("name", ["rfft2", "rfftn", "ihfft2", "ihfftn"])
def test_rfftn_ihfftn(name, shape, dtype, norm):
    e, t = both(lambda lib, v: getattr(lib.fft, name)(v, norm=norm), make(shape, dtype))
    check_fft(e, t)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape,s", [((4, 5), None), ((4, 5), (4, 9)), ((5, 4), (6, 7)), ((2, 3, 4, 5), None)])
@pytest.mark.parametrize("name", ["irfft2", "irfftn", "hfft2", "hfftn"])
def test_irfftn_hfftn(name, shape, s, dtype, norm):
    x = complex_sample(shape, dtype)
    e, t = both(lambda lib, v: getattr(lib.fft, name)(v, s=s, norm=norm), x)
    check_fft(e, t)


@pytest.mark.parametrize("dims", [(0, 2), (2, 0), (1,), (0, 1, 2, 3), (3, 1, 0, 2), (-1, -3)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_chosen_dims_and_more_than_three(dims, dtype):
    # Four dims take two cuFFT passes (3 + 1); R2C's last dim is the last given.
    x = make((3, 4, 5, 6), dtype)
    for name in ("fftn", "ifftn", "rfftn", "ihfftn"):
        for norm in ("backward", "ortho", "forward"):
            e, t = both(lambda lib, v, name=name, norm=norm: getattr(lib.fft, name)(v, dim=dims, norm=norm), x)
            check_fft(e, t)
    spectrum = complex_sample((3, 4, 5, 6), torch.complex64 if dtype == torch.float32 else torch.complex128)
    for name in ("irfftn", "hfftn"):
        e, t = both(lambda lib, v, name=name: getattr(lib.fft, name)(v, dim=dims, norm="ortho"), spectrum)
        check_fft(e, t)


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_nd_of_non_contiguous_inputs(dtype):
    x = sample((6, 8, 10), dtype)
    for f in (lambda v: v.permute(2, 0, 1), lambda v: v[::2, :, 1:], lambda v: v[:1].expand(3, -1, -1)):
        e, t = both(lambda lib, v, f=f: lib.fft.fftn(f(v), dim=(0, 2)), x)
        check_fft(e, t)
        if dtype.is_complex:
            e, t = both(lambda lib, v, f=f: lib.fft.irfftn(f(v), dim=(1, 2)), x)
        else:
            e, t = both(lambda lib, v, f=f: lib.fft.rfftn(f(v), dim=(2, 0)), x)
        check_fft(e, t)


def test_two_sided_r2c_primitive():
    # fft of a real input: the one-sided result completed by conjugate symmetry.
    x = make((3, 4, 10), torch.float32)
    for dims in ([2], [1, 2], [0, 2], [2, 0], [0, 1, 2]):
        e, t = both(lambda lib, v, dims=dims: lib._fft_r2c(v, dims, 2, False), x)
        check_fft(e, t)
        e, t = both(lambda lib, v, dims=dims: lib._fft_r2c(v, dims, 1, True), x)
        check_fft(e, t)


def test_many_sizes_share_the_plan_cache():
    # Plans cached per configuration: repeats and many sizes give the same results.
    for n in list(range(1, 40)) + [1, 2, 3, 128, 128]:
        e, t = both(lambda lib, v: lib.fft.rfft(v), make((2, n), torch.float32, seed=n))
        check_fft(e, t)


def test_empty_batches():
    # Compared where torch computes them (its CPU build refuses an empty batch).
    for shape in ((0, 8), (3, 0, 8)):
        for name, dtype in (("fft", torch.float32), ("rfft", torch.float64), ("ifft", torch.complex64)):
            e, t = pair(sample(shape, dtype))
            try:
                want = getattr(torch.fft, name)(t)
            except RuntimeError:
                continue
            check_fft(getattr(ember.fft, name)(e), want, strides=False)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "rfftn", "irfftn", "hfft", "ihfft"])
def test_gradients(name):
    complex_in = name in ("irfft", "irfftn", "hfft")
    x = complex_sample((3, 6), torch.complex128) if complex_in else make((3, 6), torch.float64)
    e, t = pair(x)
    e.requires_grad_(True)
    t.requires_grad_(True)
    ye = getattr(ember.fft, name)(e, norm="ortho")
    yt = getattr(torch.fft, name)(t, norm="ortho")
    we, wt = pair(sample(tuple(yt.shape), yt.dtype, seed=5))
    (ye * we).abs().sum().backward()
    (yt * wt).abs().sum().backward()
    check_fft(e.grad, t.grad, strides=False)
