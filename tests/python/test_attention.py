"""F.scaled_dot_product_attention, nn.MultiheadAttention, TransformerEncoderLayer
and TransformerEncoder against PyTorch: values, float64 gradients, grad_fn
names, seeded init, copied weights in train and eval (fast-path) modes."""

from __future__ import annotations

import warnings

import pytest
from _nn_helpers import close, from_torch, same_error
from conftest import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

F = torch.nn.functional
EF = ember.nn.functional
HYP = settings(max_examples=20, deadline=None)


def randn(*shape, seed=1, grad=True, dtype=torch.float64):
    t = torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))
    return t.requires_grad_(grad)


def check_grads(outs_e, outs_t, es, ts):
    g = [randn(*o.shape, seed=9 + i, grad=False) for i, o in enumerate(outs_t)]
    sum((o * gi).sum() for o, gi in zip(outs_t, g)).backward()
    sum((o * from_torch(gi)).sum() for o, gi in zip(outs_e, g)).backward()
    for e, t in zip(es, ts):
        if t.grad is not None:
            close(e.grad, t.grad)


# ---- scaled_dot_product_attention ------------------------------------------------------------


@HYP
@given(B=st.integers(1, 2), H=st.integers(1, 3), L=st.integers(1, 5), S=st.integers(1, 5), E=st.integers(1, 6),
       Ev=st.integers(1, 6), rank=st.sampled_from([2, 3, 4]), mask=st.sampled_from([None, "bool", "float"]),
       causal=st.booleans(), scale=st.sampled_from([None, 0.3]))
def test_sdpa_random(B, H, L, S, E, Ev, rank, mask, causal, scale):
    lead = {2: (), 3: (B,), 4: (B, H)}[rank]
    q, k, v = randn(*lead, L, E), randn(*lead, S, E, seed=2), randn(*lead, S, Ev, seed=3)
    m = None
    if mask == "bool":
        m = torch.rand(L, S, generator=torch.Generator().manual_seed(4)) > 0.3
    elif mask == "float":
        m = randn(L, S, seed=5, grad=False)
    if causal and m is not None:
        m = None
    es = [from_torch(t) for t in (q, k, v)]
    ot = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, scale=scale)
    oe = EF.scaled_dot_product_attention(*es, attn_mask=None if m is None else from_torch(m), is_causal=causal,
                                         scale=scale)
    close(oe, ot)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
    check_grads([oe], [ot], es, [q, k, v])


def test_sdpa_dropout_and_float32():
    q, k, v = randn(2, 3, 4, 8), randn(2, 3, 6, 8, seed=2), randn(2, 3, 6, 8, seed=3)
    es = [from_torch(t) for t in (q, k, v)]
    torch.manual_seed(5)
    ember.manual_seed(5)
    ot = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    oe = EF.scaled_dot_product_attention(*es, dropout_p=0.4)
    close(oe, ot)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__ == "UnsafeViewBackward0"
    check_grads([oe], [ot], es, [q, k, v])
    q32 = [t.detach().float() for t in (q, k, v)]
    close(EF.scaled_dot_product_attention(*[from_torch(t) for t in q32], is_causal=True),
          F.scaled_dot_product_attention(*q32, is_causal=True))
    same_error(lambda: EF.scaled_dot_product_attention(*es, attn_mask=es[0], is_causal=True),
               lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=q, is_causal=True))


# ---- MultiheadAttention ------------------------------------------------------------------------


def make(name, *args, seed=0, **kw):
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mt = getattr(torch.nn, name)(*args, dtype=torch.float64, **kw)
        me = getattr(ember.nn, name)(*args, dtype=ember.float64, **kw)
    return me, mt


def same_params(me, mt):
    assert [(n, tuple(p.shape)) for n, p in me.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in mt.named_parameters()]
    for pe, pt in zip(me.parameters(), mt.parameters()):
        close(pe.detach(), pt.detach())


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"kdim": 5, "vdim": 3}, {"bias": False},
                                {"add_bias_kv": True}, {"add_zero_attn": True}])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("masks", ["none", "kpm", "attn_bool", "attn_float", "both", "self"])
def test_multihead_attention(kw, need_weights, average, masks):
    me, mt = make("MultiheadAttention", 8, 2, **kw)
    same_params(me, mt)
    assert repr(me) == repr(mt)
    bf = kw.get("batch_first", False)
    q = randn(*((2, 4, 8) if bf else (4, 2, 8)))
    S = 4 if masks == "self" else 6
    k = randn(*((2, S, kw.get("kdim", 8)) if bf else (S, 2, kw.get("kdim", 8))), seed=2)
    v = randn(*((2, S, kw.get("vdim", 8)) if bf else (S, 2, kw.get("vdim", 8))), seed=3)
    if masks == "self":
        if "kdim" in kw:
            return
        k = v = q
    m = {}
    if masks in ("kpm", "both"):
        m["key_padding_mask"] = torch.tensor([[False] * (S - 1) + [True], [False] * S])
    if masks in ("attn_bool", "both"):
        m["attn_mask"] = torch.rand(4, S, generator=torch.Generator().manual_seed(4)) > 0.8
    if masks == "attn_float":
        m["attn_mask"] = randn(4, S, seed=6, grad=False)
    args_t = (q, k, v)
    args_e = tuple(from_torch(t) for t in args_t) if masks != "self" else (from_torch(q),) * 3
    ot, wt = mt(*args_t, need_weights=need_weights, average_attn_weights=average, **m)
    oe, we = me(*args_e, need_weights=need_weights, average_attn_weights=average,
                **{n: from_torch(t) for n, t in m.items()})
    close(oe, ot)
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
    assert (we is None) == (wt is None)
    if wt is not None:
        close(we, wt)
    check_grads([oe], [ot], list(me.parameters()) + list(args_e[:1 if masks == "self" else 3]),
                list(mt.parameters()) + list(args_t[:1 if masks == "self" else 3]))


def test_multihead_attention_unbatched_dropout_errors():
    me, mt = make("MultiheadAttention", 6, 3, dropout=0.3)
    q = randn(4, 6)
    torch.manual_seed(2)
    ember.manual_seed(2)
    ot, wt = mt(q, q, q)
    oe, we = me(*(from_torch(q),) * 3)
    close(oe, ot)
    close(we, wt)
    me.eval()
    mt.eval()
    ot, wt = mt(q, q, q, key_padding_mask=torch.tensor([False, False, True, False]))
    oe, we = me(*(from_torch(q),) * 3, key_padding_mask=ember.tensor([False, False, True, False]))
    close(oe, ot)
    close(we, wt)
    same_error(lambda: ember.nn.MultiheadAttention(0, 2), lambda: torch.nn.MultiheadAttention(0, 2),
               match_message=True)
    same_error(lambda: ember.nn.MultiheadAttention(6, 4), lambda: torch.nn.MultiheadAttention(6, 4))
    same_error(lambda: me(*(from_torch(q),) * 3, attn_mask=ember.zeros((3, 3))),
               lambda: mt(q, q, q, attn_mask=torch.zeros(3, 3)), match_message=True)


# ---- TransformerEncoderLayer / TransformerEncoder ---------------------------------------------------


def copy_weights(me, mt):
    me.load_state_dict({k: from_torch(v) for k, v in mt.state_dict().items()})


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"norm_first": True, "activation": "gelu"},
                                {"batch_first": True, "activation": "gelu"}, {"bias": False, "batch_first": True}])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_transformer_encoder(kw, num_layers):
    le, lt = make("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, **kw)
    same_params(le, lt)
    assert repr(le) == repr(lt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        et = torch.nn.TransformerEncoder(lt, num_layers, norm=torch.nn.LayerNorm(8, dtype=torch.float64))
        ee = ember.nn.TransformerEncoder(le, num_layers, norm=ember.nn.LayerNorm(8, dtype=ember.float64))
    copy_weights(ee, et)
    assert repr(ee) == repr(et)
    bf = kw.get("batch_first", False)
    x = randn(*((2, 5, 8) if bf else (5, 2, 8)), grad=False)
    kpm = torch.tensor([[False] * 3 + [True] * 2, [False] * 5])
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    for mode in ("train", "eval", "eval_nograd"):
        et.train(mode == "train")
        ee.train(mode == "train")
        for m in [{}, {"src_key_padding_mask": kpm}, {"mask": causal}, {"mask": causal, "is_causal": True}]:
            me_ = {n: from_torch(t) if hasattr(t, "numpy") else t for n, t in m.items()}
            if mode == "eval_nograd":
                with torch.no_grad():
                    ot = et(x, **m)
                    ot1 = lt(x, **{("src_mask" if n == "mask" else n): t for n, t in m.items()})
                with ember.no_grad():
                    oe = ee(from_torch(x), **me_)
                    oe1 = le(from_torch(x), **{("src_mask" if n == "mask" else n): t for n, t in me_.items()})
                close(oe1, ot1)
            else:
                ot = et(x, **m)
                oe = ee(from_torch(x), **me_)
                assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
            close(oe, ot)
    et.train()
    ee.train()
    xg = randn(*x.shape, seed=3)
    ot = et(xg, src_key_padding_mask=kpm)
    xe = from_torch(xg)
    oe = ee(xe, src_key_padding_mask=from_torch(kpm))
    check_grads([oe], [ot], [xe] + list(ee.parameters()), [xg] + list(et.parameters()))


def test_transformer_dropout_seeded_and_warning():
    le, lt = make("TransformerEncoderLayer", 8, 2, 16, dropout=0.2)
    x = randn(5, 2, 8)
    torch.manual_seed(11)
    ember.manual_seed(11)
    close(le(from_torch(x)), lt(x))
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False"):
        ember.nn.TransformerEncoder(le, 2)


# ---- TransformerDecoderLayer / TransformerDecoder / Transformer ------------------------------------


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"norm_first": True, "activation": "gelu"},
                                {"bias": False, "batch_first": True}])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_transformer_decoder(kw, num_layers):
    le, lt = make("TransformerDecoderLayer", 8, 2, 16, dropout=0.0, **kw)
    same_params(le, lt)
    assert repr(le) == repr(lt)
    dt = torch.nn.TransformerDecoder(lt, num_layers, norm=torch.nn.LayerNorm(8, dtype=torch.float64))
    de = ember.nn.TransformerDecoder(le, num_layers, norm=ember.nn.LayerNorm(8, dtype=ember.float64))
    copy_weights(de, dt)
    assert repr(de) == repr(dt)
    bf = kw.get("batch_first", False)
    tgt = randn(*((2, 4, 8) if bf else (4, 2, 8)), grad=False)
    mem = randn(*((2, 5, 8) if bf else (5, 2, 8)), seed=2, grad=False)
    tkpm = torch.tensor([[False] * 3 + [True], [False] * 4])
    mkpm = torch.tensor([[False] * 4 + [True], [False] * 5])
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    masks = [{}, {"tgt_mask": causal}, {"tgt_mask": causal, "tgt_is_causal": True},
             {"tgt_key_padding_mask": tkpm, "memory_key_padding_mask": mkpm},
             {"memory_mask": torch.zeros(4, 5, dtype=torch.float64)}]
    for train in (True, False):
        dt.train(train)
        de.train(train)
        for m in masks:
            me_ = {n: from_torch(t) if hasattr(t, "numpy") else t for n, t in m.items()}
            close(de(from_torch(tgt), from_torch(mem), **me_), dt(tgt, mem, **m))
            one = {n: t for n, t in m.items() if n != "tgt_is_causal"}
            one_e = {n: t for n, t in me_.items() if n != "tgt_is_causal"}
            close(le(from_torch(tgt), from_torch(mem), **one_e), lt(tgt, mem, **one))
    tg, mg = randn(*tgt.shape, seed=3), randn(*mem.shape, seed=4)
    ot = dt(tg, mg, tgt_mask=causal)
    te, me = from_torch(tg), from_torch(mg)
    oe = de(te, me, tgt_mask=from_torch(causal))
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
    check_grads([oe], [ot], [te, me] + list(de.parameters()), [tg, mg] + list(dt.parameters()))


@pytest.mark.parametrize("kw", [{}, {"batch_first": True, "norm_first": True}])
def test_transformer(kw):
    me, mt = make("Transformer", 8, 2, 2, 1, 16, dropout=0.0, **kw)
    same_params(me, mt)  # xavier_uniform_ draws in the same order, same seed
    assert repr(me) == repr(mt)
    bf = kw.get("batch_first", False)
    src = randn(*((2, 5, 8) if bf else (5, 2, 8)), seed=2)
    tgt = randn(*((2, 4, 8) if bf else (4, 2, 8)), seed=3)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    close(ember.nn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64), causal)
    ot = mt(src, tgt, tgt_mask=causal)
    se, te = from_torch(src), from_torch(tgt)
    oe = me(se, te, tgt_mask=from_torch(causal))
    close(oe, ot)
    check_grads([oe], [ot], [se, te] + list(me.parameters()), [src, tgt] + list(mt.parameters()))
    bad = randn(*((3, 4, 8) if bf else (4, 3, 8)), grad=False)
    same_error(lambda: me(from_torch(src), from_torch(bad)), lambda: mt(src, bad))
    bad = randn(*((2, 4, 6) if bf else (4, 2, 6)), grad=False)
    same_error(lambda: me(from_torch(src), from_torch(bad)), lambda: mt(src, bad))


def _sdpa_second_derivative(lib, q, math):
    attention = lib.nn.attention
    backends = [attention.SDPBackend.MATH] if math else [attention.SDPBackend.FLASH_ATTENTION]
    with attention.sdpa_kernel(backends):
        y = lib.nn.functional.scaled_dot_product_attention(q, q * 0.5, q.sin(), is_causal=True)
        (g,) = lib.autograd.grad((y * y).sum(), q, create_graph=True)
        return lib.autograd.grad((g * g).sum(), q)[0]


def test_sdpa_second_derivative():
    """The fused CPU kernel's backward has no derivative (PyTorch raises, so
    does Ember); the math path's second derivative is PyTorch's."""
    q = randn(2, 3, 4, 5)
    qe = from_torch(q.detach()).requires_grad_()
    same_error(
        lambda: _sdpa_second_derivative(ember, qe, False),
        lambda: _sdpa_second_derivative(torch, q, False),
        match_message=False,
    )
    close(_sdpa_second_derivative(ember, qe, True), _sdpa_second_derivative(torch, q, True), atol=1e-12)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(4, 2, 11, 8), (1, 1, 5, 8), (2, 3, 15, 16), (1, 2, 7, 4)])
@pytest.mark.parametrize("variant", ["plain", "causal", "bool_mask", "float_mask", "transposed"])
def test_16bit_sdpa_rounds_where_pytorch_does(dtype, shape, variant):
    """16-bit attention keeps scores, maxima and sums in float and rounds the
    exponentials and the output only (Note [16-bit attention]): for up to 15
    keys (where PyTorch's kernel takes the scalar exp) bfloat16 results are
    PyTorch's bit for bit; float16 ones, finer, within one unit in the last
    place (its half GEMM sums in another order)."""
    outs = []
    for lib in (torch, ember):
        g = lib.Generator().manual_seed(3)
        B, H, T, D = shape
        t = getattr(lib, dtype)
        if variant == "transposed":
            q, k, v = (lib.randn(B, T, H, D, generator=g).transpose(1, 2).to(t) for _ in range(3))
        else:
            q, k, v = (lib.randn(B, H, T, D, generator=g).to(t) for _ in range(3))
        mask = None
        if variant == "bool_mask":
            mask = lib.rand(T, T, generator=g) > 0.3
        elif variant == "float_mask":
            mask = lib.randn(B, 1, T, T, generator=g).to(t)
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=variant == "causal")
        outs.append((str(y.dtype), y.float()))
    assert outs[0][0] == outs[1][0]
    want, got = outs[0][1], torch.tensor(outs[1][1].tolist())
    if dtype == "bfloat16":
        assert got.tolist() == want.tolist()
    else:
        ulp = torch.finfo(torch.float16).eps * want.abs().clamp_min(2**-14)
        assert bool(((got - want).abs() <= ulp).all())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16bit_sdpa_backward_in_float(dtype):
    """Gradients of 16-bit attention are computed in float from the float
    log-sum-exp and rounded once: within 16-bit rounding of PyTorch's."""
    grads = []
    for lib in (torch, ember):
        g = lib.Generator().manual_seed(5)
        q, k, v = (lib.randn(2, 2, 9, 8, generator=g).to(getattr(lib, dtype)).requires_grad_() for _ in range(3))
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        y.float().pow(2).sum().backward()
        grads.append([t.grad.float() for t in (q, k, v)] + [str(t.grad.dtype).split(".")[-1] for t in (q, k, v)])
    assert grads[0][3:] == grads[1][3:] == [dtype] * 3
    for want, got in zip(grads[0][:3], grads[1][:3]):
        got = torch.tensor(got.tolist())
        assert bool(((got - want).abs() <= 0.02 * want.abs() + 0.02).all())
