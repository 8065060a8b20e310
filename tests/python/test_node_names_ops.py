"""Operators recorded as the one autograd node PyTorch records (rsub,
diag/diag_embed/diagonal_copy, linalg.cross, pixel_shuffle, cdist, dist,
renorm, rot90, block_diag, aminmax, cummax/cummin, logcumsumexp, the *_copy
view forms): node names, values and gradients against PyTorch."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _data(shape, seed, dtype="float64"):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _pair(lib, arrays):
    return [lib.tensor(a).requires_grad_() for a in arrays]


CASES = {
    "rsub_number": ([(3, 4)], lambda L, x: 1 - x, "RsubBackward1"),
    "rsub_tensor": ([(3, 4), (4,)], lambda L, x, y: L.rsub(x, y, alpha=2), "RsubBackward0"),
    "rsub_scalar_fn": ([(3, 4)], lambda L, x: L.rsub(x, 2.5), "RsubBackward1"),
    "diag_matrix": ([(3, 4)], lambda L, x: L.diag(x, 1), "DiagonalBackward0_copy"),
    "diag_vector": ([(3,)], lambda L, x: L.diag(x, -1), "DiagEmbedBackward0"),
    "diag_embed_dims": ([(2, 3)], lambda L, x: L.diag_embed(x, 1, 0, 2), "DiagEmbedBackward0"),
    "cross": ([(4, 3), (1, 3)], lambda L, x, y: L.linalg.cross(x, y), "LinalgCrossBackward0"),
    "cross_dim": ([(3, 5), (3, 5)], lambda L, x, y: L.cross(x, y, dim=0), "LinalgCrossBackward0"),
    "pixel_shuffle": ([(2, 8, 3, 3)], lambda L, x: L.nn.functional.pixel_shuffle(x, 2), "PixelShuffleBackward0"),
    "pixel_unshuffle": ([(1, 2, 4, 6)], lambda L, x: L.pixel_unshuffle(x, 2), "PixelUnshuffleBackward0"),
    "cdist_small": ([(3, 2), (4, 2)], lambda L, x, y: L.cdist(x, y), "CdistBackward0"),
    "cdist_p1": ([(30, 2), (4, 2)], lambda L, x, y: L.cdist(x, y, 1.0), "CdistBackward0"),
    "cdist_mm": ([(30, 5), (27, 5)], lambda L, x, y: L.cdist(x, y), "ViewBackward0"),
    "cdist_mm_batched": (
        [(2, 3, 8, 2), (3, 6, 2)],
        lambda L, x, y: L.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
        "ViewBackward0",
    ),
    "dist": ([(3, 4), (3, 4)], lambda L, x, y: L.dist(x, y, 3), "DistBackward0"),
    "renorm": ([(3, 4)], lambda L, x: x.renorm(2, 0, 1.0), "RenormBackward0"),
    "rot90": ([(3, 4)], lambda L, x: x.rot90(1, (0, 1)), "Rot90Backward0"),
    "rot90_k2": ([(2, 3, 4)], lambda L, x: L.rot90(x, 2, (2, 0)), "Rot90Backward0"),
    "block_diag": ([(2, 3), (2,)], lambda L, x, y: L.block_diag(x, y), "BlockDiagBackward0"),
    "aminmax": ([(3, 4)], lambda L, x: sum(L.aminmax(x)), "AddBackward0"),
    "aminmax_dim": ([(3, 4)], lambda L, x: L.aminmax(x, dim=1, keepdim=True).max, "AminmaxBackward0"),
    "cummax": ([(3, 4)], lambda L, x: x.cummax(1).values, "CummaxBackward0"),
    "cummin": ([(3, 4)], lambda L, x: L.cummin(x, 0)[0], "CumminBackward0"),
    "logcumsumexp": ([(3, 5)], lambda L, x: x.logcumsumexp(1), "LogcumsumexpBackward0"),
    "t_copy": ([(3, 4)], lambda L, x: L.t_copy(x), "TBackward0_copy"),
    "permute_copy": ([(3, 4)], lambda L, x: L.permute_copy(x, (1, 0)), "PermuteBackward0_copy"),
    "narrow_copy": ([(3, 4)], lambda L, x: L.narrow_copy(x, 1, 1, 2), "NarrowCopyBackward0"),
    "squeeze_copy": ([(3, 1)], lambda L, x: L.squeeze_copy(x), "SqueezeBackward0_copy"),
    "split_copy": ([(4, 3)], lambda L, x: L.split_copy(x, 2)[1], "SplitBackward0_copy"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_values_and_gradients(name):
    _check_node(CASES[name], seed=7, strides=True)


def _check_node(case, seed, strides=False):
    """The case's node name, values (and strides) and gradients against PyTorch's."""
    shapes, fn, node = case
    arrays = [_data(s, i + seed) for i, s in enumerate(shapes)]
    ts, es = _pair(torch, arrays), _pair(ember, arrays)
    t, e = fn(torch, *ts), fn(ember, *es)
    assert type(t.grad_fn).__name__ == type(e.grad_fn).__name__ == node
    assert tuple(e.shape) == tuple(t.shape)
    if strides:
        assert e.stride() == t.stride()
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = _data(tuple(t.shape), 99)
    t.backward(torch.tensor(g))
    e.backward(ember.tensor(g))
    for a, b in zip(ts, es):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_ties_take_pytorch_gradients():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    for fn in (lambda L, v: L.aminmax(v, dim=1).min, lambda L, v: L.aminmax(v).max, lambda L, v: v.cummax(1).values):
        t, e = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
        fn(torch, t).sum().backward()
        fn(ember, e).sum().backward()
        np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("dtype", ["complex128"])
def test_complex_nodes(dtype):
    cases = [
        (lambda L, x, y: 1j - x, "RsubBackward1"),
        (lambda L, x, y: L.linalg.cross(x, y), "LinalgCrossBackward0"),
        (lambda L, x, y: L.diag_embed(x), "DiagEmbedBackward0"),
        (lambda L, x, y: L.rot90(x), "Rot90Backward0"),
    ]
    arrays = [_data((4, 3), 3, dtype), _data((4, 3), 4, dtype)]
    for fn, node in cases:
        ts, es = _pair(torch, arrays), _pair(ember, arrays)
        t, e = fn(torch, *ts), fn(ember, *es)
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == node
        t.abs().sum().backward()
        e.abs().sum().backward()
        for a, b in zip(ts, es):
            if a.grad is not None:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_double_backward_through_recorded_composites():
    x = ember.tensor(_data((3, 4), 1), requires_grad=True)
    for fn in (lambda v: v.renorm(2, 0, 1.0), lambda v: v.logcumsumexp(1)):
        (g,) = ember.autograd.grad(fn(x).pow(2).sum(), x, create_graph=True)
        (gg,) = ember.autograd.grad(g.sum(), x)
        assert gg.shape == x.shape


def test_cdist_matrix_product_form_bits():
    a, b = _data((40, 6), 5, "float32"), _data((30, 6), 6, "float32")
    t = torch.cdist(torch.tensor(a), torch.tensor(b))
    e = ember.cdist(ember.tensor(a), ember.tensor(b))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    with pytest.raises(ValueError, match="bad is not a valid value for compute_mode"):
        ember.cdist(ember.tensor(a), ember.tensor(b), compute_mode="bad")


def test_add_sub_complex_alpha_gradients():
    a, b = _data((3,), 1, "complex128"), _data((3,), 2, "complex128")
    for op in ("add", "sub"):
        ts, es = _pair(torch, [a, b]), _pair(ember, [a, b])
        getattr(torch, op)(*ts, alpha=1 + 2j).abs().sum().backward()
        getattr(ember, op)(*es, alpha=1 + 2j).abs().sum().backward()
        np.testing.assert_allclose(es[1].grad.numpy(), ts[1].grad.numpy(), rtol=1e-12)


def test_operators_without_formulas_record_pytorchs_not_implemented_node():
    for lib in (torch, ember):
        x = lib.tensor([1.5, -2.0, 3.0], requires_grad=True)
        for y, op in ((x // 2, "floor_divide"), (lib.remainder(2, x), "remainder")):
            assert type(y.grad_fn).__name__ == "NotImplemented"
            assert y.grad_fn.name() == "torch::autograd::NotImplemented"
            with pytest.raises(RuntimeError, match=f"derivative for aten::{op} is not implemented"):
                y.sum().backward()


def _f(lib):
    return lib.nn.functional


NN_CASES = {
    "softshrink": ([(3, 4)], lambda L, x: _f(L).softshrink(x, 0.3), "SoftshrinkBackward0"),
    "hardshrink": ([(3, 4)], lambda L, x: _f(L).hardshrink(x, 0.3), "HardshrinkBackward0"),
    "prelu": ([(2, 3, 4), (3,)], lambda L, x, w: _f(L).prelu(x, w), "PreluKernelBackward0"),
    "rrelu_eval": ([(3, 4)], lambda L, x: _f(L).rrelu(x), "RreluWithNoiseBackward0"),
    "channel_shuffle": ([(2, 4, 3)], lambda L, x: _f(L).channel_shuffle(x, 2), "ChannelShuffleBackward0"),
    "pdist": ([(4, 3)], lambda L, x: _f(L).pdist(x), "PdistBackward0"),
    "affine_grid": (
        [(2, 2, 3)],
        lambda L, t: _f(L).affine_grid(t, (2, 1, 3, 4), align_corners=False),
        "AffineGridGeneratorBackward0",
    ),
    "soft_margin": (
        [(3, 4), (3, 4)],
        lambda L, x, y: _f(L).soft_margin_loss(x, y.detach().sign()),
        "SoftMarginLossBackward0",
    ),
    "multi_margin": (
        [(3, 4)],
        lambda L, x: _f(L).multi_margin_loss(x, L.tensor([0, 3, 1]), p=2),
        "MultiMarginLossBackward0",
    ),
    "multilabel_margin": (
        [(2, 4)],
        lambda L, x: _f(L).multilabel_margin_loss(x, L.tensor([[3, 0, -1, 1], [1, 2, 0, 3]])),
        "MultilabelMarginLossBackward0",
    ),
    "max_pool3d": (
        [(2, 3, 5, 6, 7)],
        lambda L, x: _f(L).max_pool3d(x, 3, 2, 1, ceil_mode=True),
        "MaxPool3DWithIndicesBackward0",
    ),
    "max_pool3d_overlap": (
        [(1, 2, 4, 5, 6)],
        lambda L, x: _f(L).max_pool3d(x.round(), 3, 1, 1),
        "MaxPool3DWithIndicesBackward0",
    ),
    "max_unpool2d": (
        [(1, 2, 4, 4)],
        lambda L, x: _f(L).max_unpool2d(*_f(L).max_pool2d(x, 2, return_indices=True), 2),
        "MaxUnpool2DBackward0",
    ),
    "max_unpool3d": (
        [(1, 2, 4, 4, 4)],
        lambda L, x: _f(L).max_unpool3d(*_f(L).max_pool3d(x, 2, return_indices=True), 2),
        "MaxUnpool3DBackward0",
    ),
    "embedding_bag_sum": (
        [(10, 3), (7,)],
        lambda L, w, p: _f(L).embedding_bag(
            L.tensor([1, 4, 4, 9, 0, 2, 4]), w, L.tensor([0, 2, 2, 5]), mode="sum", per_sample_weights=p
        ),
        "EmbeddingBagBackward0",
    ),
    "embedding_bag_mean": (
        [(10, 3)],
        lambda L, w: _f(L).embedding_bag(
            L.tensor([1, 4, 4, 9, 0, 2, 4]),
            w,
            L.tensor([0, 2, 2, 5]),
            mode="mean",
            scale_grad_by_freq=True,
            padding_idx=9,
        ),
        "EmbeddingBagBackward0",
    ),
}


@pytest.mark.parametrize("name", sorted(NN_CASES))
def test_nn_node_values_and_gradients(name):
    _check_node(NN_CASES[name], seed=3)


def test_rrelu_training_gradient_uses_the_forward_noise():
    x = _data((4, 5), 8)
    results = []
    for lib in (torch, ember):
        lib.manual_seed(3)
        t = lib.tensor(x, requires_grad=True)
        y = _f(lib).rrelu(t, training=True)
        assert type(y.grad_fn).__name__ == "RreluWithNoiseBackward0"
        y.sum().backward()
        results.append((y.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])


def test_embedding_bag_weight_gradient_has_no_derivative():
    for lib in (torch, ember):
        w = lib.tensor(_data((10, 3), 1), requires_grad=True)
        out = _f(lib).embedding_bag(lib.tensor([1, 4, 4, 9]), w, lib.tensor([0, 2]), mode="mean")
        (g,) = lib.autograd.grad(out.pow(2).sum(), w, create_graph=True)
        assert type(g.grad_fn).__name__ == "EmbeddingBagBackwardBackward0"
        with pytest.raises(NotImplementedError, match="derivative for '_embedding_bag_backward' is not implemented"):
            lib.autograd.grad(g.sum(), w)


def test_unique_records_pytorchs_nodes_without_derivative():
    x = np.array([[3.0, 1.0], [3.0, 1.0], [0.0, 2.0]])
    calls = [
        (lambda L, t: t.unique(), "Unique2Backward0", "_unique2"),
        (lambda L, t: L.unique(t, return_counts=True)[0], "Unique2Backward0", "_unique2"),
        (lambda L, t: t.unique(dim=0), "UniqueDimBackward0", "unique_dim"),
        (lambda L, t: L.unique_consecutive(t), "UniqueConsecutiveBackward0", "unique_consecutive"),
        (lambda L, t: L.unique_consecutive(t, dim=1), "UniqueConsecutiveBackward0", "unique_consecutive"),
    ]
    for fn, node, op in calls:
        for lib in (torch, ember):
            t = lib.tensor(x, requires_grad=True)
            u = fn(lib, t)
            assert type(u.grad_fn).__name__ == node
            with pytest.raises(NotImplementedError, match=f"the derivative for '{op}' is not implemented"):
                u.sum().backward()
    counts = ember.unique(ember.tensor(x, requires_grad=True), return_counts=True)[1]
    assert counts.grad_fn is None and not counts.requires_grad


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("consecutive", [False, True])
def test_unique_along_a_dim(dim, consecutive):
    a = np.random.default_rng(5).integers(0, 2, (6, 3, 4))
    a[3] = a[1]
    a[:, :, 2] = a[:, :, 0]
    results = []
    for lib in (torch, ember):
        t = lib.tensor(a)
        f = lib.unique_consecutive if consecutive else lib.unique
        results.append([r.numpy() for r in f(t, dim=dim, return_inverse=True, return_counts=True)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


def test_more_composites_recorded_as_pytorchs_nodes():
    for lib in (torch, ember):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        assert type(lib.special.ndtr(x).grad_fn).__name__ == "MulBackward1"
        m = lib.nn.Bilinear(2, 3, 4)
        assert type(m(lib.ones(1, 2), lib.ones(1, 3)).grad_fn).__name__ == "AddBackward0"
        v, g = lib.ones(3, 4, requires_grad=True), lib.ones(3, 1, requires_grad=True)
        assert type(lib._weight_norm(v, g, 0).grad_fn).__name__ == "WeightNormInterfaceBackward0"
        assert type(lib._weight_norm(v, lib.ones(1, 4), 1).grad_fn).__name__ == "WeightNormInterfaceBackward0"
