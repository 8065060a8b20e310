"""Matrix products on CUDA (cuBLAS) against PyTorch (on CUDA where available):
layouts, batches, dtypes, alpha/beta, the float32 precision setting, errors."""

from __future__ import annotations

import pytest
import torch
from _compare import TORCH_DEVICE, check, cuda_only, make, pair

import ember

pytestmark = pytest.mark.requires_cuda

TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
    torch.complex64: (1e-5, 1e-5),
}


@pytest.fixture(autouse=True)
def full_precision():
    ember.set_float32_matmul_precision("highest")
    torch.set_float32_matmul_precision("highest")
    yield
    ember.set_float32_matmul_precision("highest")
    torch.set_float32_matmul_precision("highest")


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_mm_layouts(ta, tb, dtype):
    a = make((13, 7) if not ta else (7, 13), torch.float64).to(dtype)
    b = make((7, 9) if not tb else (9, 7), torch.float64, seed=1).to(dtype)
    ea, wa = pair(a)
    eb, wb = pair(b)
    if ta:
        ea, wa = ea.t(), wa.t()
    if tb:
        eb, wb = eb.t(), wb.t()
    check(ember.mm(ea, eb), torch.mm(wa, wb), *TOL[dtype])
    check(ea @ eb, wa @ wb, *TOL[dtype])


def test_mm_non_contiguous_operands_are_copied():
    ea, wa = pair(make((20, 30)))
    eb, wb = pair(make((30, 40), seed=1))
    check(ember.mm(ea[::2, ::3], eb[::3, ::2]), torch.mm(wa[::2, ::3], wb[::3, ::2]), *TOL[torch.float32])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_bmm_baddbmm_addmm(dtype):
    e1, t1 = pair(make((5, 6, 7), dtype))
    e2, t2 = pair(make((5, 7, 8), dtype, seed=1))
    ec, tc = pair(make((5, 6, 8), dtype, seed=2))
    check(ember.bmm(e1, e2), torch.bmm(t1, t2), *TOL[dtype])
    check(ember.bmm(e1.transpose(1, 2).contiguous().transpose(1, 2), e2), torch.bmm(t1, t2), *TOL[dtype])
    check(ember.baddbmm(ec, e1, e2, beta=0.5, alpha=2), torch.baddbmm(tc, t1, t2, beta=0.5, alpha=2), *TOL[dtype])
    m1, n1 = pair(make((6, 7), dtype))
    m2, n2 = pair(make((7, 8), dtype, seed=1))
    bias_e, bias_t = pair(make((8,), dtype, seed=3))
    check(ember.addmm(bias_e, m1, m2), torch.addmm(bias_t, n1, n2), *TOL[dtype])
    check(ember.addmm(bias_e, m1, m2, beta=0, alpha=-1.5), torch.addmm(bias_t, n1, n2, beta=0, alpha=-1.5), *TOL[dtype])


def test_beta_zero_ignores_nan_in_c():
    ec, tc = pair(torch.full((3, 4), float("nan")))
    ea, ta = pair(make((3, 5)))
    eb, tb = pair(make((5, 4), seed=1))
    check(ember.addmm(ec, ea, eb, beta=0), torch.addmm(tc, ta, tb, beta=0), *TOL[torch.float32])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_mv_addmv_dot_matmul_linear(dtype):
    em, tm = pair(make((9, 11), dtype))
    ev, tv = pair(make((11,), dtype, seed=1))
    eb, tb = pair(make((9,), dtype, seed=2))
    check(ember.mv(em, ev), torch.mv(tm, tv), *TOL[dtype])
    check(ember.mv(em.t().contiguous().t(), ev), torch.mv(tm, tv), *TOL[dtype])
    check(ember.addmv(eb, em, ev, beta=2, alpha=0.5), torch.addmv(tb, tm, tv, beta=2, alpha=0.5), *TOL[dtype])
    check(ember.dot(ev, ev), torch.dot(tv, tv), *TOL[dtype])
    check(ember.dot(ev[:10:2], ev[1::2]), torch.dot(tv[:10:2], tv[1::2]), *TOL[dtype])
    ex, tx = pair(make((2, 3, 11), dtype, seed=3))
    check(ember.matmul(ex, em.t()), torch.matmul(tx, tm.t()), *TOL[dtype])
    check(ember.nn.functional.linear(ex, em, eb), torch.nn.functional.linear(tx, tm, tb), *TOL[dtype])


def test_empty_and_zero_inner_dims():
    ea, ta = pair(make((0, 4)))
    eb, tb = pair(make((4, 3)))
    check(ember.mm(ea, eb), torch.mm(ta, tb))
    ea, ta = pair(make((3, 0)))
    eb, tb = pair(make((0, 5)))
    check(ember.mm(ea, eb), torch.mm(ta, tb))
    ec, tc = pair(make((3, 5), seed=2))
    check(ember.addmm(ec, ea, eb, beta=3), torch.addmm(tc, ta, tb, beta=3))


def test_gradients_through_matmul():
    ea, ta = pair(make((4, 6)))
    eb, tb = pair(make((6, 3), seed=1))
    for x in (ea, ta, eb, tb):
        x.requires_grad_(True)
    (ember.matmul(ea, eb) ** 2).sum().backward()
    (torch.matmul(ta, tb) ** 2).sum().backward()
    check(ea.grad, ta.grad, *TOL[torch.float32])
    check(eb.grad, tb.grad, *TOL[torch.float32])


@cuda_only
def test_float32_precision_setting_selects_tf32():
    assert not ember.backends.cuda.matmul.allow_tf32
    ember.backends.cuda.matmul.allow_tf32 = True
    assert ember.get_float32_matmul_precision() == "high"
    ember.set_float32_matmul_precision("highest")
    assert not ember.backends.cuda.matmul.allow_tf32
    # TF32 keeps 10 mantissa bits: a large product differs from full float32.
    ea, ta = pair(make((512, 2048)))
    eb, tb = pair(make((2048, 512), seed=1))
    full = ember.mm(ea, eb)
    ember.set_float32_matmul_precision("high")
    fast = ember.mm(ea, eb)
    exact = torch.mm(ta.double(), tb.double()).cpu()
    err_full = (torch.from_numpy(full.cpu().numpy()).double() - exact).abs().max().item()
    err_fast = (torch.from_numpy(fast.cpu().numpy()).double() - exact).abs().max().item()
    assert err_full < 1e-3 < err_fast
    if TORCH_DEVICE == "cuda":
        torch.set_float32_matmul_precision("high")
        check(fast, torch.mm(ta, tb), 1e-2, 1e-2)


@cuda_only
def test_integer_products_raise_as_pytorch():
    ea, ta = pair(make((3, 3), torch.int64))
    if TORCH_DEVICE == "cuda":
        with pytest.raises(Exception) as want:
            torch.mm(ta, ta)
        wtype, wmsg = type(want.value), str(want.value)
    else:
        wtype, wmsg = NotImplementedError, "\"addmm_cuda\" not implemented for 'Long'"
    with pytest.raises(wtype) as got:
        ember.mm(ea, ea)
    assert str(got.value) == wmsg
