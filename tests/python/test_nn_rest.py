"""The remaining pieces of torch.nn and torch's top-level functional forms, against
PyTorch: conv_transpose3d / ConvTranspose3d, conv_tbc, affine_grid, grid_sample,
CrossMapLRN2d, and torch.dropout, torch.kl_div, torch.lstm_cell ... with the
top level's signatures (values, gradients, dtypes, shapes, reprs, errors)."""

from __future__ import annotations

import pytest
from _nn_helpers import close, from_torch
from conftest import torch

import ember

EF, TF = ember.nn.functional, torch.nn.functional


def randn(*shape, seed=0, grad=True, dtype=None):
    t = torch.randn(*shape, dtype=dtype or torch.float64, generator=torch.Generator().manual_seed(seed))
    return t.requires_grad_(grad)


def check(fe, ft, *inputs, kw=None, n_out=None):
    """fe/ft on the same inputs: values, then the gradients of every input that requires them."""
    kw = kw or {}
    # fresh leaves, so gradients of earlier calls on the same tensors do not add up
    inputs = [t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t
              for t in inputs]
    te = [from_torch(t) if isinstance(t, torch.Tensor) else t for t in inputs]
    kw_e = {k: from_torch(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    rt, re_ = ft(*inputs, **kw), fe(*te, **kw_e)
    if n_out is not None:
        for a, b in zip(re_[1:], rt[1:]):
            close(a, b)
        rt, re_ = rt[0], re_[0]
    close(re_, rt)
    if not rt.requires_grad:
        return
    w = torch.arange(rt.numel(), dtype=rt.dtype).reshape(rt.shape) / 7
    (rt * w).sum().backward()
    (re_ * from_torch(w)).sum().backward()
    for a, b in zip(te, inputs):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            close(a.grad, b.grad)


# ---- conv_transpose3d and ConvTranspose3d ------------------------------------------------------
@pytest.mark.parametrize(
    "stride,padding,out_pad,groups,dilation",
    [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), ((1, 2, 3), (0, 1, 2), (0, 1, 0), 2, 1), (2, 0, 0, 1, 2),
     (1, (1, 1, 0), 0, 1, 1)],
)
def test_conv_transpose3d(stride, padding, out_pad, groups, dilation):
    x, w, b = randn(2, 4, 3, 4, 3), randn(4, 3, 2, 3, 2, seed=1), randn(3 * groups, seed=2)
    kw = dict(stride=stride, padding=padding, output_padding=out_pad, groups=groups, dilation=dilation)
    check(EF.conv_transpose3d, TF.conv_transpose3d, x, w, b, kw=kw)
    check(ember.conv_transpose3d, torch.conv_transpose3d, randn(4, 2, 3, 2), randn(4, 3, 2, 3, 2, seed=1), None,
          kw=kw)


def test_conv_transpose3d_module_and_lazy():
    torch.manual_seed(0)
    ember.manual_seed(0)
    tm = torch.nn.ConvTranspose3d(2, 4, (2, 3, 1), stride=2, padding=1, output_padding=1, groups=2, bias=False)
    em = ember.nn.ConvTranspose3d(2, 4, (2, 3, 1), stride=2, padding=1, output_padding=1, groups=2, bias=False)
    assert repr(em) == repr(tm)
    em.weight.data = from_torch(tm.weight.detach())
    x = randn(1, 2, 3, 3, 3, grad=False, dtype=torch.float32)
    close(em(from_torch(x)), tm(x).detach())
    close(em(from_torch(x), output_size=[5, 6, 4]), tm(x, output_size=[5, 6, 4]).detach())
    lazy = ember.nn.LazyConvTranspose3d(5, 2)
    assert lazy(ember.randn(1, 3, 2, 2, 2)).shape == (1, 5, 3, 3, 3)
    assert type(lazy).__name__ == "ConvTranspose3d"
    assert repr(lazy) == repr(torch.nn.ConvTranspose3d(3, 5, 2))


def test_conv_transpose3d_errors():
    with pytest.raises(RuntimeError):
        EF.conv_transpose3d(ember.randn(2, 3, 4), ember.randn(3, 2, 1, 1, 1))
    with pytest.raises(RuntimeError):
        EF.conv_transpose3d(ember.randn(1, 3, 2, 2, 2), ember.randn(4, 2, 1, 1, 1))
    with pytest.raises(RuntimeError):
        torch.conv_transpose3d(torch.randn(1, 3, 2, 2, 2), torch.randn(4, 2, 1, 1, 1))


def test_conv_tbc():
    x, w, b = randn(7, 2, 3), randn(3, 3, 5, seed=1), randn(5, seed=2)
    for pad in (0, 1, 2):
        check(EF.conv_tbc, TF.conv_tbc, x, w, b, pad)
        check(ember.conv_tbc, torch.conv_tbc, x, w, b, pad)
    for bad in [(randn(2, 3), w, b), (x, randn(3, 4, 5), b), (x, w, randn(4))]:
        with pytest.raises(RuntimeError):
            torch.conv_tbc(*bad)
        with pytest.raises(RuntimeError):
            ember.conv_tbc(*[from_torch(t) for t in bad])


# ---- affine_grid and grid_sample ---------------------------------------------------------------
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners):
    theta = randn(2, 2, 3)
    check(EF.affine_grid, TF.affine_grid, theta, [2, 3, 4, 5], kw=dict(align_corners=align_corners))
    theta3 = randn(2, 3, 4, seed=3)
    check(EF.affine_grid, TF.affine_grid, theta3, [2, 1, 3, 2, 4], kw=dict(align_corners=align_corners))


def test_affine_grid_errors():
    for theta, size, exc in [
        (randn(2, 2, 2), [2, 3, 4, 5], ValueError),
        (randn(2, 2, 3), [2, 3, 4], NotImplementedError),
        (randn(2, 2, 3), [2, 3, 0, 5], ValueError),
    ]:
        with pytest.raises(exc):
            TF.affine_grid(theta, size, align_corners=False)
        with pytest.raises(exc):
            EF.affine_grid(from_torch(theta), size, align_corners=False)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(mode, padding_mode, align_corners):
    x = randn(2, 3, 4, 5)
    # points inside, on the border and well outside the input; no ties for nearest
    grid = (randn(2, 3, 6, 2, seed=4, grad=False) * 0.9).requires_grad_(mode == "bilinear")
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check(EF.grid_sample, TF.grid_sample, x, grid, kw=kw)
    x32, g32 = randn(1, 2, 3, 3, dtype=torch.float32), randn(1, 2, 2, 2, seed=5, dtype=torch.float32, grad=False)
    check(EF.grid_sample, TF.grid_sample, x32, (g32 * 0.7).requires_grad_(mode == "bilinear"), kw=kw)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d(mode, padding_mode, align_corners):
    x = randn(2, 3, 4, 5, 6)
    grid = (randn(2, 3, 2, 4, 3, seed=4, grad=False) * 0.9).requires_grad_(mode == "bilinear")
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check(EF.grid_sample, TF.grid_sample, x, grid, kw=kw)
    enum = (["bilinear", "nearest"].index(mode), ["zeros", "border", "reflection"].index(padding_mode),
            align_corners)
    check(ember.grid_sampler_3d, torch.grid_sampler_3d, x, grid, *enum)
    check(ember.grid_sampler, torch.grid_sampler, x, grid, *enum)
    grid2 = randn(1, 2, 2, 2, seed=5, grad=False).requires_grad_(mode == "bilinear")
    check(ember.grid_sampler_2d, torch.grid_sampler_2d, randn(1, 2, 3, 4), grid2, *enum)


def _second_derivatives(lib, f, x, grid, args):
    """grad and grad of grad (weighted sums) of f(x, grid, *args) in x and grid."""
    y = f(x, grid, *args)
    w = lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape) / 7 - 1
    gx, gg = lib.autograd.grad((y * w).sum(), (x, grid), create_graph=True)
    loss = (gx * gx.detach().sign()).sum() + (gg * lib.cos(gg.detach())).sum()
    if not loss.requires_grad:  # nearest: the gradients do not depend on x or grid
        return gx, gg, None, None
    return (gx, gg, *lib.autograd.grad(loss, (x, grid), allow_unused=True))


@pytest.mark.parametrize("dims,mode", [(2, 0), (2, 1), (2, 2), (3, 0), (3, 1)])
@pytest.mark.parametrize("padding_mode", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_second_derivative(dims, mode, padding_mode, align_corners):
    """The gradient taken with create_graph=True differentiates again as
    PyTorch's does (GridSampler*BackwardBackward0), in grad_output, input and grid."""
    x = randn(2, 2, 3, 4, 5) if dims == 3 else randn(2, 3, 4, 5)
    grid = randn(2, 2, 3, 2, 3, seed=4, grad=False) if dims == 3 else randn(2, 3, 4, 2, seed=4, grad=False)
    grid = (grid * 0.8).requires_grad_()  # inside, on the border and outside
    tf, ef = (torch.grid_sampler_2d, ember.grid_sampler_2d) if dims == 2 else (torch.grid_sampler_3d,
                                                                               ember.grid_sampler_3d)
    args = (mode, padding_mode, align_corners)
    expected = _second_derivatives(torch, tf, x, grid, args)
    got = _second_derivatives(ember, ef, from_torch(x.detach()).requires_grad_(),
                              from_torch(grid.detach()).requires_grad_(), args)
    for g, e in zip(got, expected):
        if e is None or g is None:  # nearest: the grid gradient is constant zero
            assert e is None or not bool(e.any())
            assert g is None or not bool(g.any())
            continue
        close(g, e)
    assert ember.autograd.gradgradcheck(lambda a, b: ef(a, b, *args), (
        from_torch(x.detach()).requires_grad_(), from_torch(grid.detach()).requires_grad_()))


def test_grid_sample_errors():
    x, g = randn(1, 2, 3, 3), randn(1, 2, 2, 2)
    for args, kw in [((x, g), dict(mode="cubic")), ((x, g), dict(padding_mode="wrap")),
                     ((x, randn(1, 2, 2, 3)), {}), ((x, randn(2, 2, 2, 2)), {}), ((randn(2, 3), g), {})]:
        with pytest.raises(Exception) as et:
            TF.grid_sample(*args, align_corners=False, **kw)
        with pytest.raises(et.type):
            EF.grid_sample(*[from_torch(t) for t in args], align_corners=False, **kw)


# ---- the top-level functional forms ------------------------------------------------------------
def test_top_level_losses_take_enum_reductions():
    a, b, t = randn(4, 5), randn(4, 5, seed=1), torch.tensor([1.0, -1, 1, -1], dtype=torch.float64)
    for red in (0, 1, 2):
        check(ember.kl_div, torch.kl_div, a, b.detach().softmax(1), red)
        check(ember.hinge_embedding_loss, torch.hinge_embedding_loss, a, torch.sign(b.detach()), 0.5, red)
        check(ember.margin_ranking_loss, torch.margin_ranking_loss, a[:, 0], b[:, 0], t, 0.1, red)
        check(ember.cosine_embedding_loss, torch.cosine_embedding_loss, a, b, t, 0.2, red)
        check(ember.triplet_margin_loss, torch.triplet_margin_loss, a, b, randn(4, 5, seed=2), 1.0, 2.0, 1e-6,
              False, red)
        check(ember.poisson_nll_loss, torch.poisson_nll_loss, a, b.detach().abs(), True, False, 1e-8, red)
    with pytest.raises(ValueError):
        ember.kl_div(from_torch(a), from_torch(b), 3)


def test_top_level_dropouts():
    x = torch.ones(3, 4, 5, dtype=torch.float64)
    for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        for train in (True, False):
            torch.manual_seed(3)
            ember.manual_seed(3)
            close(getattr(ember, name)(from_torch(x), 0.4, train), getattr(torch, name)(x, 0.4, train))
            torch.manual_seed(3)
            ember.manual_seed(3)
            xe, xt = from_torch(x), x.clone()
            getattr(ember, name + "_")(xe, 0.4, train)
            getattr(torch, name + "_")(xt, 0.4, train)
            close(xe, xt)
    for train in (True, False):
        torch.manual_seed(5)
        ember.manual_seed(5)
        oe, me = ember.native_dropout(from_torch(x), 0.3, train)
        ot, mt = torch.native_dropout(x, 0.3, train)
        close(oe, ot)
        close(me, mt)


def test_top_level_layers():
    x = randn(2, 4, 6)
    check(ember.max_pool1d, torch.max_pool1d, x, 2)
    check(ember.max_pool1d, torch.max_pool1d, x, 3, 2, 1)
    check(ember.max_pool1d_with_indices, torch.max_pool1d_with_indices, x, 2, n_out=2)
    check(ember.avg_pool1d, torch.avg_pool1d, x, 3, [], 1, False, False)
    check(ember.adaptive_avg_pool1d, torch.adaptive_avg_pool1d, x, 4)
    check(ember.adaptive_max_pool1d, torch.adaptive_max_pool1d, x, 4, n_out=2)
    x3 = randn(1, 2, 4, 4, 4)
    check(ember.max_pool3d, torch.max_pool3d, x3, 2)
    check(ember.conv3d, torch.conv3d, x3, randn(3, 2, 2, 2, 2, seed=1), None, 1, 1)
    check(ember.conv_transpose1d, torch.conv_transpose1d, x, randn(4, 3, 2, seed=1), None, 2)
    check(ember.prelu, torch.prelu, x, randn(4, seed=1))
    check(ember.hardshrink, torch.hardshrink, x, 0.3)
    check(lambda t: t.hardshrink(0.7), lambda t: t.hardshrink(0.7), x)
    check(lambda t, w: t.prelu(w), lambda t, w: t.prelu(w), x, randn(1, seed=2))
    check(ember.rrelu, torch.rrelu, x)
    check(ember.bilinear, torch.bilinear, randn(3, 2), randn(3, 4, seed=1), randn(5, 2, 4, seed=2), randn(5))
    check(ember.cosine_similarity, torch.cosine_similarity, randn(3, 4), randn(3, 4, seed=1))
    check(ember.pairwise_distance, torch.pairwise_distance, randn(3, 4), randn(3, 4, seed=1), 1.5, 1e-6, True)
    check(ember.pdist, torch.pdist, randn(4, 3), 3)
    check(ember.pixel_shuffle, torch.pixel_shuffle, randn(1, 8, 2, 3), 2)
    check(ember.pixel_unshuffle, torch.pixel_unshuffle, randn(1, 2, 4, 6), 2)
    check(ember.channel_shuffle, torch.channel_shuffle, randn(1, 6, 2, 2), 3)
    check(ember.native_channel_shuffle, torch.native_channel_shuffle, randn(1, 6, 2, 2, grad=False), 2)
    check(ember.rms_norm, torch.rms_norm, x, [6], randn(6, seed=3), 1e-5)
    check(ember.instance_norm, torch.instance_norm, x, randn(4, seed=1), randn(4, seed=2), None, None, True,
          0.1, 1e-5, False)


def test_top_level_norms():
    x = randn(3, 4)
    check(ember.frobenius_norm, torch.frobenius_norm, x, [0, 1])
    check(ember.frobenius_norm, torch.frobenius_norm, randn(2, 3, 4), [2], True)
    check(ember.nuclear_norm, torch.nuclear_norm, x)
    check(ember.nuclear_norm, torch.nuclear_norm, randn(2, 3, 4), [1, 2], True)
    # PyTorch has native_norm for sparse tensors only
    with pytest.raises(NotImplementedError):
        torch.native_norm(x)
    with pytest.raises(NotImplementedError):
        ember.native_norm(from_torch(x))
    for dim in (0, 1, -1):
        check(ember.norm_except_dim, torch.norm_except_dim, x, 2, dim)
    check(ember.norm_except_dim, torch.norm_except_dim, randn(2, 3, 4), 3, 1)


def test_top_level_cells():
    x, h, c = randn(3, 4), randn(3, 5, seed=1), randn(3, 5, seed=2)
    for name, gates in (("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("gru_cell", 3)):
        w_ih, w_hh, b = randn(5 * gates, 4, seed=3), randn(5 * gates, 5, seed=4), randn(5 * gates, seed=5)
        check(getattr(ember, name), getattr(torch, name), x, h, w_ih, w_hh, b, b)
        check(getattr(ember, name), getattr(torch, name), x, h, w_ih, w_hh)
    w_ih, w_hh, b = randn(20, 4, seed=3), randn(20, 5, seed=4), randn(20, seed=5)
    te = [from_torch(t) for t in (x, h, c, w_ih, w_hh, b)]
    he, ce = ember.lstm_cell(te[0], (te[1], te[2]), te[3], te[4], te[5], te[5])
    ht, ct = torch.lstm_cell(x, (h, c), w_ih, w_hh, b, b)
    close(he, ht)
    close(ce, ct)
    (ht.sum() + ct.pow(2).sum()).backward()
    (he.sum() + ce.pow(2).sum()).backward()
    for a, b_ in zip(te, (x, h, c, w_ih, w_hh)):
        close(a.grad, b_.grad)


# ---- ctc_loss and CTCLoss ----------------------------------------------------------------------
def _ctc_inputs(seed, T=6, N=3, C=5, S=3):
    g = torch.Generator().manual_seed(seed)
    lp = torch.randn(T, N, C, dtype=torch.float64, generator=g).log_softmax(2).detach().requires_grad_()
    return lp, torch.randint(1, C, (N, S), generator=g)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss(reduction, zero_infinity):
    lp, targets = _ctc_inputs(0)
    kw = dict(reduction=reduction, zero_infinity=zero_infinity)
    check(EF.ctc_loss, TF.ctc_loss, lp, targets, [6, 5, 4], [3, 2, 1], kw=kw)
    # concatenated 1-d targets, tensor lengths, a repeated label and an empty target
    flat = torch.tensor([2, 2, 3, 1])
    lengths = (torch.tensor([6, 6, 3]), torch.tensor([2, 2, 0]))
    check(EF.ctc_loss, TF.ctc_loss, lp, flat, *lengths, kw=kw)
    check(ember.ctc_loss, torch.ctc_loss, lp, targets, [6, 5, 4], [3, 2, 1], 0, {"none": 0, "mean": 1,
          "sum": 2}[reduction], zero_infinity)


def test_ctc_loss_impossible_and_blank():
    lp, _ = _ctc_inputs(1, T=2, N=1)
    targets = torch.tensor([[1, 1, 1]])
    # an impossible alignment: inf, or 0 and a zero gradient with zero_infinity
    close(EF.ctc_loss(from_torch(lp), from_torch(targets), [2], [3], reduction="none"),
          TF.ctc_loss(lp, targets, [2], [3], reduction="none").detach())
    check(EF.ctc_loss, TF.ctc_loss, lp, targets, [2], [3], kw=dict(reduction="none", zero_infinity=True))
    lp, targets = _ctc_inputs(2)
    check(EF.ctc_loss, TF.ctc_loss, lp, targets.clamp(max=3), [6, 6, 6], [3, 3, 3], kw=dict(blank=4))
    module = ember.nn.CTCLoss(blank=4, reduction="sum")
    assert repr(module) == repr(torch.nn.CTCLoss(blank=4, reduction="sum"))
    close(module(from_torch(lp), from_torch(targets.clamp(max=3)), [6, 6, 6], [3, 3, 3]),
          torch.nn.CTCLoss(blank=4, reduction="sum")(lp, targets.clamp(max=3), [6, 6, 6], [3, 3, 3]).detach())
    with pytest.raises(RuntimeError):
        EF.ctc_loss(from_torch(lp), from_torch(targets), [7, 6, 6], [3, 3, 3])
    with pytest.raises(ValueError):
        EF.ctc_loss(from_torch(lp), from_torch(targets), [6, 6, 6], [3, 3, 3], reduction="avg")


# ---- fractional max pooling --------------------------------------------------------------------
@pytest.mark.parametrize("kernel,out", [(2, (4, 5)), ((3, 2), (2, 3)), (1, (7, 8)), (2, (1, 1))])
def test_fractional_max_pool2d(kernel, out):
    x = randn(2, 3, 7, 8)
    samples = torch.rand(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    kw = dict(output_size=out, return_indices=True, _random_samples=samples)
    check(EF.fractional_max_pool2d, TF.fractional_max_pool2d, x, kernel, kw=kw, n_out=2)
    kw = dict(output_size=out, _random_samples=samples[:1])
    check(EF.fractional_max_pool2d, TF.fractional_max_pool2d, randn(3, 7, 8, seed=2), kernel, kw=kw)


def test_fractional_max_pool_draws_as_pytorch():
    x = randn(2, 3, 9, 9, grad=False, dtype=torch.float32)
    for ratio in ((0.5, 0.5), (0.7, 0.4)):
        torch.manual_seed(4)
        ember.manual_seed(4)
        close(EF.fractional_max_pool2d(from_torch(x), 3, output_ratio=ratio),
              TF.fractional_max_pool2d(x, 3, output_ratio=ratio))
    torch.manual_seed(5)
    ember.manual_seed(5)
    tm, em = torch.nn.FractionalMaxPool2d(2, output_ratio=0.5), ember.nn.FractionalMaxPool2d(2, output_ratio=0.5)
    assert repr(em) == repr(tm)
    close(em(from_torch(x)), tm(x))
    x3 = randn(1, 2, 6, 7, 8, dtype=torch.float32)
    samples = torch.rand(1, 2, 3, generator=torch.Generator().manual_seed(6))
    kw = dict(output_size=(3, 4, 5), return_indices=True, _random_samples=samples)
    check(EF.fractional_max_pool3d, TF.fractional_max_pool3d, x3, 2, kw=kw, n_out=2)
    torch.manual_seed(7)
    ember.manual_seed(7)
    close(ember.nn.FractionalMaxPool3d(2, output_size=3)(from_torch(x3.detach())),
          torch.nn.FractionalMaxPool3d(2, output_size=3)(x3.detach()))


def test_fractional_max_pool_errors():
    for kw in (dict(), dict(output_size=2, output_ratio=0.5), dict(output_ratio=1.5)):
        with pytest.raises(ValueError):
            torch.nn.FractionalMaxPool2d(2, **kw)
        with pytest.raises(ValueError):
            ember.nn.FractionalMaxPool2d(2, **kw)
    with pytest.raises(RuntimeError):
        TF.fractional_max_pool2d(torch.randn(1, 1, 4, 4), 3, output_size=3)
    with pytest.raises(RuntimeError):
        EF.fractional_max_pool2d(ember.randn(1, 1, 4, 4), 3, output_size=3)


# ---- CrossMapLRN2d and AdaptiveLogSoftmaxWithLoss ----------------------------------------------
@pytest.mark.parametrize("channels", [1, 2, 3, 6])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_cross_map_lrn2d(channels, size):
    x = randn(2, channels, 3, 3)
    tm = torch.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)
    em = ember.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)
    assert repr(em) == repr(tm)
    close(em(from_torch(x)), tm(x).detach())
    # PyTorch's own backward does not pass gradcheck; Ember's gradient is that of the forward
    xe = from_torch(x)
    assert ember.autograd.gradcheck(em, (xe,))
    with pytest.raises(ValueError):
        em(ember.randn(2, 3, 4))


def test_adaptive_log_softmax_with_loss():
    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10], div_value=2.0, head_bias=True).double()
    em = ember.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10], div_value=2.0, head_bias=True).double()
    assert repr(em) == repr(tm)
    em.load_state_dict({k: from_torch(v) for k, v in tm.state_dict().items()})
    x, target = randn(7, 16, grad=False), torch.tensor([0, 4, 5, 9, 10, 19, 3])
    rt, re_ = tm(x, target), em(from_torch(x), from_torch(target))
    close(re_.output, rt.output.detach())
    close(re_.loss, rt.loss.detach())
    rt.loss.backward()
    re_.loss.backward()
    for pe, pt in zip(em.parameters(), tm.parameters()):
        close(pe.grad, pt.grad)
    close(em.log_prob(from_torch(x)), tm.log_prob(x).detach())
    close(em.predict(from_torch(x)), tm.predict(x))
    one = em(from_torch(x[0]), from_torch(target[0]))
    close(one.output, tm(x[0], target[0]).output.detach())
    for bad in (torch.tensor([0, 20, 1, 1, 1, 1, 1]), torch.tensor([[1]])):
        with pytest.raises(RuntimeError):
            tm(x, bad)
        with pytest.raises(RuntimeError):
            em(from_torch(x), from_torch(bad))
    for cutoffs in ([], [5, 5], [10, 5], [0, 5], [5, 20]):
        with pytest.raises(ValueError):
            torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs)
        with pytest.raises(ValueError):
            ember.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs)


# ---- SparseAdam --------------------------------------------------------------------------------
@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_on_embedding_rows(maximize):
    """Ember's dense embedding gradient against PyTorch's sparse one: the same lazy updates."""
    torch.manual_seed(0)
    tm = torch.nn.Embedding(10, 4, sparse=True)
    em = ember.nn.Embedding(10, 4)
    em.weight.data = from_torch(tm.weight.detach())
    to = torch.optim.SparseAdam(tm.parameters(), lr=0.1, betas=(0.8, 0.99), maximize=maximize)
    eo = ember.optim.SparseAdam(em.parameters(), lr=0.1, betas=(0.8, 0.99), maximize=maximize)
    assert repr(eo) == repr(to)
    for rows in ([1, 2, 2, 5], [3, 1], [9, 0, 1], [5]):
        to.zero_grad()
        tm(torch.tensor(rows)).pow(2).sum().backward()
        to.step()
        eo.zero_grad()
        em(ember.tensor(rows)).pow(2).sum().backward()
        eo.step()
        close(em.weight.detach(), tm.weight.detach())
    assert eo.state_dict()["param_groups"] == to.state_dict()["param_groups"]
    for kw in (dict(lr=0.0), dict(eps=0.0), dict(betas=(1.0, 0.9)), dict(betas=(0.9, -0.1))):
        with pytest.raises(ValueError):
            torch.optim.SparseAdam(tm.parameters(), **kw)
        with pytest.raises(ValueError):
            ember.optim.SparseAdam(em.parameters(), **kw)


@pytest.mark.parametrize("name,module", [("lstm", "LSTM"), ("gru", "GRU"), ("rnn_tanh", "RNN"), ("rnn_relu", "RNN")])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_top_level_recurrent_layers(name, module, bidirectional, batch_first):
    torch.manual_seed(0)
    kw = dict(nonlinearity="relu") if name == "rnn_relu" else {}
    m = getattr(torch.nn, module)(3, 4, 2, bidirectional=bidirectional, batch_first=batch_first, **kw).double()
    params = [p.detach().clone().requires_grad_() for p in m._flat_weights]
    x = randn(*((2, 5, 3) if batch_first else (5, 2, 3)))
    h = randn(4 if bidirectional else 2, 2, 4, seed=1)
    hx = (h, randn(*h.shape, seed=2)) if name == "lstm" else h
    rt = getattr(torch, name)(x, hx, params, True, 2, 0.0, False, bidirectional, batch_first)
    pe = [from_torch(p) for p in params]
    xe = from_torch(x)
    hxe = tuple(from_torch(t) for t in hx) if name == "lstm" else from_torch(hx)
    re_ = getattr(ember, name)(xe, hxe, pe, True, 2, 0.0, False, bidirectional, batch_first)
    assert len(re_) == len(rt)
    for a, b in zip(re_, rt):
        close(a, b.detach())
    sum(t.sum() for t in rt).backward()
    sum(t.sum() for t in re_).backward()
    close(xe.grad, x.grad)
    for a, b in zip(pe, params):
        close(a.grad, b.grad)
    with pytest.raises(IndexError):
        torch.gru(torch.randn(5, 3), torch.randn(1, 4), [p.float() for p in params[:2]], False, 1, 0.0, False,
                  False, False)
    with pytest.raises(IndexError):
        ember.gru(ember.randn(5, 3), ember.randn(1, 4), [p.float() for p in pe[:2]], False, 1, 0.0, False, False,
                  False)


# ---- interpolate: trilinear and 1-d / 3-d area -------------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [dict(size=(4, 7, 8)), dict(scale_factor=(1.5, 0.5, 2.0)), dict(size=(2, 9, 3), align_corners=True),
     dict(scale_factor=2.3), dict(scale_factor=0.7, recompute_scale_factor=True)],
)
def test_interpolate_trilinear(kw):
    x = randn(2, 3, 3, 5, 6)
    check(EF.interpolate, TF.interpolate, x, kw=dict(mode="trilinear", **kw))
    x32 = randn(1, 2, 3, 4, 5, dtype=torch.float32).transpose(3, 4)
    te = EF.interpolate(from_torch(x32), mode="trilinear", **kw)
    tt = TF.interpolate(x32, mode="trilinear", **kw)
    close(te, tt.detach())
    assert te.stride() == tt.stride()


def test_interpolate_area_1d_3d():
    check(EF.interpolate, TF.interpolate, randn(2, 3, 4, 6, 5), kw=dict(size=(2, 3, 5), mode="area"))
    check(EF.interpolate, TF.interpolate, randn(2, 3, 7), kw=dict(size=3, mode="area"))
    check(EF.interpolate, TF.interpolate, randn(2, 3, 7), kw=dict(scale_factor=0.5, mode="area"))
