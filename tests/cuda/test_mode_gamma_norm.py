"""torch.mode (kernels/Mode.cu), _standard_gamma (random/RandomGamma.cu),
pow(z, 2) of complex tensors (kernels/ComplexKernels.cu) and the 16-bit
layer_norm forward (kernels/LayerNorm.cu) on CUDA against PyTorch's CUDA
results: mode's ties and indices, the gamma stream for one seed, the
16-bit layer norm computed in float. Skips, with the reason, without a
CUDA device."""

from __future__ import annotations

import pytest
import torch
from _compare import DEVICE, TORCH_DEVICE, check, cuda_only, make, pair

import ember

pytestmark = pytest.mark.requires_cuda

torch_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs PyTorch with CUDA as the oracle")


def values(t):
    return t.cpu().tolist()


# ---- mode -----------------------------------------------------------------------------------


def ties(shape, dtype, seed=0, labels=3):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, labels, shape, generator=g).to(dtype)


@cuda_only
@torch_cuda
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("shape,dim", [((6, 300), 0), ((7, 5), 1), ((4, 129), 1), ((3, 1500), -1), ((2, 3000), 1)])
def test_mode_ties_as_pytorch_cuda(dtype, shape, dim):
    # Few labels: most lines have equally frequent values, whose choice is the kernel's.
    e, t = pair(ties(shape, dtype))
    for keepdim in (False, True):
        ve, ie = ember.mode(e, dim, keepdim)
        vt, it = torch.mode(t, dim, keepdim)
        check(ve, vt)
        check(ie, it)


@cuda_only
@torch_cuda
def test_mode_documented_cases():
    for data in ([1, 2, 3, 3, 2], [0, 2, 1, 1, 1, 3, 3], [5.0, -0.0, 0.0, 5.0], [True, False, False]):
        e, t = pair(torch.tensor(data))
        ve, ie = ember.mode(e)
        vt, it = torch.mode(t)
        assert (values(ve), values(ie)) == (values(vt), values(it)), data


@cuda_only
@torch_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_mode_scalars_strides_and_nan(dtype):
    x = make((5, 40), dtype).round()
    x[1, 3] = float("nan")
    x[2, :] = float("nan")
    e, t = pair(x)
    for args in ((0,), (1,), (-1, True)):
        ve, ie = ember.mode(e.t(), *args)
        vt, it = torch.mode(t.t(), *args)
        check(ve, vt)
        check(ie, it)
    e0, t0 = pair(torch.tensor(2.5).to(dtype))
    check(ember.mode(e0)[0], torch.mode(t0)[0])
    check(ember.mode(e0)[1], torch.mode(t0)[1])


@cuda_only
def test_mode_errors():
    e, _ = pair(torch.zeros(3, 0))
    with pytest.raises(RuntimeError):
        ember.mode(e, 1)
    e, _ = pair(torch.zeros(3, dtype=torch.complex64))
    with pytest.raises(NotImplementedError):
        ember.mode(e)


# ---- _standard_gamma ---------------------------------------------------------------------------


@cuda_only
@torch_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_standard_gamma_stream(dtype):
    alpha = torch.tensor([0.0, 1e-3, 0.3, 0.999, 1.0, 2.5, 7.0, 50.0] * 40, dtype=dtype)
    e, t = pair(alpha.view(8, 40))
    torch.cuda.manual_seed(11)
    ember.cuda.manual_seed(11)
    for _ in range(2):  # the second call checks the generator's offset
        check(ember._standard_gamma(e), torch._standard_gamma(t))
        check(ember._standard_gamma(e.t()), torch._standard_gamma(t.t()))


@cuda_only
def test_standard_gamma_moments():
    e, _ = pair(torch.full((200000,), 3.0))
    ember.cuda.manual_seed(5)
    s = ember._standard_gamma(e).cpu()
    assert abs(s.mean().item() - 3.0) < 0.05
    assert abs(s.var().item() - 3.0) < 0.1
    assert s.min().item() > 0


# ---- pow(z, 2) and 16-bit layer_norm ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_square(dtype):
    g = torch.Generator().manual_seed(1)
    z = torch.randn(4, 33, generator=g, dtype=dtype)
    e, t = pair(z)
    rtol, atol = (1e-6, 1e-6) if dtype == torch.complex64 else (1e-14, 1e-14)
    check(ember.pow(e, 2), torch.pow(t, 2), rtol, atol)
    check(ember.pow(e.t(), 2), torch.pow(t.t(), 2), rtol, atol)
    check(e * e, t * t, rtol, atol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("D", [16, 1000, 4096, 5000])
def test_layer_norm_16bit_forward(dtype, D):
    # Rows held in registers (16-byte aligned multiples of 8 elements) and the others.
    x = make((5, D), dtype, low=-3, high=5)
    (e, t), (ew, tw), (eb, tb) = pair(x), pair(make((D,), dtype, seed=2)), pair(make((D,), dtype, seed=3))
    tol = (2e-3, 2e-3) if dtype == torch.float16 else (2e-2, 2e-2)
    for args_e, args_t in (((ew, eb), (tw, tb)), ((ew, None), (tw, None)), ((None, None), (None, None))):
        ye, me, re = ember.native_layer_norm(e, [D], *args_e, 1e-5)
        yt, mt, rt = torch.native_layer_norm(t, [D], *args_t, 1e-5)
        check(ye, yt, *tol)
        if TORCH_DEVICE == "cuda" and DEVICE == "cuda":  # statistics in float on CUDA
            check(me, mt, 1e-5, 1e-5)
            check(re, rt, 1e-4, 1e-4)
    # A misaligned start takes the plain kernel.
    e, t = pair(make((5 * D + 1,), dtype))
    check(
        ember.nn.functional.layer_norm(e[1:].view(5, D), (D,), ew, eb),
        torch.nn.functional.layer_norm(t[1:].view(5, D), (D,), tw, tb),
        *tol,
    )
