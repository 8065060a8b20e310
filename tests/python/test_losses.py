"""Loss functions and modules against torch: values (float32 to rounding, float64),
gradients in float64, grad_fn names, reductions, shape/dtype errors, reprs."""

from __future__ import annotations

import warnings

import pytest
from _nn_helpers import close, from_torch, same_error
from conftest import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

EF, TF = ember.nn.functional, torch.nn.functional
REDUCTIONS = ["none", "mean", "sum"]


def randn(*shape, seed=0, dtype=torch.float64, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=torch.float64).to(dtype).requires_grad_(requires_grad)


def check(fe, ft, inputs, grad_of=(0,), rtol=None, same_node=True):
    """fe(*ember inputs) vs ft(*torch inputs): value, dtype, grad_fn name, gradients."""
    ins_e = [from_torch(t) if isinstance(t, torch.Tensor) else t for t in inputs]
    re, rt = fe(*ins_e), ft(*inputs)
    kw = {} if rtol is None else {"rtol": rtol, "atol": rtol}
    close(re, rt, **kw)
    if rt.requires_grad:
        if same_node:
            assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
        go = randn(*rt.shape, seed=99, dtype=rt.dtype)
        re.backward(from_torch(go))
        rt.backward(go)
        for i in grad_of:
            close(ins_e[i].grad, inputs[i].grad)
    return re, rt


# ---- regression losses ---------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}),
                                     ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                                     ("huber_loss", {}), ("huber_loss", {"delta": 0.3})])
def test_regression_losses_float64(name, kw, reduction):
    x = randn(4, 5, requires_grad=True)
    y = randn(4, 5, seed=1, requires_grad=True)
    check(lambda a, b: getattr(EF, name)(a, b, reduction=reduction, **kw),
          lambda a, b: getattr(TF, name)(a, b, reduction=reduction, **kw), [x, y], grad_of=(0, 1))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_losses_float32_noncontiguous(name):
    x = randn(5, 4, dtype=torch.float32).t()
    y = randn(4, 5, seed=2, dtype=torch.float32)
    for reduction in REDUCTIONS:
        close(getattr(EF, name)(from_torch(x).t().t(), from_torch(y), reduction=reduction),
              getattr(TF, name)(x, y, reduction=reduction), rtol=1e-6, atol=1e-6)


def test_regression_size_warning_and_bad_reduction():
    x, y = randn(3, 1), randn(3)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            re = getattr(EF, name)(from_torch(x), from_torch(y))
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            rt = getattr(TF, name)(x, y)
        close(re, rt)
        assert [str(w.message) for w in we] == [str(w.message) for w in wt]
        same_error(lambda: getattr(EF, name)(from_torch(y), from_torch(y), reduction="avg"),
                   lambda: getattr(TF, name)(y, y, reduction="avg"))


# ---- nll / cross entropy -----------------------------------------------------------------------------


def _targets(n_shape, C, seed=0, ignore=None):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, C, n_shape, generator=g)
    if ignore is not None and t.numel() > 1:
        t.view(-1)[1] = ignore
    return t


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 5, 3), (2, 5, 3, 2), (2, 5, 2, 2, 2)])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(shape, reduction, weighted):
    C = shape[0] if len(shape) == 1 else shape[1]
    x = randn(*shape, requires_grad=True)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = _targets(tshape, C, ignore=-100)
    w = randn(C, seed=5).abs() if weighted else None
    check(lambda a, b, c: EF.nll_loss(a, b, weight=c, reduction=reduction),
          lambda a, b, c: TF.nll_loss(a, b, weight=c, reduction=reduction), [x, t, w])


def test_nll_loss_ignore_index_and_node_names():
    x = randn(6, 4, requires_grad=True)
    t = torch.tensor([0, 2, 2, 3, 1, 2])
    re, rt = check(lambda a, b: EF.nll_loss(a, b, ignore_index=2), lambda a, b: TF.nll_loss(a, b, ignore_index=2),
                   [x, t])
    assert type(re.grad_fn).__name__ == "NllLossBackward0"
    x4 = randn(2, 3, 2, 2, requires_grad=True)
    re, _ = check(EF.nll_loss, TF.nll_loss, [x4, _targets((2, 2, 2), 3)])
    assert type(re.grad_fn).__name__ == "NllLoss2DBackward0"
    # every target ignored: mean is nan
    close(EF.nll_loss(from_torch(x.detach()), from_torch(torch.full((6,), 1)), ignore_index=1),
          TF.nll_loss(x.detach(), torch.full((6,), 1), ignore_index=1))


def test_nll_loss_errors():
    x = randn(3, 4)
    cases = [
        (x, torch.tensor([0, 1])),                  # batch size
        (x, torch.tensor([0, 1, 4])),               # class out of range
        (x, torch.tensor([0, -1, 1])),              # negative class
        (x, torch.tensor([0.0, 1.0, 1.0])),         # float target
        (torch.tensor(1.0), torch.tensor(0)),       # 0-d input
        (x, torch.zeros(3, 2, dtype=torch.long)),   # 2-d target
        (torch.randn(2, 3, 4, 4), torch.zeros(2, 4, 5, dtype=torch.long)),
        (torch.randn(2, 3, 4, 4), torch.zeros(2, 4, 4, dtype=torch.uint8)),
        (torch.randn(2, 3, 4), torch.zeros(2, 5, dtype=torch.long)),
    ]
    for a, b in cases:
        same_error(lambda: EF.nll_loss(from_torch(a), from_torch(b)), lambda: TF.nll_loss(a, b))
    same_error(lambda: EF.nll_loss(from_torch(x), from_torch(torch.tensor([0, 1, 2])), weight=ember.ones(3)),
               lambda: TF.nll_loss(x, torch.tensor([0, 1, 2]), weight=torch.ones(3)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("shape", [(6,), (4, 6), (3, 6, 2), (2, 6, 2, 3)])
def test_cross_entropy_class_indices(shape, reduction, label_smoothing):
    C = shape[0] if len(shape) == 1 else shape[1]
    x = randn(*shape, requires_grad=True)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = _targets(tshape, C, ignore=-100)
    for w in (None, randn(C, seed=4).abs()):
        if x.grad is not None:
            x.grad = None
        check(lambda a, b, c: EF.cross_entropy(a, b, weight=c, reduction=reduction, label_smoothing=label_smoothing),
              lambda a, b, c: TF.cross_entropy(a, b, weight=c, reduction=reduction, label_smoothing=label_smoothing),
              [x, t, w])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_probabilities(reduction, label_smoothing):
    x = randn(4, 5, 3, requires_grad=True)
    p = randn(4, 5, 3, seed=2).softmax(1)
    for w in (None, randn(5, seed=4).abs()):
        x.grad = None
        check(lambda a, b, c: EF.cross_entropy(a, b, weight=c, reduction=reduction, label_smoothing=label_smoothing),
              lambda a, b, c: TF.cross_entropy(a, b, weight=c, reduction=reduction, label_smoothing=label_smoothing),
              [x, p, w], same_node=reduction != "mean")  # torch divides by a Scalar there: DivBackward1


def test_cross_entropy_float32_and_errors():
    x = randn(8, 10, dtype=torch.float32)
    t = _targets((8,), 10)
    close(EF.cross_entropy(from_torch(x), from_torch(t)), TF.cross_entropy(x, t), rtol=1e-6, atol=1e-6)
    same_error(lambda: EF.cross_entropy(from_torch(x), from_torch(t), label_smoothing=1.5),
               lambda: TF.cross_entropy(x, t, label_smoothing=1.5))
    xi = torch.zeros(8, 10, dtype=torch.long)
    same_error(lambda: EF.cross_entropy(from_torch(x), from_torch(xi)), lambda: TF.cross_entropy(x, xi))
    same_error(lambda: EF.cross_entropy(from_torch(x), from_torch(t[:3])), lambda: TF.cross_entropy(x, t[:3]))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), c=st.integers(1, 6), reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_cross_entropy_hypothesis(n, c, reduction, seed):
    x = randn(n, c, seed=seed, dtype=torch.float32)
    t = _targets((n,), c, seed=seed)
    close(EF.cross_entropy(from_torch(x), from_torch(t), reduction=reduction),
          TF.cross_entropy(x, t, reduction=reduction), rtol=1e-6, atol=1e-6)


# ---- binary cross entropy, KL -----------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted):
    x = randn(3, 4).sigmoid().requires_grad_(True)
    y = randn(3, 4, seed=1).sigmoid()
    y[0, 0], y[0, 1] = 0.0, 1.0
    w = randn(4, seed=2).abs() if weighted else None
    re, rt = check(lambda a, b, c: EF.binary_cross_entropy(a, b, weight=c, reduction=reduction),
                   lambda a, b, c: TF.binary_cross_entropy(a, b, weight=c, reduction=reduction), [x, y, w])
    if reduction == "mean":
        assert type(re.grad_fn).__name__ == "BinaryCrossEntropyBackward0"


def test_binary_cross_entropy_edges_and_errors():
    x = torch.tensor([0.0, 1.0, 0.5, 1e-30])
    y = torch.tensor([1.0, 0.0, 0.5, 1.0])
    close(EF.binary_cross_entropy(from_torch(x), from_torch(y), reduction="none"),
          TF.binary_cross_entropy(x, y, reduction="none"))
    same_error(lambda: EF.binary_cross_entropy(from_torch(x + 1), from_torch(y)),
               lambda: TF.binary_cross_entropy(x + 1, y))
    same_error(lambda: EF.binary_cross_entropy(from_torch(x), from_torch(y[:2])),
               lambda: TF.binary_cross_entropy(x, y[:2]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(reduction):
    x = (randn(3, 4) * 4).requires_grad_(True)
    y = randn(3, 4, seed=1).sigmoid()
    for w, pw in ((None, None), (randn(4, seed=2).abs(), None), (None, randn(4, seed=3).abs()),
                  (randn(3, 1, seed=4).abs(), randn(4, seed=5).abs())):
        x.grad = None
        check(lambda a, b, c, d: EF.binary_cross_entropy_with_logits(a, b, c, reduction=reduction, pos_weight=d),
              lambda a, b, c, d: TF.binary_cross_entropy_with_logits(a, b, c, reduction=reduction, pos_weight=d),
              [x, y, w, pw])
    xf, yf = randn(50, dtype=torch.float32) * 30, randn(50, seed=1, dtype=torch.float32).sigmoid()
    close(EF.binary_cross_entropy_with_logits(from_torch(xf), from_torch(yf), reduction=reduction),
          TF.binary_cross_entropy_with_logits(xf, yf, reduction=reduction), rtol=1e-6, atol=1e-6)
    same_error(lambda: EF.binary_cross_entropy_with_logits(from_torch(xf), from_torch(yf[:3])),
               lambda: TF.binary_cross_entropy_with_logits(xf, yf[:3]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = randn(3, 5).log_softmax(1).requires_grad_(True)
    y = randn(3, 5, seed=1).softmax(1)
    y[0, 0] = 0.0
    if log_target:
        y = y.clamp_min(1e-3).log()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda a, b: EF.kl_div(a, b, reduction=reduction, log_target=log_target),
              lambda a, b: TF.kl_div(a, b, reduction=reduction, log_target=log_target), [x, y])


def test_kl_div_mean_warns_like_torch():
    x, y = randn(2, 3), randn(2, 3, seed=1).softmax(1)
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        EF.kl_div(from_torch(x), from_torch(y))
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        TF.kl_div(x, y)
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]


# ---- modules -----------------------------------------------------------------------------------------------

LOSS_MODULES = [
    ("L1Loss", {}), ("MSELoss", {"reduction": "sum"}), ("SmoothL1Loss", {"beta": 0.5}), ("HuberLoss", {"delta": 2.0}),
    ("NLLLoss", {"ignore_index": 1}), ("CrossEntropyLoss", {"label_smoothing": 0.1}), ("BCELoss", {}),
    ("BCEWithLogitsLoss", {}), ("KLDivLoss", {"reduction": "batchmean"}),
]


@pytest.mark.parametrize("cls,kw", LOSS_MODULES, ids=lambda v: str(v))
def test_loss_modules(cls, kw):
    me, mt = getattr(ember.nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert repr(me) == repr(mt)
    assert me.reduction == mt.reduction
    assert list(me.state_dict().keys()) == list(mt.state_dict().keys())
    x = randn(4, 3)
    if cls in ("NLLLoss", "CrossEntropyLoss"):
        y = _targets((4,), 3)
    elif cls == "BCELoss":
        x, y = x.sigmoid(), randn(4, 3, seed=1).sigmoid()
    else:
        y = randn(4, 3, seed=1)
    close(me(from_torch(x), from_torch(y)), mt(x, y))


def test_weighted_loss_modules_register_buffers():
    w = torch.tensor([1.0, 2.0, 0.5])
    for cls in ("NLLLoss", "CrossEntropyLoss", "BCELoss"):
        me, mt = getattr(ember.nn, cls)(weight=from_torch(w)), getattr(torch.nn, cls)(weight=w)
        assert list(me.state_dict().keys()) == list(mt.state_dict().keys())
    me = ember.nn.BCEWithLogitsLoss(pos_weight=from_torch(w))
    mt = torch.nn.BCEWithLogitsLoss(pos_weight=w)
    assert list(me.state_dict().keys()) == list(mt.state_dict().keys())
    assert ember.nn.NLLLoss(size_average=False).reduction == torch.nn.NLLLoss(size_average=False).reduction


# ---- float32 bit for bit ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 7, 64, 300, 1000])
def test_nll_loss_float32_bit_for_bit(n):
    """The reduced nll_loss is summed in PyTorch's cascaded order, so float32 results are identical."""
    g = torch.Generator().manual_seed(n)
    x = torch.randn(n, 10, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    y[0] = -100
    w = torch.rand(10, generator=g)
    x4, y4 = torch.randn(2, 10, 5, 6, generator=g), torch.randint(0, 10, (2, 5, 6), generator=g)
    for reduction in REDUCTIONS:
        for weight in (None, w):
            we = None if weight is None else from_torch(weight)
            close(EF.nll_loss(from_torch(x), from_torch(y), weight=we, reduction=reduction),
                  TF.nll_loss(x, y, weight=weight, reduction=reduction), rtol=0, atol=0)
            close(EF.nll_loss(from_torch(x4), from_torch(y4), weight=we, reduction=reduction),
                  TF.nll_loss(x4, y4, weight=weight, reduction=reduction), rtol=0, atol=0)


def test_binary_cross_entropy_float32_elementwise_bit_for_bit():
    g = torch.Generator().manual_seed(0)
    p, t = torch.rand(50, 20, generator=g), torch.rand(50, 20, generator=g)
    close(EF.binary_cross_entropy(from_torch(p), from_torch(t), reduction="none"),
          TF.binary_cross_entropy(p, t, reduction="none"), rtol=0, atol=0)
