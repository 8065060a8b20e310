"""Functions that compute on the host (loops over data pointers, LAPACK-free
helpers, backward formulas summed in double) given CUDA tensors: each routes
to a CUDA kernel or to operators that have one, or raises PyTorch's
missing-kernel error; none reads a device pointer on the host (these cases
crashed the process before). Skips, with the reason, without a CUDA device."""

from __future__ import annotations

import re

import pytest
from cuda_compare import assert_close

import ember

torch = pytest.importorskip("torch", reason="torch builds the expected values")

NO_KERNEL = "Could not run '{}' with arguments from the 'CUDA' backend"


def _no_kernel(op):
    return pytest.raises(NotImplementedError, match=re.escape(NO_KERNEL.format(op)))


def _pair(values, dtype=ember.float64, requires_grad=False):
    cpu = ember.tensor(values, dtype=dtype)
    cuda = cpu.to("cuda")
    if requires_grad:
        cpu.requires_grad_()
        cuda.requires_grad_()
    return cpu, cuda


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_complex_scan_has_no_cuda_kernel(op):
    x = ember.tensor([1 + 2j, 3 - 1j, 0.5j], dtype=ember.complex64, device="cuda")
    with _no_kernel(f"aten::{op}"):
        getattr(ember, op)(x, 0)


def test_complex_prod_has_no_cuda_kernel():
    x = ember.tensor([1 + 2j, 3 - 1j], dtype=ember.complex128, device="cuda")
    with _no_kernel("aten::prod"):
        ember.prod(x)


def test_histogram_has_no_cuda_kernel():
    x = ember.tensor([0.5, 1.5, 2.5], device="cuda")
    with _no_kernel("aten::histogram.bin_ct"):
        ember.histogram(x, 3)
    with _no_kernel("aten::histogram.bins_tensor"):
        ember.histogram(x, ember.tensor([0.0, 1.0, 3.0], device="cuda"))
    with _no_kernel("aten::_histogramdd_bin_edges"):
        ember.histogramdd(x.reshape(3, 1), [2])


def test_limited_dtype_fill_has_no_cuda_kernel():
    with _no_kernel("aten::fill_.Scalar"):
        ember.zeros(3, dtype=ember.uint16, device="cuda")


def test_flash_attention_for_cpu_has_no_cuda_kernel():
    q = ember.randn(1, 2, 3, 4, device="cuda")
    with _no_kernel("aten::_scaled_dot_product_flash_attention_for_cpu"):
        ember._scaled_dot_product_flash_attention_for_cpu(q, q, q, 0.0, True)


def test_causal_attention_takes_the_math_path():
    gen = ember.Generator().manual_seed(0)
    q = ember.randn(1, 2, 5, 4, generator=gen)
    got = ember.nn.functional.scaled_dot_product_attention(q.cuda(), q.cuda(), q.cuda(), is_causal=True)
    want = ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert got.device.type == "cuda"
    assert_close(got, want, (1e-5, 1e-6), "causal attention")


def test_cumsum_backward():
    x, xc = _pair([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    (g,) = ember.autograd.grad(x.cumsum(1).sum(), x)
    (gc,) = ember.autograd.grad(xc.cumsum(1).sum(), xc)
    assert gc.device.type == "cuda"
    assert gc.cpu().tolist() == g.tolist()


def test_cumprod_backward():
    x, xc = _pair([[1.5, 0.0, 3.0, 2.0], [0.5, -2.0, 1.0, 4.0]], requires_grad=True)
    (g,) = ember.autograd.grad(x.cumprod(1).sum(), x)
    (gc,) = ember.autograd.grad(xc.cumprod(1).sum(), xc)
    assert_close(gc, g, (1e-10, 1e-10), "cumprod backward")


def test_prod_backward_reads_its_flags_on_the_host():
    x, xc = _pair([[1.5, 0.0, 3.0], [0.5, -2.0, 1.0]], requires_grad=True)
    (g,) = ember.autograd.grad(x.prod(), x)
    (gc,) = ember.autograd.grad(xc.prod(), xc)
    assert_close(gc, g, (1e-12, 1e-12), "prod backward")


def test_masked_fill_value_backward():
    x, xc = _pair([1.0, 2.0, 3.0, 4.0])
    v, vc = _pair(0.5, requires_grad=True)
    mask = ember.tensor([True, False, True, True])
    (g,) = ember.autograd.grad(x.masked_fill(mask, v).mul(x).sum(), v)
    (gc,) = ember.autograd.grad(xc.masked_fill(mask.cuda(), vc).mul(xc).sum(), vc)
    assert gc.cpu().tolist() == g.tolist()


def test_log_softmax_double_backward():
    x, xc = _pair([[0.1, -1.2, 2.0], [0.4, 0.3, -0.5]], requires_grad=True)
    grads = []
    for t in (x, xc):
        y = ember.log_softmax(t, 1)
        (g,) = ember.autograd.grad((y * y).sum(), t, create_graph=True)
        (gg,) = ember.autograd.grad(g.sum(), t)
        grads.append(gg)
    assert_close(grads[1], grads[0], (1e-12, 1e-12), "log_softmax double backward")


def test_as_strided_backward_with_overlap():
    x, xc = _pair([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
    (g,) = ember.autograd.grad(x.as_strided((3, 2), (1, 1)).sum(), x)
    (gc,) = ember.autograd.grad(xc.as_strided((3, 2), (1, 1)).sum(), xc)
    assert gc.cpu().tolist() == g.tolist()


def test_normal_with_a_std_tensor_checks_on_the_host():
    std = ember.tensor([-1.0, 1.0], device="cuda")
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        ember.normal(ember.zeros(2, device="cuda"), std)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: ember.nn.functional.one_hot(x.long().abs(), 6),
        lambda x: ember.cummax(x, 0).indices,
        lambda x: ember.quantile(x, 0.25),
        lambda x: ember.nn.functional.pdist(x.reshape(3, 2)),
    ],
    ids=["one_hot", "cummax", "quantile", "pdist"],
)
def test_python_helpers_follow_the_input(fn):
    x, xc = _pair([3.0, -1.0, 2.0, 5.0, 0.0, 4.0])
    got = fn(xc)
    assert got.device.type == "cuda"
    assert_close(got, fn(x), (1e-12, 1e-12), "python helper")
