"""Functions and modules of torch.nn added beside the first set, against PyTorch:
conv_transpose1d / ConvTranspose1d, adaptive average and max pooling in 1-d and 2-d,
max unpooling, lazy modules, DataParallel and Container (values, gradients,
indices, reprs, state_dict keys, errors)."""

from __future__ import annotations

import warnings

import pytest
from _nn_helpers import close, from_torch, same_error
from conftest import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

EF, TF = ember.nn.functional, torch.nn.functional
HYP = settings(max_examples=25, deadline=None)


def randn(*shape, seed=0, grad=True):
    t = torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return t.requires_grad_(grad)


def check(fe, ft, *inputs, kw=None, indices=False):
    """fe/ft on the same float64 inputs: values (and indices), then the input gradients."""
    kw = kw or {}
    te = [from_torch(t) for t in inputs]
    rt, re_ = ft(*inputs, **kw), fe(*te, **kw)
    if indices:
        close(re_[1], rt[1])
        rt, re_ = rt[0], re_[0]
    close(re_, rt)
    w = torch.arange(rt.numel(), dtype=torch.float64).reshape(rt.shape) / 7
    (rt * w).sum().backward()
    (re_ * from_torch(w)).sum().backward()
    for a, b in zip(te, inputs):
        if b.requires_grad:
            close(a.grad, b.grad)


@HYP
@given(
    L=st.integers(1, 5),
    stride=st.integers(1, 3),
    padding=st.integers(0, 1),
    out_pad=st.integers(0, 2),
    groups=st.sampled_from([1, 2]),
    dilation=st.integers(1, 2),
    batched=st.booleans(),
    bias=st.booleans(),
)
def test_conv_transpose1d(L, stride, padding, out_pad, groups, dilation, batched, bias):
    if out_pad >= max(stride, dilation):
        out_pad = 0
    x = randn(*((2, 4, L) if batched else (4, L)), seed=1)
    w = randn(4, 3, 3, seed=2)
    args = [x, w] + ([randn(3 * groups, seed=3)] if bias else [])
    kw = dict(stride=stride, padding=padding, output_padding=out_pad, groups=groups, dilation=dilation)
    check(EF.conv_transpose1d, TF.conv_transpose1d, *args, kw=kw)


def test_conv_transpose1d_module_and_errors():
    torch.manual_seed(0)
    ember.manual_seed(0)
    mt = torch.nn.ConvTranspose1d(2, 4, 3, stride=2, padding=1, dtype=torch.float64)
    me = ember.nn.ConvTranspose1d(2, 4, 3, stride=2, padding=1, dtype=ember.float64)
    assert repr(me) == repr(mt)
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        close(pe, pt)
    x = randn(1, 2, 5, grad=False)
    close(me(from_torch(x), output_size=[10]), mt(x, output_size=[10]))
    same_error(lambda: me(from_torch(x), output_size=[20]), lambda: mt(x, output_size=[20]))
    same_error(
        lambda: EF.conv_transpose1d(ember.ones(5), ember.ones(3, 2, 2)),
        lambda: TF.conv_transpose1d(torch.ones(5), torch.ones(3, 2, 2)),
    )


@HYP
@given(L=st.integers(1, 9), out=st.integers(1, 6), batched=st.booleans())
def test_adaptive_1d(L, out, batched):
    x = randn(*((2, 3, L) if batched else (3, L)), seed=L)
    check(EF.adaptive_avg_pool1d, TF.adaptive_avg_pool1d, x, kw={"output_size": out})
    x.grad = None
    check(
        EF.adaptive_max_pool1d, TF.adaptive_max_pool1d, x, kw={"output_size": out, "return_indices": True}, indices=True
    )


@HYP
@given(
    H=st.integers(1, 7),
    W=st.integers(1, 7),
    oh=st.integers(1, 5),
    ow=st.one_of(st.none(), st.integers(1, 5)),
    batched=st.booleans(),
)
def test_adaptive_max_2d(H, W, oh, ow, batched):
    x = randn(*((2, 3, H, W) if batched else (3, H, W)), seed=H * 10 + W)
    check(
        EF.adaptive_max_pool2d,
        TF.adaptive_max_pool2d,
        x,
        kw={"output_size": (oh, ow), "return_indices": True},
        indices=True,
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda F, m: F.adaptive_avg_pool1d(m.ones(2, 3, 4), (2, 2)),
        lambda F, m: F.adaptive_avg_pool1d(m.ones(2, 2, 3, 4), 2),
        lambda F, m: F.adaptive_max_pool1d(m.ones(2, 2, 3, 4), 2),
        lambda F, m: F.adaptive_max_pool2d(m.ones(2, 4), 2),
        lambda F, m: F.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.long), 2, output_size=(9, 9)),
        lambda F, m: F.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.long), 2, output_size=(1, 4, 4)),
        lambda F, m: F.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.int32), 2),
        lambda F, m: F.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 1, dtype=m.long), 2),
        lambda F, m: F.max_unpool2d(m.ones(1, 1, 2, 2), m.full((1, 1, 2, 2), 16, dtype=m.long), 2),
        lambda F, m: F.max_unpool1d(m.ones(1, 1, 2), m.tensor([[[0, 9]]]), 2),
    ],
)
def test_errors(call):
    same_error(lambda: call(EF, ember), lambda: call(TF, torch))


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 2, 1), (2, 1, 0)])
def test_max_unpool_inverts_max_pool(dims, kernel, stride, padding):
    shape = (2, 3, 8) if dims == 1 else (2, 3, 6, 4)
    pool = getattr(TF, f"max_pool{dims}d")
    x = randn(*shape, seed=4, grad=False)
    out, idx = pool(x, kernel, stride, padding, return_indices=True)
    out.requires_grad_()
    sizes = [list(x.shape[2:]), tuple(x.shape)] + ([None] if (kernel, stride) != (3, 2) else [])
    for output_size in sizes:
        kw = dict(stride=stride, padding=padding, output_size=output_size)
        fe = getattr(EF, f"max_unpool{dims}d")
        ft = getattr(TF, f"max_unpool{dims}d")
        ue = fe(from_torch(out.detach()).requires_grad_(), from_torch(idx), kernel, **kw)
        ut = ft(out, idx, kernel, **kw)
        close(ue, ut)
    me = getattr(ember.nn, f"MaxUnpool{dims}d")(kernel, stride, padding)
    mt = getattr(torch.nn, f"MaxUnpool{dims}d")(kernel, stride, padding)
    assert repr(me) == repr(mt)
    check(
        lambda o: me(o, from_torch(idx), list(x.shape[2:])),
        lambda o: mt(o, idx, list(x.shape[2:])),
        out.detach().requires_grad_(),
    )


def test_pooling_modules():
    x = randn(2, 3, 6, 5, seed=3, grad=False)
    for name, args in (
        ("AdaptiveMaxPool2d", ((2, None), True)),
        ("AdaptiveMaxPool2d", (3,)),
        ("AdaptiveAvgPool1d", (4,)),
        ("AdaptiveMaxPool1d", (2, True)),
    ):
        me, mt = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
        assert repr(me) == repr(mt)
        inp = x if name.endswith("2d") else x[:, :, 0]
        rt, re_ = mt(inp), me(from_torch(inp))
        for a, b in zip(re_ if isinstance(re_, tuple) else (re_,), rt if isinstance(rt, tuple) else (rt,)):
            close(a, b)


@pytest.mark.parametrize(
    "name,args,kwargs,x_shape",
    [
        ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 6)),
        ("LazyConv2d", (4, 3), {"stride": 2, "bias": False}, (1, 2, 6, 6)),
        ("LazyConv2d", (4, 3), {"groups": 2}, (2, 6, 5)),
        ("LazyConvTranspose1d", (4, 3, 2, 1, 1), {}, (2, 3, 5)),
        ("LazyConvTranspose2d", (4, 2), {"stride": 2}, (1, 2, 3, 3)),
        ("LazyBatchNorm1d", (), {}, (4, 3)),
        ("LazyBatchNorm2d", (), {"affine": False}, (2, 3, 2, 2)),
        ("LazyBatchNorm3d", (), {"momentum": 0.3}, (2, 3, 2, 2, 2)),
        ("LazyInstanceNorm1d", (), {}, (2, 3, 4)),
        ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False}, (2, 3, 4, 4)),
    ],
)
def test_lazy_modules(name, args, kwargs, x_shape):
    made = {}
    for lib in (torch, ember):
        m = getattr(lib.nn, name)(*args, dtype=lib.float64, **kwargs)
        made[lib] = m
    me, mt = made[ember], made[torch]
    assert repr(me) == repr(mt)
    assert list(me.state_dict()) == list(mt.state_dict())
    assert me.has_uninitialized_params() == mt.has_uninitialized_params()
    x = randn(*x_shape, seed=5, grad=False)
    torch.manual_seed(9)
    ember.manual_seed(9)
    close(me(from_torch(x)), mt(x))
    assert type(me).__name__ == type(mt).__name__
    assert repr(me) == repr(mt)
    for (ne, pe), (nt, pt) in zip(me.state_dict().items(), mt.state_dict().items()):
        assert ne == nt
        close(pe, pt)


def test_lazy_errors_and_uninitialized_buffer():
    same_error(
        lambda: ember.nn.LazyConv2d(4, 3)(ember.ones(3, 3)),
        lambda: torch.nn.LazyConv2d(4, 3)(torch.ones(3, 3)),
        match_message=False,
    )
    same_error(
        lambda: ember.nn.LazyConv1d(4, 3, groups=2)(ember.ones(1, 3, 5)),
        lambda: torch.nn.LazyConv1d(4, 3, groups=2)(torch.ones(1, 3, 5)),
    )
    b = ember.nn.UninitializedBuffer()
    assert repr(b) == repr(torch.nn.UninitializedBuffer())
    b.materialize((2, 3))
    assert type(b) is ember.Tensor and tuple(b.shape) == (2, 3)


def test_data_parallel_and_container():
    torch.manual_seed(0)
    ember.manual_seed(0)
    dt = torch.nn.DataParallel(torch.nn.Linear(3, 2, dtype=torch.float64))
    de = ember.nn.DataParallel(ember.nn.Linear(3, 2, dtype=ember.float64))
    assert repr(de) == repr(dt)
    assert list(de.state_dict()) == list(dt.state_dict())
    assert de.device_ids == dt.device_ids == []
    check(de, dt, randn(4, 3, seed=2))
    x = randn(4, 3, seed=3, grad=False)
    same_error(
        lambda: ember.nn.parallel.data_parallel(de.module, from_torch(x)),
        lambda: torch.nn.parallel.data_parallel(dt.module, x),
    )
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        ct = torch.nn.Container(a=torch.nn.ReLU(), b=torch.nn.Tanh())
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        ce = ember.nn.Container(a=ember.nn.ReLU(), b=ember.nn.Tanh())
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]
    assert repr(ce) == repr(ct)


# ---- embedding_bag ------------------------------------------------------------------------------


@HYP
@given(
    lengths=st.lists(st.integers(0, 4), min_size=1, max_size=4),
    mode=st.sampled_from(["sum", "mean", "max"]),
    last=st.booleans(),
    padding=st.sampled_from([None, 2, -1]),
    weighted=st.booleans(),
    freq=st.booleans(),
    seed=st.integers(0, 50),
)
def test_embedding_bag_1d(lengths, mode, last, padding, weighted, freq, seed):
    g = torch.Generator().manual_seed(seed)
    n = sum(lengths)
    idx = torch.randint(0, 6, (n,), generator=g)
    offsets = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)[:-1]) + ([n] if last else []), dtype=torch.long)
    w = randn(6, 3, seed=seed)
    kw = dict(mode=mode, include_last_offset=last, padding_idx=padding)
    args = [idx, w, offsets]
    if weighted and mode == "sum":
        kw["per_sample_weights"] = randn(n, seed=seed + 1)
    if freq and mode != "max":
        kw["scale_grad_by_freq"] = True
    te = [from_torch(t) for t in args]
    kwe = {k: (from_torch(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    rt, re_ = TF.embedding_bag(*args, **kw), EF.embedding_bag(*te, **kwe)
    close(re_, rt)
    wgt = torch.arange(rt.numel(), dtype=torch.float64).reshape(rt.shape) + 1
    (rt * wgt).sum().backward()
    (re_ * from_torch(wgt)).sum().backward()
    close(te[1].grad, w.grad)
    if "per_sample_weights" in kw:
        close(kwe["per_sample_weights"].grad, kw["per_sample_weights"].grad)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_module_2d(mode):
    torch.manual_seed(0)
    ember.manual_seed(0)
    mt = torch.nn.EmbeddingBag(8, 3, mode=mode, padding_idx=1, dtype=torch.float64)
    me = ember.nn.EmbeddingBag(8, 3, mode=mode, padding_idx=1, dtype=ember.float64)
    assert repr(me) == repr(mt)
    close(me.weight, mt.weight)
    idx = torch.tensor([[0, 1, 5], [7, 7, 2], [1, 1, 1]])
    check(
        lambda w: EF.embedding_bag(from_torch(idx), w, mode=mode, padding_idx=1),
        lambda w: TF.embedding_bag(idx, w, mode=mode, padding_idx=1),
        mt.weight.detach().clone().requires_grad_(),
    )
    close(me(from_torch(idx)), mt(idx))
    w = randn(4, 2, grad=False)
    pe = ember.nn.EmbeddingBag.from_pretrained(from_torch(w), mode=mode, max_norm=1.0)
    pt = torch.nn.EmbeddingBag.from_pretrained(w.clone(), mode=mode, max_norm=1.0)
    assert repr(pe) == repr(pt) and pe.weight.requires_grad is pt.weight.requires_grad is False
    close(pe(ember.tensor([[0, 3], [2, 2]])), pt(torch.tensor([[0, 3], [2, 2]])))
    close(pe.weight, pt.weight)  # max_norm renormalised the rows in place


@pytest.mark.parametrize(
    "call",
    [
        lambda F, m: F.embedding_bag(m.tensor([1, 2, 3]), m.ones(10, 3), m.tensor([1, 2])),
        lambda F, m: F.embedding_bag(m.tensor([1, 2, 3]), m.ones(10, 3), m.tensor([0, 5])),
        lambda F, m: F.embedding_bag(m.tensor([1, 2, 3]), m.ones(10, 3), m.tensor([0, 2, 1])),
        lambda F, m: F.embedding_bag(m.tensor([1, 2, 13]), m.ones(10, 3), m.tensor([0, 2])),
        lambda F, m: F.embedding_bag(m.tensor([1, 2, 3]), m.ones(10, 3), m.tensor([0, 2]), padding_idx=12),
        lambda F, m: F.embedding_bag(m.tensor([1.0, 2.0]), m.ones(10, 3), m.tensor([0, 1])),
        lambda F, m: F.embedding_bag(m.tensor([[1, 2]]), m.ones(10, 3), m.tensor([0])),
        lambda F, m: F.embedding_bag(m.tensor([1, 2]), m.ones(10, 3)),
        lambda F, m: F.embedding_bag(m.tensor([1, 2]), m.ones(10, 3), m.tensor([[0]])),
        lambda F, m: F.embedding_bag(m.tensor([[[1]]]), m.ones(10, 3)),
        lambda F, m: F.embedding_bag(m.tensor([1, 2]), m.ones(10), m.tensor([0])),
        lambda F, m: F.embedding_bag(m.tensor([1, 2]), m.ones(10, 3), m.tensor([0]), mode="min"),
        lambda F, m: F.embedding_bag(
            m.tensor([1, 2]), m.ones(10, 3), m.tensor([0]), mode="max", scale_grad_by_freq=True
        ),
        lambda F, m: F.embedding_bag(m.tensor([1, 2]), m.ones(10, 3), m.tensor([0]), per_sample_weights=m.ones(2)),
        lambda F, m: F.embedding_bag(
            m.tensor([1, 2]), m.ones(10, 3), m.tensor([0]), mode="sum", per_sample_weights=m.ones(3)
        ),
    ],
)
def test_embedding_bag_errors(call):
    same_error(lambda: call(EF, ember), lambda: call(TF, torch))


# ---- import paths -------------------------------------------------------------------------------

SUBMODULES = [
    "activation",
    "adaptive",
    "batchnorm",
    "channelshuffle",
    "container",
    "conv",
    "distance",
    "dropout",
    "flatten",
    "fold",
    "instancenorm",
    "lazy",
    "linear",
    "loss",
    "module",
    "normalization",
    "padding",
    "pixelshuffle",
    "pooling",
    "rnn",
    "sparse",
    "transformer",
    "upsampling",
]


@pytest.mark.parametrize("name", SUBMODULES)
def test_module_classes_at_torch_paths(name):
    """Every module class Ember has is reachable where PyTorch defines it (nn.modules.<file>.<Class>)."""
    import importlib

    theirs = importlib.import_module(f"torch.nn.modules.{name}")
    ours = getattr(ember.nn.modules, name, None)
    wanted = [
        n
        for n in dir(theirs)
        if isinstance(getattr(theirs, n), type)
        and issubclass(getattr(theirs, n), torch.nn.Module)
        and getattr(theirs, n).__module__ == theirs.__name__
        and hasattr(ember.nn, n)
    ]
    if ours is None:
        assert not wanted, f"nn.modules.{name} is missing; PyTorch defines {wanted} there"
        return
    assert [n for n in wanted if not hasattr(ours, n)] == []


def test_modules_utils_and_common_types():
    from collections import OrderedDict

    from torch.nn.modules import utils as tu

    from ember.nn.modules import utils as eu

    for fn in ("_single", "_pair", "_triple", "_quadruple"):
        assert getattr(eu, fn)(3) == getattr(tu, fn)(3)
        assert getattr(eu, fn)([1, 2]) == getattr(tu, fn)([1, 2])
    assert eu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert eu._list_with_default([None, 3], [1, 2, 5, 6]) == tu._list_with_default([None, 3], [1, 2, 5, 6])
    made = []
    for m in (eu, tu):
        sd = OrderedDict([("module.a", 1), ("b", 2), ("module.c.d", 3)])
        sd._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.c", {"v": 2})])
        m.consume_prefix_in_state_dict_if_present(sd, "module.")
        made.append((list(sd.items()), list(sd._metadata.items())))
    assert made[0] == made[1]
    import torch.nn.common_types as tct

    import ember.nn.common_types as ect

    assert {n for n in dir(tct) if n.startswith("_size") or n.startswith("_ratio")} <= set(dir(ect))


def test_adaptive_max_ties_and_nan_pick_torch_positions():
    x = torch.tensor([[[1.0, 3.0, 3.0, 0.0, 2.0], [3.0, 1.0, 0.0, 3.0, 2.0], [0.0, 3.0, 2.0, 2.0, 2.0]]])
    x[0, 2, 4] = float("nan")
    for size in ((2, 3), (1, 2), (3, 4)):
        vt, it = TF.adaptive_max_pool2d(x, size, return_indices=True)
        ve, ie = EF.adaptive_max_pool2d(from_torch(x), size, return_indices=True)
        close(ve, vt)
        close(ie, it)


# ---- 3-d convolution and pooling --------------------------------------------------------------


@HYP
@given(
    D=st.integers(2, 5),
    H=st.integers(3, 6),
    k=st.sampled_from([1, 2, (2, 3, 1), 3]),
    stride=st.sampled_from([1, 2, (1, 2, 1)]),
    padding=st.sampled_from([0, 1, (1, 0, 1)]),
    dilation=st.sampled_from([1, (2, 1, 1)]),
    groups=st.sampled_from([1, 2]),
    bias=st.booleans(),
    batched=st.booleans(),
)
def test_conv3d(D, H, k, stride, padding, dilation, groups, bias, batched):
    ks = k if isinstance(k, tuple) else (k,) * 3
    dl = dilation if isinstance(dilation, tuple) else (dilation,) * 3
    pd = padding if isinstance(padding, tuple) else (padding,) * 3
    if any(s + 2 * p < d * (kk - 1) + 1 for s, p, d, kk in zip((D, H, H), pd, dl, ks)):
        return
    x = randn(*((2, 4, D, H, H) if batched else (4, D, H, H)), seed=1)
    args = [x, randn(6, 4 // groups, *ks, seed=2)] + ([randn(6, seed=3)] if bias else [])
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    check(EF.conv3d, TF.conv3d, *args, kw=kw)


def test_conv3d_same_module_and_errors():
    check(EF.conv3d, TF.conv3d, randn(1, 2, 4, 5, 5, seed=1), randn(3, 2, 2, 3, 2, seed=2), kw={"padding": "same"})
    torch.manual_seed(0)
    ember.manual_seed(0)
    mt = torch.nn.Conv3d(2, 3, (2, 3, 3), stride=2, padding=1, padding_mode="replicate", dtype=torch.float64)
    me = ember.nn.Conv3d(2, 3, (2, 3, 3), stride=2, padding=1, padding_mode="replicate", dtype=ember.float64)
    assert repr(me) == repr(mt)
    check(me, mt, randn(1, 2, 5, 6, 6, seed=4))
    for call in (
        lambda F, m: F.conv3d(m.ones(2, 3, 4), m.ones(1, 3, 1, 1, 1)),
        lambda F, m: F.conv3d(m.ones(1, 2, 3, 3, 3), m.ones(1, 3, 1, 1, 1)),
        lambda F, m: F.conv3d(m.ones(1, 2, 3, 3, 3), m.ones(1, 2, 4, 1, 1)),
        lambda F, m: F.conv3d(m.ones(1, 2, 3, 3, 3), m.ones(1, 2, 1, 1, 1), stride=2, padding="same"),
    ):
        same_error(lambda: call(EF, ember), lambda: call(TF, torch))


@HYP
@given(
    shape=st.sampled_from([(2, 3, 5, 6, 4), (3, 4, 5, 5), (1, 2, 6, 3, 7)]),
    k=st.sampled_from([2, 3, (1, 2, 3)]),
    stride=st.sampled_from([None, 1, 2, (2, 1, 2)]),
    padding=st.sampled_from([0, 1]),
    ceil=st.booleans(),
    include=st.booleans(),
    divisor=st.sampled_from([None, 3]),
    dilation=st.sampled_from([1, (1, 2, 1)]),
)
def test_pool3d(shape, k, stride, padding, ceil, include, divisor, dilation):
    ks = k if isinstance(k, tuple) else (k,) * 3
    dl = dilation if isinstance(dilation, tuple) else (dilation,) * 3
    if any(padding > kk // 2 for kk in ks) or any(
        n + 2 * padding < d * (kk - 1) + 1 for n, d, kk in zip(shape[-3:], dl, ks)
    ):
        return
    x = randn(*shape, seed=7)
    check(
        EF.avg_pool3d,
        TF.avg_pool3d,
        x,
        kw=dict(
            kernel_size=k,
            stride=stride,
            padding=padding,
            ceil_mode=ceil,
            count_include_pad=include,
            divisor_override=divisor,
        ),
    )
    x.grad = None
    check(
        EF.max_pool3d,
        TF.max_pool3d,
        x,
        kw=dict(kernel_size=k, stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil, return_indices=True),
        indices=True,
    )


@pytest.mark.parametrize("size", [1, 3, (2, None, 4), (5, 1, 7)])
def test_adaptive_avg_pool3d_and_modules(size):
    check(EF.adaptive_avg_pool3d, TF.adaptive_avg_pool3d, randn(2, 3, 5, 6, 7, seed=8), kw={"output_size": size})
    for name, args in (("AdaptiveAvgPool3d", (size,)), ("MaxPool3d", (2, 1, 1)), ("AvgPool3d", (3, 2, 1, True))):
        me, mt = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
        assert repr(me) == repr(mt)
        x = randn(1, 2, 4, 5, 6, seed=9, grad=False)
        close(me(from_torch(x)), mt(x))
    # ties: the first maximum in (d, h, w) order, as PyTorch
    x = torch.zeros(1, 1, 4, 4, 4, dtype=torch.float64)
    close(EF.max_pool3d(from_torch(x), 2, return_indices=True)[1], TF.max_pool3d(x, 2, return_indices=True)[1])


@pytest.mark.parametrize("p,kernel,stride", [(2, 2, None), (3, (2, 3, 2), 1), (float("inf"), 2, 1), (1.5, 3, 2)])
def test_lp_pool3d(p, kernel, stride):
    x = randn(2, 3, 4, 6, 5, seed=11, grad=False).abs().requires_grad_()
    check(EF.lp_pool3d, TF.lp_pool3d, x, kw=dict(norm_type=p, kernel_size=kernel, stride=stride))
    me, mt = ember.nn.LPPool3d(p, kernel, stride), torch.nn.LPPool3d(p, kernel, stride)
    assert repr(me) == repr(mt)


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 2, 1)])
def test_max_unpool3d(kernel, stride, padding):
    x = randn(2, 3, 4, 6, 5, seed=12, grad=False)
    out, idx = TF.max_pool3d(x, kernel, stride, padding, return_indices=True)
    size = list(x.shape[2:])
    check(
        lambda o: EF.max_unpool3d(o, from_torch(idx), kernel, stride, padding, size),
        lambda o: TF.max_unpool3d(o, idx, kernel, stride, padding, size),
        out.requires_grad_(),
    )
    me, mt = ember.nn.MaxUnpool3d(kernel, stride, padding), torch.nn.MaxUnpool3d(kernel, stride, padding)
    assert repr(me) == repr(mt)
    close(me(from_torch(out.detach()), from_torch(idx), size), mt(out.detach(), idx, size))
    same_error(
        lambda: EF.max_unpool3d(ember.ones(2, 2, 2), ember.zeros(2, 2, 2, dtype=ember.long), 2),
        lambda: TF.max_unpool3d(torch.ones(2, 2, 2), torch.zeros(2, 2, 2, dtype=torch.long), 2),
    )


def test_lazy_conv3d():
    made = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        made[lib] = lib.nn.LazyConv3d(4, 2, padding=1, dtype=lib.float64)
    assert repr(made[ember]) == repr(made[torch])
    x = randn(1, 3, 3, 4, 4, seed=13, grad=False)
    torch.manual_seed(1)
    ember.manual_seed(1)
    close(made[ember](from_torch(x)), made[torch](x))
    assert repr(made[ember]) == repr(made[torch])


@pytest.mark.parametrize("size", [2, (3, None, 2), (4, 5, 6), (1, 1, 1)])
def test_adaptive_max_pool3d(size):
    x = torch.randperm(2 * 3 * 4 * 5 * 6, generator=torch.Generator().manual_seed(3)).to(torch.float64)
    x = x.reshape(2, 3, 4, 5, 6).requires_grad_()
    check(
        EF.adaptive_max_pool3d,
        TF.adaptive_max_pool3d,
        x,
        kw={"output_size": size, "return_indices": True},
        indices=True,
    )
    me, mt = ember.nn.AdaptiveMaxPool3d(size), torch.nn.AdaptiveMaxPool3d(size)
    assert repr(me) == repr(mt)
    close(me(from_torch(x[0].detach())), mt(x[0].detach()))
    for call in (
        lambda F, m: F.adaptive_max_pool3d(m.ones(2, 3, 4), 2),
        lambda F, m: F.adaptive_max_pool3d(m.ones(1, 2, 3, 4, dtype=m.int64), 2),
    ):
        same_error(lambda: call(EF, ember), lambda: call(TF, torch))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_nn_grad(dims):
    spatial = (5,) * dims
    x = randn(2, 4, *spatial, seed=1, grad=False)
    w = randn(6, 2, *(3,) * dims, seed=2, grad=False)
    kw = dict(stride=2, padding=1, dilation=1, groups=2)
    out = getattr(TF, f"conv{dims}d")(x, w, None, **kw)
    g = randn(*out.shape, seed=3, grad=False)
    ti = getattr(torch.nn.grad, f"conv{dims}d_input")(x.shape, w, g, **kw)
    ei = getattr(ember.nn.grad, f"conv{dims}d_input")(x.shape, from_torch(w), from_torch(g), **kw)
    close(ei, ti)
    tw = getattr(torch.nn.grad, f"conv{dims}d_weight")(x, w.shape, g, **kw)
    ew = getattr(ember.nn.grad, f"conv{dims}d_weight")(from_torch(x), w.shape, from_torch(g), **kw)
    close(ew, tw)


def test_sync_batch_norm_without_a_process_group():
    made = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(
            lib.nn.BatchNorm2d(3, dtype=lib.float64),
            lib.nn.ReLU(),
            lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False, dtype=lib.float64)),
        )
        made[lib] = lib.nn.SyncBatchNorm.convert_sync_batchnorm(seq)
    se, st = made[ember], made[torch]
    assert repr(se) == repr(st)
    assert list(se.state_dict()) == list(st.state_dict())
    x = randn(4, 3, 2, 2, seed=5)
    check(se[0], st[0], x)
    close(se[0].running_mean, st[0].running_mean)
    for train in (True, False):
        me, mt = (
            ember.nn.SyncBatchNorm(3, dtype=ember.float64).train(train),
            torch.nn.SyncBatchNorm(3, dtype=torch.float64).train(train),
        )
        y = randn(5, 3, 4, seed=6, grad=False)
        close(me(from_torch(y)), mt(y))
    same_error(lambda: ember.nn.SyncBatchNorm(3)(ember.ones(3)), lambda: torch.nn.SyncBatchNorm(3)(torch.ones(3)))
    same_error(
        lambda: ember.nn.SyncBatchNorm(0)(ember.ones(4, 0, 2)), lambda: torch.nn.SyncBatchNorm(0)(torch.ones(4, 0, 2))
    )
