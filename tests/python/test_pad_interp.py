"""F.pad, F.one_hot, einsum, F.interpolate, F.unfold/F.fold and their modules
against PyTorch: values, float64 gradients, grad_fn names, errors, reprs."""

from __future__ import annotations

import pytest
from _nn_helpers import close, from_torch, pair_randn, same_error
from conftest import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

F = torch.nn.functional
EF = ember.nn.functional

HYP = settings(max_examples=25, deadline=None)


def run_both(fe, ft, *ts, grad=True, match_message=False):
    """Same error type, or the same output, grad_fn name and input gradients."""
    es = [from_torch(t) for t in ts]
    try:
        rt = ft(*ts)
    except Exception:  # noqa: BLE001
        same_error(lambda: fe(*es), lambda: ft(*ts), match_message=match_message)
        return None
    re_ = fe(*es)
    close(re_, rt)
    if grad and rt.requires_grad:
        assert type(re_.grad_fn).__name__ == type(rt.grad_fn).__name__
        g = torch.randn(rt.shape, dtype=rt.dtype, generator=torch.Generator().manual_seed(1))
        rt.backward(g)
        re_.backward(from_torch(g))
        for e, t in zip(es, ts):
            if t.grad is not None:
                close(e.grad, t.grad)
    return re_


# ---- pad -------------------------------------------------------------------------------

pads = st.lists(st.integers(-1, 3), min_size=2, max_size=6).filter(lambda p: len(p) % 2 == 0)


@HYP
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=5), pad=pads,
       mode=st.sampled_from(["constant", "reflect", "replicate", "circular"]))
def test_pad_random(shape, pad, mode):
    if mode == "circular":
        pad = [max(p, 0) for p in pad]
    _, t = pair_randn(shape, requires_grad=True)
    run_both(lambda x: EF.pad(x, pad, mode), lambda x: F.pad(x, pad, mode), t)


@pytest.mark.parametrize("mode,pad,node", [
    ("constant", (1, 2), "ConstantPadNdBackward0"),
    ("reflect", (1, 2), "ReflectionPad1DBackward0"),
    ("reflect", (1, 2, 0, 1), "ReflectionPad2DBackward0"),
    ("reflect", (1, 1, 1, 1, 1, 1), "ReflectionPad3DBackward0"),
    ("replicate", (3, 2), "ReplicationPad1DBackward0"),
    ("replicate", (1, 2, 3, 1), "ReplicationPad2DBackward0"),
    ("replicate", (1, 0, 2, 1, 1, 3), "ReplicationPad3DBackward0"),
    ("circular", (1, 2, 2, 1), "CopySlices"),
])
def test_pad_nodes(mode, pad, node):
    _, t = pair_randn((2, 3, 4, 5, 6)[: len(pad) // 2 + 2], requires_grad=True)
    r = run_both(lambda x: EF.pad(x, pad, mode), lambda x: F.pad(x, pad, mode), t)
    assert type(r.grad_fn).__name__ == node


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_pad_dtypes(dtype):
    t = (torch.randn(2, 3, 4) * 3).to(getattr(torch, dtype))
    close(EF.pad(from_torch(t), (1, 2, 0, 1), value=1), F.pad(t, (1, 2, 0, 1), value=1))
    if dtype != "bool":
        close(EF.pad(from_torch(t), (1, 2), "reflect"), F.pad(t, (1, 2), "reflect"))


def test_pad_value_and_negative():
    _, t = pair_randn((2, 3, 4), requires_grad=True)
    run_both(lambda x: EF.pad(x, (-1, 2, 1, -2), value=2.5), lambda x: F.pad(x, (-1, 2, 1, -2), value=2.5), t)
    t2 = t.detach().clone().requires_grad_(True)
    run_both(lambda x: EF.pad(x, (-1, 2), "reflect"), lambda x: F.pad(x, (-1, 2), "reflect"), t2)


@pytest.mark.parametrize("args", [
    ((1,), "constant", None), ((1, 1) * 4, "constant", None), ((1, 1), "foo", None), ((1, 1), "reflect", 1.0),
    ((1, 1) * 3, "reflect", None), ((4, 1), "reflect", None), ((5, 1), "circular", None),
])
def test_pad_errors(args):
    pad, mode, value = args
    _, t = pair_randn((2, 3, 4))
    same_error(lambda: EF.pad(from_torch(t), pad, mode, value), lambda: F.pad(t, pad, mode, value), match_message=True)


def test_pad_modules():
    _, t = pair_randn((1, 2, 4, 5))
    for name, args in [
        ("ZeroPad2d", ((1, 2, 0, 1),)),
        ("ConstantPad1d", (2, 3.5)),
        ("ReflectionPad2d", (1,)),
        ("ReplicationPad1d", ((1, 2),)),
        ("CircularPad2d", (1,)),
        ("ConstantPad2d", ((1, 0, 2, 1), -1.0)),
        ("ReflectionPad1d", (2,)),
        ("ReplicationPad2d", (1,)),
    ]:
        me, mt = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
        assert repr(me) == repr(mt)
        x = t[0] if name.endswith("1d") else t
        close(me(from_torch(x)), mt(x))


# ---- one_hot -------------------------------------------------------------------------------


def test_one_hot():
    i = torch.randint(0, 5, (3, 4), generator=torch.Generator().manual_seed(0))
    close(EF.one_hot(from_torch(i)), F.one_hot(i))
    close(EF.one_hot(from_torch(i), 7), F.one_hot(i, 7))
    close(EF.one_hot(from_torch(torch.tensor(3)), 4), F.one_hot(torch.tensor(3), 4))
    e = torch.zeros(0, dtype=torch.long)
    close(EF.one_hot(from_torch(e), 3), F.one_hot(e, 3))
    for bad, n in [(torch.tensor([1.0]), -1), (torch.tensor([-1]), -1), (torch.tensor([3]), 3), (e, -1),
                   (torch.tensor([1]), -2)]:
        same_error(lambda: EF.one_hot(from_torch(bad), n), lambda: F.one_hot(bad, n), match_message=True)


# ---- einsum -----------------------------------------------------------------------------------

EINSUMS = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk", [(2, 3, 4), (2, 4, 5)]), ("bij->bji", [(2, 3, 4)]),
    ("bij->", [(2, 3, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("bij,j->bi", [(2, 3, 4), (4,)]),
    ("i,j->ij", [(3,), (4,)]), ("i,i", [(3,), (3,)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("bij,bkj,k->bi", [(2, 3, 4), (2, 3, 4), (3,)]), ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),
    ("...j,j", [(2, 3, 4), (4,)]), ("Ab,ba->Aa", [(2, 3), (3, 4)]), ("ij->ij", [(2, 3)]), ("ij", [(2, 3)]),
    ("iij->ji", [(3, 3, 2)]), ("ij,jk->ki", [(2, 3), (3, 4)]), ("i,j->ji", [(3,), (2,)]),
    ("ij,ij->ji", [(2, 3), (2, 3)]), ("ij,kj->", [(2, 3), (4, 3)]), ("...,...->...", [(2, 3), (3,)]),
    ("ij,j->ij", [(2, 3), (3,)]), ("b i j , b j k -> b k i", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("bi,bj->bij", [(1, 3), (4, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUMS)
def test_einsum(eq, shapes):
    ts = [pair_randn(s, requires_grad=True, seed=i)[1] for i, s in enumerate(shapes)]
    run_both(lambda *x: ember.einsum(eq, *x), lambda *x: torch.einsum(eq, *x), *ts)


def test_einsum_list_and_errors():
    _, a = pair_randn((2, 3))
    _, b = pair_randn((3, 4))
    close(ember.einsum("ij,jk", [from_torch(a), from_torch(b)]), torch.einsum("ij,jk", [a, b]))
    _, x = pair_randn((2, 3, 4))
    for eq, ops in [("ij,jk", (x,)), ("ij", (x,)), ("ijk->ijkl", (x,)), ("ij,jk->ik", (a, a)), ("i1", (x,)),
                    ("ijk->ii", (x,))]:
        same_error(lambda: ember.einsum(eq, *[from_torch(o) for o in ops]), lambda: torch.einsum(eq, *ops),
                   match_message=True)


# ---- interpolate --------------------------------------------------------------------------------


@HYP
@given(h=st.integers(1, 6), w=st.integers(1, 6), oh=st.integers(1, 9), ow=st.integers(1, 9),
       mode=st.sampled_from(["nearest", "nearest-exact", "bilinear", "bilinear-ac"]), use_scale=st.booleans(),
       sh=st.sampled_from([0.5, 1.0, 1.7, 2.0, 3.0, 2.5]), sw=st.sampled_from([0.6, 1.0, 1.5, 2.0, 4.0]))
def test_interpolate_2d_random(h, w, oh, ow, mode, use_scale, sh, sw):
    _, t = pair_randn((2, 2, h, w), requires_grad=True)
    ac = None
    if mode.startswith("bilinear"):
        ac = mode == "bilinear-ac"
        mode = "bilinear"
    kw = {"scale_factor": (sh, sw)} if use_scale else {"size": (oh, ow)}
    run_both(lambda x: EF.interpolate(x, mode=mode, align_corners=ac, **kw),
             lambda x: F.interpolate(x, mode=mode, align_corners=ac, **kw), t)


@pytest.mark.parametrize(
    "mode,shape,kw",
    [
        ("nearest", (2, 3, 5), {"size": 11}),
        ("nearest", (2, 3, 5), {"scale_factor": 1.5}),
        ("nearest-exact", (2, 3, 5), {"size": 3}),
        ("linear", (2, 3, 5), {"scale_factor": 1.5}),
        ("linear", (2, 3, 5), {"size": 8, "align_corners": True}),
        ("nearest", (1, 2, 3, 4, 5), {"scale_factor": (2, 1.5, 0.5)}),
        ("nearest-exact", (1, 2, 3, 4, 5), {"size": (4, 4, 4)}),
        ("area", (1, 2, 6, 6), {"size": (3, 2)}),
        ("bilinear", (1, 2, 4, 4), {"scale_factor": 2, "recompute_scale_factor": True}),
        ("bilinear", (3, 4, 4), {"size": 2}),
        ("nearest", (4, 4), {"size": 2}),
        ("foo", (1, 2, 4), {"size": 2}),
        ("nearest", (1, 2, 4), {"size": 2, "align_corners": True}),
        ("nearest", (1, 2, 4), {}),
        ("nearest", (1, 2, 4), {"size": 2, "scale_factor": 2}),
        ("nearest", (1, 2, 4), {"size": (2, 2)}),
    ],
)
def test_interpolate_other(mode, shape, kw):
    _, t = pair_randn(shape, requires_grad=True)
    run_both(lambda x: EF.interpolate(x, mode=mode, **kw), lambda x: F.interpolate(x, mode=mode, **kw), t,
             match_message=True)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_interpolate_dtypes(dtype):
    t = torch.randn(2, 3, 4, 5).to(getattr(torch, dtype))
    for mode, ac in [("nearest", None), ("bilinear", False), ("bilinear", True)]:
        close(EF.interpolate(from_torch(t), scale_factor=1.5, mode=mode, align_corners=ac),
              F.interpolate(t, scale_factor=1.5, mode=mode, align_corners=ac))


def test_upsample_modules():
    _, t = pair_randn((1, 2, 3, 4))
    for name, kw in [("Upsample", {"scale_factor": 2}), ("Upsample", {"size": (5, 7), "mode": "bilinear"}),
                     ("Upsample", {"scale_factor": (2, 3), "mode": "bilinear", "align_corners": True}),
                     ("UpsamplingNearest2d", {"scale_factor": 2}), ("UpsamplingBilinear2d", {"size": 6})]:
        me, mt = getattr(ember.nn, name)(**kw), getattr(torch.nn, name)(**kw)
        assert repr(me) == repr(mt)
        close(me(from_torch(t)), mt(t))


# ---- unfold / fold ----------------------------------------------------------------------------------


@HYP
@given(h=st.integers(2, 7), w=st.integers(2, 7), k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       d=st.tuples(st.integers(1, 2), st.integers(1, 2)), p=st.tuples(st.integers(0, 1), st.integers(0, 1)),
       s=st.tuples(st.integers(1, 3), st.integers(1, 3)), batched=st.booleans())
def test_unfold_fold_random(h, w, k, d, p, s, batched):
    shape = (2, 3, h, w) if batched else (3, h, w)
    _, t = pair_randn(shape, requires_grad=True)
    r = run_both(lambda x: EF.unfold(x, k, d, p, s), lambda x: F.unfold(x, k, d, p, s), t)
    if r is None:
        return
    cols = F.unfold(t.detach(), k, d, p, s).clone().requires_grad_(True)
    run_both(lambda x: EF.fold(x, (h, w), k, d, p, s), lambda x: F.fold(x, (h, w), k, d, p, s), cols)


def test_unfold_fold_nodes_errors_modules():
    _, t = pair_randn((1, 2, 4, 4), requires_grad=True)
    assert type(EF.unfold(from_torch(t), 2).grad_fn).__name__ == "Im2ColBackward0"
    c = torch.randn(1, 8, 9, requires_grad=True)
    assert type(EF.fold(from_torch(c), 4, 2).grad_fn).__name__ == "Col2ImBackward0"
    same_error(lambda: EF.unfold(from_torch(t), 5), lambda: F.unfold(t, 5), match_message=True)
    same_error(lambda: EF.fold(from_torch(c), 4, 3), lambda: F.fold(c, 4, 3), match_message=True)
    same_error(lambda: EF.fold(from_torch(c), 5, 2), lambda: F.fold(c, 5, 2), match_message=True)
    for me, mt in [(ember.nn.Unfold(2, padding=1), torch.nn.Unfold(2, padding=1)),
                   (ember.nn.Fold((4, 4), (2, 2)), torch.nn.Fold((4, 4), (2, 2)))]:
        assert repr(me) == repr(mt)
    close(ember.nn.Fold(4, 2)(from_torch(c)), torch.nn.Fold(4, 2)(c))


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((1, 2, 5), {"scale_factor": 2}),  # upsample_nearest1d
        ((1, 2, 4, 5), {"scale_factor": 2}),  # upsample_nearest2d
        ((1, 1, 2, 3, 4), {"size": (3, 4, 5)}),  # upsample_nearest3d
        ((1, 2, 5), {"scale_factor": 2, "mode": "linear"}),  # upsample_linear1d
        ((1, 2, 4, 5), {"size": (7, 3), "mode": "bilinear"}),  # upsample_bilinear2d
    ],
)
def test_upsample_node_names(shape, kw):
    g = torch.Generator().manual_seed(0)
    t = torch.randn(shape, generator=g, dtype=torch.float64, requires_grad=True)
    e = ember.tensor(t.tolist(), dtype=ember.float64, requires_grad=True)
    want = torch.nn.functional.interpolate(t, **kw)
    got = ember.nn.functional.interpolate(e, **kw)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    assert torch.allclose(torch.tensor(got.tolist(), dtype=torch.float64), want.detach())
