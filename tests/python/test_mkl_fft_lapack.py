"""FFTs and LAPACK decompositions bit for bit against PyTorch: with MKL 2024.2
loaded, the transforms go to MKL's DFTI as PyTorch's CPU kernel hands them
(Note [FFT through MKL] in src/ember/cpu/MklFFT.cpp) and the factorizations to
MKL's LAPACK (Note [MKL for LAPACK] in src/ember/cpu/Lapack.cpp), so every
result below equals PyTorch's to the last bit. Without MKL (EMBER_BLAS=openblas,
other platforms) the tests are skipped; test_fft.py and test_linalg.py check
the values to a tolerance either way."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import HAS_MKL, torch

import ember

pytestmark = pytest.mark.skipif(not HAS_MKL, reason="bit-identical results need MKL 2024.2")


def bits(x):
    return np.ascontiguousarray(x.detach().resolve_conj().numpy()).view(np.uint8)


def same(got, want):
    if isinstance(want, (tuple, list)):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    return (
        str(got.dtype) == str(want.dtype)
        and tuple(got.shape) == tuple(want.shape)
        and np.array_equal(bits(got), bits(want))
    )


def inputs(shape, dtype, seed):
    gen = np.random.default_rng(seed)
    x = gen.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * gen.standard_normal(shape)
    x = x.astype(dtype)
    return ember.from_numpy(x.copy()), torch.from_numpy(x.copy())


class _threads:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.saved = (ember.get_num_threads(), torch.get_num_threads())
        ember.set_num_threads(self.n)
        torch.set_num_threads(self.n)

    def __exit__(self, *exc):
        ember.set_num_threads(self.saved[0])
        torch.set_num_threads(self.saved[1])


# Powers of two, smooth, prime and large-prime lengths, batched and single.
FFT_SHAPES = [(64, 1024), (64, 1000), (256, 360), (64, 1009), (16, 4099), (1, 3 * 5 * 7 * 11 * 13), (3, 7), (2, 1)]
ONE_D = {
    "fft": lambda L, x: L.fft.fft(x),
    "ifft": lambda L, x: L.fft.ifft(x, norm="ortho"),
    "fft n": lambda L, x: L.fft.fft(x, n=37, dim=0),
    "fft forward norm": lambda L, x: L.fft.fft(x, norm="forward"),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", FFT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_complex_transforms_equal_torch(shape, dtype, threads):
    e, t = inputs(shape, dtype, sum(shape))
    with _threads(threads):
        for name, fn in ONE_D.items():
            assert same(fn(ember, e), fn(torch, t)), name


REAL = {
    "rfft": lambda L, x: L.fft.rfft(x),
    "rfft ortho": lambda L, x: L.fft.rfft(x, norm="ortho"),
    "fft of real": lambda L, x: L.fft.fft(x),
    "ifft of real": lambda L, x: L.fft.ifft(x),
    "ihfft": lambda L, x: L.fft.ihfft(x),
    "irfft of rfft": lambda L, x: L.fft.irfft(L.fft.rfft(x), n=x.shape[-1]),
    "hfft": lambda L, x: L.fft.hfft(L.fft.rfft(x), n=x.shape[-1]),
    "rfft n": lambda L, x: L.fft.rfft(x, n=50),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", FFT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_real_transforms_equal_torch(shape, dtype, threads):
    e, t = inputs(shape, dtype, sum(shape) + 1)
    with _threads(threads):
        for name, fn in REAL.items():
            assert same(fn(ember, e), fn(torch, t)), name


N_D = {
    "fft2": lambda L, x: L.fft.fft2(x),
    "ifftn": lambda L, x: L.fft.ifftn(x, dim=(0, 2), norm="ortho"),
    "fftn strided": lambda L, x: L.fft.fftn(x.transpose(0, 2)[::2], dim=(1, 2)),
    "rfft2": lambda L, x: L.fft.rfft2(x.real),
    "rfftn all": lambda L, x: L.fft.rfftn(x.real),
    "irfft2": lambda L, x: L.fft.irfft2(x),
    "irfftn s": lambda L, x: L.fft.irfftn(x, s=(6, 9)),
    "hfft2": lambda L, x: L.fft.hfft2(x),
    "ihfft2": lambda L, x: L.fft.ihfft2(x.real),
    "fft2 of real": lambda L, x: L.fft.fft2(x.real),
    "stft": lambda L, x: L.stft(
        x.real.reshape(-1), 16, hop_length=4, window=L.hann_window(16, dtype=x.real.dtype), return_complex=True
    ),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 6, 10), (8, 5, 7), (3, 32, 32)], ids=lambda s: "x".join(map(str, s)))
def test_multidimensional_transforms_equal_torch(shape, dtype):
    e, t = inputs(shape, dtype, 7)
    for name, fn in N_D.items():
        got, want = fn(ember, e), fn(torch, t)
        assert same(got, want), name
        assert got.stride() == want.stride(), name


def test_fft_gradients_equal_torch():
    e, t = inputs((4, 12), "float64", 3)
    results = []
    for lib, x in ((ember, e), (torch, t)):
        x = x.clone().requires_grad_()
        y = lib.fft.rfft(x)
        (y.real * lib.arange(7.0, dtype=x.dtype)).sum().backward()
        results.append(x.grad)
    assert same(*results)


def test_expanded_inputs_equal_torch():
    # zero strides: a transformed dim is copied first, a batch dim too
    e, t = inputs((10,), "complex64", 5)
    for name, fn in {
        "batch expanded": lambda L, v: L.fft.fft(v.expand(4, 10), dim=1),
        "signal expanded": lambda L, v: L.fft.fft(v[:, None].expand(10, 3), dim=0),
        "fft2": lambda L, v: L.fft.fft2(v.expand(4, 10)),
        "rfft": lambda L, v: L.fft.rfft(v.real.expand(5, 10)),
        "irfft": lambda L, v: L.fft.irfft(v[:6].expand(3, 6)),
    }.items():
        assert same(fn(ember, e), fn(torch, t)), name


LINALG = {
    "solve": lambda L, a, spd, b: L.linalg.solve(a, b),
    "solve left=False": lambda L, a, spd, b: L.linalg.solve(a, b.mT, left=False),
    "inv": lambda L, a, spd, b: L.linalg.inv(a),
    "det": lambda L, a, spd, b: L.linalg.det(a),
    "slogdet": lambda L, a, spd, b: L.linalg.slogdet(a).logabsdet,
    "lu_factor": lambda L, a, spd, b: L.linalg.lu_factor(a).LU,
    "cholesky": lambda L, a, spd, b: L.linalg.cholesky(spd),
    "cholesky upper": lambda L, a, spd, b: L.linalg.cholesky(spd, upper=True),
    "qr": lambda L, a, spd, b: tuple(L.linalg.qr(a)),
    "qr r": lambda L, a, spd, b: L.linalg.qr(a, mode="r").R,
    "eigh": lambda L, a, spd, b: tuple(L.linalg.eigh(spd)),
    "eigvalsh": lambda L, a, spd, b: L.linalg.eigvalsh(spd),
    "svd": lambda L, a, spd, b: tuple(L.linalg.svd(a, full_matrices=False)),
    "svdvals": lambda L, a, spd, b: L.linalg.svdvals(a),
    # PyTorch's first gelsy call reads an uninitialized pivot array: only the later matrices are reproducible
    "lstsq": lambda L, a, spd, b: L.linalg.lstsq(a, b).solution[1:],
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(16, 64, 64), (3, 8, 8), (2, 100, 100)], ids=lambda s: "x".join(map(str, s)))
def test_decompositions_equal_torch(shape, dtype, threads):
    """Real matrices through MKL's s/d routines, complex ones through its c/z
    routines (Note [Complex LAPACK]): PyTorch's bits either way."""
    gen = np.random.default_rng(shape[-1])
    a = gen.standard_normal(shape)
    b = gen.standard_normal(shape[:-1] + (3,))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * gen.standard_normal(shape)
        b = b + 1j * gen.standard_normal(b.shape)
    a, b = a.astype(dtype), b.astype(dtype)
    spd = a @ a.conj().swapaxes(-1, -2) + shape[-1] * np.eye(shape[-1], dtype=dtype)
    results = []
    with _threads(threads):
        for name, fn in LINALG.items():
            if name == "det" and np.dtype(dtype).kind == "c":
                # the LU factors are PyTorch's bits, but Ember's complex prod multiplies
                # the diagonal in another order than PyTorch's vectorized reduction
                continue
            got = fn(ember, *(ember.from_numpy(x.copy()) for x in (a, spd, b)))
            want = fn(torch, *(torch.from_numpy(x.copy()) for x in (a, spd, b)))
            results.append(f"{name}={same(got, want)}")
    assert [r for r in results if not r.endswith("True")] == []


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_batched_lu_factors_each_matrix_on_one_thread(dtype):
    """PyTorch splits a batch of LU factorizations between its threads, MKL
    single-threaded in each (Note [LAPACK batches]): at 2 threads a batch of
    300x300 matrices gives the 1-thread factors (one matrix alone is factored
    by MKL on both threads, and rounds otherwise)."""
    e, t = inputs((3, 300, 300), dtype, 7)
    # (not torch at 2 threads here: its MKL, threaded inside its own threads, can fail or hang on them)
    with _threads(1):
        want = tuple(torch.linalg.lu_factor(t))
        want_det = torch.linalg.det(t)
    with _threads(2):
        assert same(tuple(ember.linalg.lu_factor(e)), want)
        assert same(ember.linalg.det(e), want_det)
        one = tuple(ember.linalg.lu_factor(e[:1]))
        assert same(one, tuple(torch.linalg.lu_factor(t[:1])))
    assert not same(one[0], want[0][:1])
