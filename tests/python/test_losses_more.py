"""The margin, ranking, embedding and likelihood losses against torch: values,
dtypes, gradients, every reduction, argument errors."""

from __future__ import annotations

import pytest
from _nn_helpers import close, from_torch, same_error
from conftest import torch

import ember

EF, TF = ember.nn.functional, torch.nn.functional
REDUCTIONS = ["none", "mean", "sum"]


def randn(*shape, seed=0, dtype=torch.float64, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).requires_grad_(requires_grad)


def signs(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 2, shape, generator=g) * 2 - 1).to(dtype)


def check(fe, ft, inputs, **tol):
    ins_e = [from_torch(t) if isinstance(t, torch.Tensor) else t for t in inputs]
    re, rt = fe(*ins_e), ft(*inputs)
    close(re, rt, **tol)
    if rt.requires_grad:
        g = torch.Generator().manual_seed(99)
        go = torch.randn(rt.shape, generator=g, dtype=torch.float64).to(rt.dtype)
        re.backward(from_torch(go))
        rt.backward(go)
        for e, t in zip(ins_e, inputs):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                close(e.grad, t.grad, **tol)
    return re, rt


def both(name, *args, **kw):
    return (lambda *a: getattr(EF, name)(*a, *args, **kw)), (lambda *a: getattr(TF, name)(*a, *args, **kw))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_margin_ranking_loss(reduction, dtype, margin):
    a, b = randn(6, dtype=dtype, requires_grad=True), randn(6, seed=1, dtype=dtype, requires_grad=True)
    check(*both("margin_ranking_loss", margin=margin, reduction=reduction), [a, b, signs(6, dtype=dtype)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.3])
def test_hinge_embedding_loss(reduction, margin):
    x = randn(4, 5, requires_grad=True)
    check(*both("hinge_embedding_loss", margin=margin, reduction=reduction), [x, signs(4, 5)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_soft_margin_loss(reduction, dtype):
    x = randn(4, 5, dtype=dtype, requires_grad=True)
    check(*both("soft_margin_loss", reduction=reduction), [x, signs(4, 5, dtype=dtype)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(reduction, weighted):
    x = randn(4, 5, requires_grad=True)
    y = (signs(4, 5) > 0).double()
    w = randn(5, seed=2).abs() if weighted else None
    check(lambda a, b: EF.multilabel_soft_margin_loss(a, b, None if w is None else from_torch(w), reduction=reduction),
          lambda a, b: TF.multilabel_soft_margin_loss(a, b, w, reduction=reduction), [x, y])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.2])
@pytest.mark.parametrize("batched", [True, False])
def test_cosine_embedding_loss(reduction, margin, batched):
    shape = (4, 5) if batched else (5,)
    a, b = randn(*shape, requires_grad=True), randn(*shape, seed=1, requires_grad=True)
    y = signs(4) if batched else signs(1).reshape(())
    check(*both("cosine_embedding_loss", margin=margin, reduction=reduction), [a, b, y])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap,margin", [(2, False, 1.0), (1, True, 0.5), (3, False, 2.0)])
def test_triplet_margin_loss(reduction, p, swap, margin):
    a, pos, neg = (randn(5, 4, seed=s, requires_grad=True) for s in range(3))
    check(*both("triplet_margin_loss", margin=margin, p=p, swap=swap, reduction=reduction), [a, pos, neg])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("custom", [False, True])
def test_triplet_margin_with_distance_loss(reduction, swap, custom):
    a, pos, neg = (randn(5, 4, seed=s, requires_grad=True) for s in range(3))
    de = (lambda x, y: 1.0 - EF.cosine_similarity(x, y)) if custom else None
    dt = (lambda x, y: 1.0 - TF.cosine_similarity(x, y)) if custom else None
    check(lambda *x: EF.triplet_margin_with_distance_loss(*x, distance_function=de, swap=swap, reduction=reduction),
          lambda *x: TF.triplet_margin_with_distance_loss(*x, distance_function=dt, swap=swap, reduction=reduction),
          [a, pos, neg])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True), (False, True)])
def test_poisson_nll_loss(reduction, log_input, full):
    x = randn(4, 5, requires_grad=True)
    if not log_input:
        x = x.detach().abs().requires_grad_(True)
    y = (randn(4, 5, seed=1).abs() * 3).floor()
    check(*both("poisson_nll_loss", log_input=log_input, full=full, reduction=reduction), [x, y])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(4, 5), (4,), (4, 1)])
def test_gaussian_nll_loss(reduction, full, var_shape):
    x, y = randn(4, 5, requires_grad=True), randn(4, 5, seed=1)
    var = randn(*var_shape, seed=2).abs().requires_grad_(True)
    var.data[0] = 0.0
    check(*both("gaussian_nll_loss", full=full, reduction=reduction), [x, y, var])


def test_gaussian_nll_loss_float_var():
    x, y = randn(4, 5, requires_grad=True), randn(4, 5, seed=1)
    check(lambda a, b: EF.gaussian_nll_loss(a, b, 0.5), lambda a, b: TF.gaussian_nll_loss(a, b, 0.5), [x, y])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,margin", [(1, 1.0), (2, 0.5)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_multi_margin_loss(reduction, p, margin, weighted, batched):
    x = randn(4, 5, requires_grad=True) if batched else randn(5, requires_grad=True)
    y = torch.tensor([0, 3, 4, 3]) if batched else torch.tensor(2)
    w = randn(5, seed=3).abs() if weighted else None
    check(lambda a, b: EF.multi_margin_loss(a, b, p, margin, None if w is None else from_torch(w),
                                            reduction=reduction),
          lambda a, b: TF.multi_margin_loss(a, b, p, margin, w, reduction=reduction), [x, y])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("batched", [True, False])
def test_multilabel_margin_loss(reduction, batched):
    if batched:
        x = randn(3, 4, requires_grad=True)
        y = torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 2, 0, 1]])
    else:
        x = randn(4, requires_grad=True)
        y = torch.tensor([2, 1, -1, 3])
    check(*both("multilabel_margin_loss", reduction=reduction), [x, y])


def _errors():
    t = randn
    return [
        ("margin_ranking_loss", (t(3), t(3), t(3, 1)), {}),
        ("margin_ranking_loss", (t(3), t(3), t(3)), {"reduction": "avg"}),
        ("hinge_embedding_loss", (t(3), t(3)), {"reduction": "avg"}),
        ("soft_margin_loss", (t(3), t(3)), {"reduction": "avg"}),
        ("multilabel_soft_margin_loss", (t(2, 3), t(2, 3)), {"reduction": "avg"}),
        ("cosine_embedding_loss", (t(3, 4), t(3, 4), t(3, 4)), {}),
        ("cosine_embedding_loss", (t(3, 4), t(3, 4), t(1).reshape(())), {}),
        ("cosine_embedding_loss", (t(4), t(4), t(3)), {}),
        ("triplet_margin_loss", (t(3, 4), t(3, 4), t(3, 4)), {"margin": -1.0}),
        ("triplet_margin_loss", (t(3, 4), t(3, 4), t(4)), {}),
        ("triplet_margin_with_distance_loss", (t(3, 4), t(3, 4), t(3, 4)), {"margin": 0.0}),
        ("triplet_margin_with_distance_loss", (t(3, 4), t(3, 4), t(3, 4)), {"reduction": "avg"}),
        ("triplet_margin_with_distance_loss", (t(3, 4), t(3), t(3, 4)), {}),
        ("poisson_nll_loss", (t(3), t(3)), {"reduction": "avg"}),
        ("gaussian_nll_loss", (t(3), t(3), -torch.ones(3, dtype=torch.float64)), {}),
        ("gaussian_nll_loss", (t(3), t(3), torch.ones(2, dtype=torch.float64)), {}),
        ("gaussian_nll_loss", (t(3), t(3), torch.ones(3, dtype=torch.float64)), {"reduction": "avg"}),
        ("gaussian_nll_loss", (t(3), t(3), -1.0), {}),
        ("multi_margin_loss", (t(3, 4), torch.tensor([0, 1, 2])), {"p": 3}),
        ("multi_margin_loss", (t(3, 4), torch.tensor([0, 1, 2])), {"weight": t(2, 2)}),
        ("multi_margin_loss", (t(3, 4), torch.tensor([0, 1, 2])), {"reduction": "avg"}),
    ]


@pytest.mark.parametrize("name,args,kw", _errors(), ids=lambda v: v if isinstance(v, str) else "")
def test_loss_errors(name, args, kw):
    conv = {k: from_torch(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    same_error(lambda: getattr(EF, name)(*[from_torch(a) if isinstance(a, torch.Tensor) else a for a in args], **conv),
               lambda: getattr(TF, name)(*args, **kw))


# ---- modules ------------------------------------------------------------------------------

LOSS_MODULES = [
    ("MarginRankingLoss", {}, lambda: [randn(5), randn(5, seed=1), signs(5)]),
    ("MarginRankingLoss", {"margin": 0.3, "reduction": "sum"}, lambda: [randn(5), randn(5, seed=1), signs(5)]),
    ("HingeEmbeddingLoss", {"margin": 0.5}, lambda: [randn(3, 4), signs(3, 4)]),
    ("SoftMarginLoss", {"reduction": "none"}, lambda: [randn(3, 4), signs(3, 4)]),
    ("MultiLabelSoftMarginLoss", {}, lambda: [randn(3, 4), (signs(3, 4) > 0).double()]),
    ("MultiLabelMarginLoss", {}, lambda: [randn(2, 4), torch.tensor([[1, 2, -1, 0], [3, -1, 0, 0]])]),
    ("CosineEmbeddingLoss", {"margin": 0.1}, lambda: [randn(3, 4), randn(3, 4, seed=1), signs(3)]),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5}, lambda: [randn(3, 4), torch.tensor([0, 3, 1])]),
    ("TripletMarginLoss", {"margin": 0.5, "swap": True}, lambda: [randn(3, 4, seed=s) for s in range(3)]),
    ("TripletMarginWithDistanceLoss", {}, lambda: [randn(3, 4, seed=s) for s in range(3)]),
    ("PoissonNLLLoss", {"full": True}, lambda: [randn(3, 4), (randn(3, 4, seed=1).abs() * 3).floor()]),
    ("GaussianNLLLoss", {"full": True}, lambda: [randn(3, 4), randn(3, 4, seed=1), randn(3, 1, seed=2).abs()]),
]


@pytest.mark.parametrize("name,kw,make", LOSS_MODULES, ids=lambda v: v if isinstance(v, str) else None)
def test_loss_modules(name, kw, make):
    tm, em = getattr(torch.nn, name)(**kw), getattr(ember.nn, name)(**kw)
    assert repr(em) == repr(tm)
    ins = make()
    ins[0].requires_grad_(True)
    check(em, tm, ins)


@pytest.mark.parametrize("name,kw", [("TripletMarginLoss", {"margin": 0.0}), ("MultiMarginLoss", {"p": 3}),
                                     ("TripletMarginWithDistanceLoss", {"margin": -1.0}),
                                     ("MultiMarginLoss", {"weight": torch.ones(2, 2)})])
def test_loss_module_constructor_errors(name, kw):
    kw_e = {k: from_torch(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    same_error(lambda: getattr(ember.nn, name)(**kw_e), lambda: getattr(torch.nn, name)(**kw))
