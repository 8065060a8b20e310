"""Bicubic and antialiased interpolation, unfold and fold on CUDA against
PyTorch (on CUDA where available), forward and backward."""

from __future__ import annotations

import pytest
import torch
from _compare import FLOAT_TOL as TOL
from _compare import FLOATS, cuda_only, make, pair
from _compare import check_detached as check

import ember

pytestmark = pytest.mark.requires_cuda

# Backward sums of 16-bit atomics land in another order than torch's.
GRAD_TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (6e-2, 6e-2),
}


def forward_backward(fn, shape, dtype, seed=0, tol=None, grad_tol=None):
    x_e, x_t = pair(make(shape, dtype, seed=seed))
    x_e.requires_grad_(True)
    x_t.requires_grad_(True)
    y_e, y_t = fn(ember, x_e), fn(torch, x_t)
    check(y_e, y_t, *(tol or TOL[dtype]))
    g_e, g_t = pair(make(tuple(y_t.shape), dtype, seed=seed + 1))
    y_e.backward(g_e)
    y_t.backward(g_t)
    check(x_e.grad, x_t.grad, *(grad_tol or GRAD_TOL[dtype]))


BICUBIC = [
    ((2, 3, 5, 6), dict(size=(11, 13), align_corners=False)),
    ((2, 3, 5, 6), dict(size=(11, 13), align_corners=True)),
    ((2, 3, 9, 8), dict(size=(4, 3), align_corners=False)),
    ((2, 3, 9, 8), dict(size=(4, 3), align_corners=True)),
    ((1, 2, 7, 7), dict(scale_factor=1.7, align_corners=False)),
    ((1, 2, 7, 7), dict(scale_factor=(0.6, 2.2), align_corners=True)),
    ((1, 2, 6, 5), dict(size=(1, 1), align_corners=True)),
    ((0, 2, 6, 5), dict(size=(3, 4), align_corners=False)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(BICUBIC)))
def test_bicubic(case, dtype):
    shape, kw = BICUBIC[case]
    forward_backward(lambda lib, x: lib.nn.functional.interpolate(x, mode="bicubic", **kw), shape, dtype, seed=case)


@cuda_only
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_bicubic_same_size_copies(dtype):
    # PyTorch's CUDA kernel copies when the output has the input's size,
    # whatever the scale factor says.
    kw = dict(scale_factor=1.05, mode="bicubic", align_corners=False)
    forward_backward(lambda lib, x: lib.nn.functional.interpolate(x, **kw), (1, 2, 6, 7), dtype, seed=3)


ANTIALIAS = [
    ((2, 3, 12, 14), dict(size=(5, 4))),
    ((2, 3, 12, 14), dict(size=(5, 4), align_corners=True)),
    ((1, 2, 17, 9), dict(scale_factor=0.3)),
    ((1, 2, 5, 6), dict(size=(9, 13))),
    ((1, 2, 8, 8), dict(size=(8, 3))),
    ((1, 1, 40, 3), dict(size=(3, 7))),
]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", range(len(ANTIALIAS)))
def test_antialias(case, dtype, mode):
    shape, kw = ANTIALIAS[case]
    forward_backward(
        lambda lib, x: lib.nn.functional.interpolate(x, mode=mode, antialias=True, **kw), shape, dtype, seed=case
    )


@cuda_only
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_antialias_16bit(dtype, mode):
    # Weights held in the dtype: the 16-bit results follow PyTorch's rounding.
    kw = dict(size=(5, 7), mode=mode, antialias=True)
    forward_backward(lambda lib, x: lib.nn.functional.interpolate(x, **kw), (2, 3, 11, 16), dtype, seed=5)


def test_interpolate_dtype_errors():
    x_e, x_t = pair(make((1, 1, 4, 4), torch.int32))
    for kw in (dict(mode="bicubic"), dict(mode="bilinear", antialias=True)):
        with pytest.raises(NotImplementedError) as want:
            torch.nn.functional.interpolate(x_t, size=(3, 3), **kw)
        with pytest.raises(NotImplementedError) as got:
            ember.nn.functional.interpolate(x_e, size=(3, 3), **kw)
        if x_t.device.type == "cuda":
            assert str(got.value) == str(want.value)


FOLDS = [
    ((2, 3, 7, 8), dict(kernel_size=3)),
    ((2, 3, 7, 8), dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 3))),
    ((3, 6, 5), dict(kernel_size=(3, 2), padding=1, stride=2)),
    ((1, 2, 9, 9), dict(kernel_size=4, dilation=2, stride=1)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(FOLDS)))
def test_unfold(case, dtype):
    shape, kw = FOLDS[case]
    # The forward copies (exact); the backward is fold's sums.
    forward_backward(lambda lib, x: lib.nn.functional.unfold(x, **kw), shape, dtype, seed=case, tol=(0, 0))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(FOLDS)))
def test_fold(case, dtype):
    shape, kw = FOLDS[case]
    cols = torch.nn.functional.unfold(make(shape, torch.float64), **kw)
    out = tuple(shape[-2:])
    # The backward is unfold's copy (exact).
    forward_backward(
        lambda lib, x: lib.nn.functional.fold(x, out, **kw), tuple(cols.shape), dtype, seed=case, grad_tol=(0, 0)
    )


# Ember's CPU im2col has no complex kernel yet; the CUDA one has.
@pytest.mark.parametrize(
    "dtype",
    [torch.bool, pytest.param(torch.complex64, marks=cuda_only), pytest.param(torch.complex128, marks=cuda_only)],
)
def test_unfold_fold_other_dtypes(dtype):
    kw = dict(kernel_size=(2, 3), padding=1, stride=(1, 2))
    if dtype.is_complex:
        x = torch.complex(make((2, 3, 5, 6), torch.float64, seed=4), make((2, 3, 5, 6), torch.float64, seed=5))
        x_e, x_t = pair(x.to(dtype))
    else:
        x_e, x_t = pair(make((2, 3, 5, 6), dtype, seed=4))
    c_e = ember.nn.functional.unfold(x_e, **kw)
    c_t = torch.nn.functional.unfold(x_t, **kw)
    check(c_e, c_t, 0, 0)
    check(ember.nn.functional.fold(c_e, (5, 6), **kw), torch.nn.functional.fold(c_t, (5, 6), **kw))


@cuda_only
def test_unfold_fold_dtype_errors():
    # PyTorch's CUDA im2col and col2im take floating, complex and bool only.
    for shape, fn in (
        ((2, 3, 4, 5), lambda lib, x: lib.nn.functional.unfold(x, 2)),
        ((2, 12, 12), lambda lib, x: lib.nn.functional.fold(x, (3, 7), 2)),  # 2 x 6 blocks of 3 x 2 x 2
    ):
        x_e, x_t = pair(make(shape, torch.int64))
        with pytest.raises(NotImplementedError) as got:
            fn(ember, x_e)
        if x_t.device.type == "cuda":
            with pytest.raises(NotImplementedError) as want:
                fn(torch, x_t)
            assert str(got.value) == str(want.value)


def test_fold_shape_error():
    y_e, y_t = pair(make((2, 12, 7), torch.float32))
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.fold(y_t, (3, 3), 2)
    with pytest.raises(RuntimeError) as got:
        ember.nn.functional.fold(y_e, (3, 3), 2)
    assert str(got.value) == str(want.value)
