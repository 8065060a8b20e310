"""ember.nn.attention (SDPBackend, sdpa_kernel), the backends.cuda attention
switches and grouped-query attention, against PyTorch."""

from __future__ import annotations

import warnings

import pytest
from _nn_helpers import close, from_torch, same_error
from conftest import torch

import ember

F = torch.nn.functional
EF = ember.nn.functional
TA = torch.nn.attention
EA = ember.nn.attention


def randn(*shape, seed=1, dtype=torch.float64):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed)).requires_grad_(True)


def both(*shapes, dtype=torch.float64):
    ts = [randn(*s, seed=i + 1, dtype=dtype) for i, s in enumerate(shapes)]
    es = [from_torch(t.detach()).requires_grad_(True) for t in ts]
    return es, ts


def backends_of(module, names):
    one = [getattr(module.SDPBackend, n) for n in names]
    return one[0] if len(one) == 1 else one


@pytest.mark.parametrize(
    "q_shape,k_heads,v_heads",
    [((2, 8, 5, 16), 2, 2), ((2, 8, 5, 16), 4, 2), ((2, 6, 3, 4), 1, 3), ((8, 5, 16), 2, 4), ((1, 4, 1, 8), 4, 4)],
)
@pytest.mark.parametrize("dropout_free_kernel", [None, ["MATH"], ["FLASH_ATTENTION"]])
@pytest.mark.parametrize("value_dim", [3, None])
def test_grouped_query_attention(q_shape, k_heads, v_heads, dropout_free_kernel, value_dim):
    kshape = (*q_shape[:-3], k_heads, 7, q_shape[-1])
    vshape = (*q_shape[:-3], v_heads, 7, value_dim or q_shape[-1])
    (qe, ke, ve), (qt, kt, vt) = both(q_shape, kshape, vshape)
    run = []
    for mod, fn, args in ((TA, F, (qt, kt, vt)), (EA, EF, (qe, ke, ve))):
        try:
            if dropout_free_kernel is None:
                run.append(fn.scaled_dot_product_attention(*args, enable_gqa=True))
            else:
                with mod.sdpa_kernel(backends_of(mod, dropout_free_kernel)):
                    run.append(fn.scaled_dot_product_attention(*args, enable_gqa=True))
        except RuntimeError as err:
            run.append(err)
    if isinstance(run[0], RuntimeError):  # the fused kernel alone refuses (value's last dimension differs)
        assert isinstance(run[1], RuntimeError) and str(run[1]) == str(run[0])
        return
    out_t, out_e = run
    close(out_e, out_t)
    g = randn(*out_t.shape, seed=9).detach()
    out_t.backward(g)
    out_e.backward(from_torch(g))
    for e, t in ((qe, qt), (ke, kt), (ve, vt)):
        close(e.grad, t.grad)


@pytest.mark.parametrize("k_heads,v_heads", [(3, 2), (2, 3), (5, 5)])
def test_grouped_query_attention_heads_must_divide(k_heads, v_heads):
    q = (2, 8, 5, 4)
    (qe, ke, ve), (qt, kt, vt) = both(q, (2, k_heads, 7, 4), (2, v_heads, 7, 4))
    same_error(
        lambda: F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True),
        lambda: EF.scaled_dot_product_attention(qe, ke, ve, enable_gqa=True),
    )


def test_heads_must_match_without_gqa():
    (qe, ke, ve), (qt, kt, vt) = both((2, 8, 5, 4), (2, 2, 7, 4), (2, 2, 7, 4))
    same_error(
        lambda: F.scaled_dot_product_attention(qt, kt, vt),
        lambda: EF.scaled_dot_product_attention(qe, ke, ve),
    )


@pytest.mark.parametrize(
    "chosen",
    [["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION"], ["MATH", "FLASH_ATTENTION"], []],
)
@pytest.mark.parametrize("dropout_p", [0.0, 0.5])
def test_sdpa_kernel_selects_or_refuses(chosen, dropout_p):
    (qe, ke, ve), (qt, kt, vt) = both((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), dtype=torch.float32)
    results = []
    for mod, fn, args, lib in ((TA, F, (qt, kt, vt), torch), (EA, EF, (qe, ke, ve), ember)):
        lib.manual_seed(0)
        backends = [getattr(mod.SDPBackend, n) for n in chosen]
        with mod.sdpa_kernel(backends):
            try:
                results.append(fn.scaled_dot_product_attention(*args, dropout_p=dropout_p))
            except RuntimeError as err:
                results.append(err)
    t, e = results
    if isinstance(t, Exception):
        assert type(e) is type(t) and str(e) == str(t), (e, t)
    else:
        assert not isinstance(e, Exception), e
        close(e, t)


def test_priority_order_leaves_the_cpu_choice_alone():
    (qe, ke, ve), (qt, kt, vt) = both((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), dtype=torch.float32)
    order_t = [TA.SDPBackend.MATH, TA.SDPBackend.FLASH_ATTENTION]
    order_e = [EA.SDPBackend.MATH, EA.SDPBackend.FLASH_ATTENTION]
    with TA.sdpa_kernel(order_t, set_priority=True):
        t = F.scaled_dot_product_attention(qt, kt, vt)
    with EA.sdpa_kernel(order_e, set_priority=True):
        e = EF.scaled_dot_product_attention(qe, ke, ve)
        assert ember.backends._sdp_order == [0, 1, 2, 3, 4]
    assert ember.backends._sdp_order == [1, 2, 0, 3, 4]
    # The CPU still takes its fused kernel first: the backward node says which.
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    close(e, t)


def test_sdpa_kernel_restores_switches_and_checks_its_argument():
    names = ("flash", "mem_efficient", "math", "cudnn")
    with EA.sdpa_kernel(EA.SDPBackend.MATH):
        with EA.sdpa_kernel([EA.SDPBackend.FLASH_ATTENTION]):
            assert [getattr(ember.backends.cuda, f"{n}_sdp_enabled")() for n in names] == [True, False, False, False]
        assert [getattr(ember.backends.cuda, f"{n}_sdp_enabled")() for n in names] == [False, False, True, False]
    assert all(getattr(ember.backends.cuda, f"{n}_sdp_enabled")() for n in names)

    def enter(mod):
        with mod.sdpa_kernel("MATH"):
            pass

    same_error(lambda: enter(TA), lambda: enter(EA))


def test_backend_enum_and_switches_read_as_torch():
    for name, member in TA.SDPBackend.__members__.items():
        ours = getattr(EA.SDPBackend, name)
        assert (repr(ours), str(ours), int(ours), ours.name) == (repr(member), str(member), int(member), member.name)
    assert EA.WARN_FOR_UNFUSED_KERNELS == TA.WARN_FOR_UNFUSED_KERNELS
    assert EA.list_flash_attention_impls() == TA.list_flash_attention_impls()
    assert EA.current_flash_attention_impl() is None
    same_error(lambda: TA.activate_flash_attention_impl("nope"), lambda: EA.activate_flash_attention_impl("nope"))
    for cuda_mod, lib in ((torch.backends.cuda, torch), (ember.backends.cuda, ember)):
        q = lib.zeros(1, 1, 2, 4)
        params = cuda_mod.SDPAParams(q, q, q, None, 0.0, False, False)
        assert not cuda_mod.can_use_flash_attention(params)
        assert not cuda_mod.can_use_efficient_attention(params)
        assert not cuda_mod.is_flash_attention_available()
        assert cuda_mod.fp16_bf16_reduction_math_sdp_allowed() is False


def test_deprecated_sdp_kernel_warns_and_switches():
    for cuda_mod in (torch.backends.cuda, ember.backends.cuda):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with cuda_mod.sdp_kernel(enable_flash=False, enable_math=True):
                inside = (cuda_mod.flash_sdp_enabled(), cuda_mod.math_sdp_enabled())
        assert inside == (False, True)
        assert cuda_mod.flash_sdp_enabled()
        messages = [(w.category, str(w.message)) for w in caught]
        if cuda_mod is torch.backends.cuda:
            want = messages
        else:
            assert messages == want
