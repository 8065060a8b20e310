"""Forward-mode AD against torch: tangent values and dtypes through many
operators (elementwise, broadcast, reductions, matrix products, views,
nn.functional), non-contiguous, empty and 0-dim tangents, dual levels and
their errors, views and in-place updates, custom Function jvp, forward-mode
jacobian and gradcheck(check_forward_ad=True)."""

from __future__ import annotations

import pytest
from conftest import torch

import ember


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


def same_error(f_e, f_t):
    got, want = err(f_e), err(f_t)
    assert want is not None, "torch did not raise"
    assert got == want


def tangent_of(lib, fn, primals, tangents):
    """fn's outputs' tangents (None where there is none) at duals built from
    (primal, tangent) pairs given as torch tensors."""
    fw = lib.autograd.forward_ad
    conv = (lambda t: t) if lib is torch else (lambda t: ember.from_numpy(t.numpy().copy()) if t.dim() else
                                                ember.tensor(t.item(), dtype=getattr(ember, str(t.dtype)[6:])))
    with fw.dual_level():
        duals = []
        for p, t in zip(primals, tangents):
            p_l = conv(p) if lib is not torch else p
            if t is None:
                duals.append(p_l)
                continue
            t_l = conv(t) if lib is not torch else t
            duals.append(fw.make_dual(p_l, t_l))
        out = fn(lib, *duals)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [fw.unpack_dual(o).tangent if isinstance(o, lib.Tensor) else None for o in outs]


def check(fn, primals, tangents, rtol=1e-10, atol=1e-12):
    want = tangent_of(torch, fn, primals, tangents)
    got = tangent_of(ember, fn, primals, tangents)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
            continue
        assert g is not None, "ember has no tangent"
        assert str(g.dtype)[6:] == str(w.dtype)[6:]
        assert tuple(g.shape) == tuple(w.shape)
        torch.testing.assert_close(torch.from_numpy(g.numpy().copy()), w, rtol=rtol, atol=atol)


def rand(*shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g, dtype=dtype) * 2 - 1


UNARY = ["sin", "cos", "tan", "exp", "expm1", "log1p", "tanh", "sigmoid", "atan", "asinh", "erf", "abs", "neg",
         "relu", "square", "reciprocal", "rsqrt", "sqrt", "log", "sinh", "cosh", "erfinv", "sign", "floor", "frac",
         "lgamma", "digamma", "logit", "sinc", "deg2rad", "exp2", "log2", "log10", "trunc"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_unary(name, dtype):
    x = rand(3, 4, dtype=dtype) * 0.9
    if name in ("log", "sqrt", "rsqrt", "lgamma", "digamma", "log2", "log10"):
        x = x.abs() + 0.1
    if name == "logit":
        x = x.abs() * 0.8 + 0.1
    tol = (1e-5, 1e-5) if dtype == torch.float32 else (1e-10, 1e-12)
    check(lambda lib, a: getattr(lib, name)(a), [x], [rand(3, 4, dtype=dtype, seed=1)], *tol)


BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "hypot", "logaddexp", "fmod",
          "remainder", "copysign", "xlogy", "fmax", "fmin"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast(name):
    a = rand(3, 4).abs() + 0.5
    b = rand(4, seed=2).abs() + 0.5
    check(lambda lib, x, y: getattr(lib, name)(x, y), [a, b], [rand(3, 4, seed=3), rand(4, seed=4)])
    # only one input dual, the other broadcast: the tangent has the result's shape
    check(lambda lib, x, y: getattr(lib, name)(x, y), [b, a], [rand(4, seed=4), None])


def test_non_contiguous_and_mixed_dtypes():
    a = rand(4, 3).t()
    check(lambda lib, x: x.exp() * 2, [a], [rand(3, 4, seed=5)])
    check(lambda lib, x: x.exp() * 2, [a], [rand(4, 3, seed=5).t()])
    # float32 tangent on a float64 primal (PyTorch keeps the given dtype)
    check(lambda lib, x: x, [rand(3)], [rand(3, dtype=torch.float32)])
    # int and float inputs: promoted result
    check(lambda lib, x, n: x * n, [rand(3, dtype=torch.float32), torch.arange(3)], [rand(3, dtype=torch.float32),
                                                                                      None])


def test_empty_and_zero_dim():
    check(lambda lib, x: x.sin().sum(), [rand(0, 3)], [rand(0, 3)])
    check(lambda lib, x: (x * x).exp(), [torch.tensor(0.5, dtype=torch.float64)],
          [torch.tensor(2.0, dtype=torch.float64)])
    check(lambda lib, x: x.mean(), [torch.tensor(0.5, dtype=torch.float64)], [torch.tensor(2.0, dtype=torch.float64)])


REDUCTIONS = [
    lambda lib, x: x.sum(),
    lambda lib, x: x.sum(1, keepdim=True),
    lambda lib, x: x.mean(0),
    lambda lib, x: x.prod(1),
    lambda lib, x: x.max(),
    lambda lib, x: x.max(1),
    lambda lib, x: x.min(0, keepdim=True),
    lambda lib, x: x.amax(1),
    lambda lib, x: x.var(1),
    lambda lib, x: x.std(),
    lambda lib, x: lib.var_mean(x, 0),
    lambda lib, x: x.logsumexp(1),
    lambda lib, x: lib.linalg.vector_norm(x),
    lambda lib, x: lib.linalg.vector_norm(x, 1, dim=0),
    lambda lib, x: x.cumsum(1),
    lambda lib, x: x.cumprod(1),
    lambda lib, x: x.sort(1),
    lambda lib, x: x.topk(2, 1),
    lambda lib, x: x.median(),
    lambda lib, x: x.softmax(1),
    lambda lib, x: x.log_softmax(0),
]


@pytest.mark.parametrize("i", range(len(REDUCTIONS)))
def test_reductions(i):
    check(REDUCTIONS[i], [rand(3, 4)], [rand(3, 4, seed=7)])


def test_cumprod_with_zeros():
    x = rand(2, 5)
    x[0, 2] = 0
    x[1, 1] = 0
    x[1, 3] = 0
    check(lambda lib, a: a.cumprod(1), [x], [rand(2, 5, seed=8)])


PRODUCTS = [
    lambda lib, a, b: a @ b,
    lambda lib, a, b: lib.mm(a, b),
    lambda lib, a, b: lib.addmm(a[:, :1].t().reshape(-1)[:1], a, b, beta=0.5, alpha=2.0),
    lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
    lambda lib, a, b: lib.matmul(a[0], b),
    lambda lib, a, b: lib.matmul(a, b[:, 0]),
]


@pytest.mark.parametrize("i", range(len(PRODUCTS)))
def test_matrix_products(i):
    a, b = rand(3, 4), rand(4, 2, seed=1)
    check(PRODUCTS[i], [a, b], [rand(3, 4, seed=2), rand(4, 2, seed=3)])
    check(PRODUCTS[i], [a, b], [rand(3, 4, seed=2), None])
    check(PRODUCTS[i], [a, b], [None, rand(4, 2, seed=3)])


VIEWS_AND_SHAPES = [
    lambda lib, x: x.t(),
    lambda lib, x: x[1:, ::2],
    lambda lib, x: x.view(-1),
    lambda lib, x: x.reshape(2, 2, 3),
    lambda lib, x: x.unsqueeze(0).expand(2, 3, 4),
    lambda lib, x: x.permute(1, 0),
    lambda lib, x: x.split(2, 1),
    lambda lib, x: x.unbind(0),
    lambda lib, x: lib.cat([x, x * 2], 0),
    lambda lib, x: lib.stack([x, x.sin()], 1),
    lambda lib, x: x.flip(0),
    lambda lib, x: x.roll(1, 1),
    lambda lib, x: x.tril(),
    lambda lib, x: x.diagonal(),
    lambda lib, x: x.gather(1, lib.tensor([[0, 1], [2, 3], [1, 1]])),
    lambda lib, x: x.index_select(1, lib.tensor([3, 0])),
    lambda lib, x: x[lib.tensor([2, 0])],
    lambda lib, x: x.masked_fill(x > 0, 1.5),
    lambda lib, x: lib.where(x > 0, x, -x),
    lambda lib, x: x.clamp(-0.5, 0.5),
    lambda lib, x: lib.nn.functional.pad(x, (1, 2)),
    lambda lib, x: x.repeat(2, 1),
]


@pytest.mark.parametrize("i", range(len(VIEWS_AND_SHAPES)))
def test_views_and_shapes(i):
    check(VIEWS_AND_SHAPES[i], [rand(3, 4)], [rand(3, 4, seed=9)])


def test_view_tangent_is_a_view_and_strides():
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.ones(3, 4), lib.zeros(3, 4))
            v = x.t()[1:]
            t = fw.unpack_dual(v).tangent
            assert t._base is not None
            assert t.stride() == v.stride()
            # the tangent of a non-contiguous given tangent takes the primal's strides
            y = fw.make_dual(lib.ones(3, 2), lib.ones(2, 3).t())
            assert fw.unpack_dual(y).tangent.stride() == (2, 1)


def test_inplace_updates_tangent():
    outs = []
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            base = fw.make_dual(lib.arange(6.0).reshape(2, 3), lib.ones(2, 3))
            row = base[1]
            row.mul_(3)
            base.add_(lib.ones(2, 3))
            x = fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([0.5, 0.5, 0.5]))
            plain = lib.zeros(2, 3)
            plain[0].copy_(x)  # a view of a tensor without tangent: the base gets one
            exp_ = x.clone().exp_()
            outs.append([fw.unpack_dual(t).tangent.tolist() for t in (base, row, plain, exp_)])
    assert outs[0] == outs[1]


NN = [
    lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
    lambda lib, x, w, b: lib.nn.functional.gelu(lib.nn.functional.linear(x, w, b)),
    lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4,), b[:4] + 1, b[:4]),
    lambda lib, x, w, b: lib.nn.functional.softmax(x, -1),
    lambda lib, x, w, b: lib.nn.functional.cross_entropy(x, lib.tensor([1, 0, 3])),
    lambda lib, x, w, b: lib.nn.functional.mse_loss(x, w[:3]),
    lambda lib, x, w, b: lib.nn.functional.dropout(x, 0.5, training=False),
    lambda lib, x, w, b: lib.nn.functional.silu(x),
    lambda lib, x, w, b: lib.nn.functional.smooth_l1_loss(x, w[:3]),
    lambda lib, x, w, b: lib.nn.functional.binary_cross_entropy(x.sigmoid(), w[:3].sigmoid()),
    lambda lib, x, w, b: lib.nn.functional.leaky_relu(x, 0.1),
    lambda lib, x, w, b: lib.nn.functional.elu(x),
    lambda lib, x, w, b: lib.nn.functional.glu(x, -1),
]


@pytest.mark.parametrize("i", range(len(NN)))
def test_nn_functional(i):
    x, w, b = rand(3, 4), rand(5, 4, seed=1), rand(5, seed=2)
    check(NN[i], [x, w, b], [rand(3, 4, seed=3), rand(5, 4, seed=4), rand(5, seed=5)])


def test_conv_and_norms():
    x, w, b = rand(2, 3, 5, 5), rand(4, 3, 3, 3, seed=1), rand(4, seed=2)
    tx, tw, tb = rand(2, 3, 5, 5, seed=3), rand(4, 3, 3, 3, seed=4), rand(4, seed=5)
    check(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1), [x, w, b], [tx, tw, tb])
    check(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2), [x, w, b], [tx, None, tb])
    check(lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w[0, :, 0, 0], b[:3], training=True),
          [x, w, b], [tx, tw, tb])
    check(lambda lib, x, w, b: lib.nn.functional.group_norm(x, 3, w[0, :, 0, 0], b[:3]), [x, w, b], [tx, tw, tb])
    check(lambda lib, x, w, b: lib.nn.functional.max_pool2d(x, 2), [x, w, b], [tx, None, None])
    check(lambda lib, x, w, b: lib.nn.functional.avg_pool2d(x, 2), [x, w, b], [tx, None, None])


def test_level_errors():
    fe, ft = ember.autograd.forward_ad, torch.autograd.forward_ad
    same_error(lambda: fe.make_dual(ember.ones(2), ember.ones(2)),
               lambda: ft.make_dual(torch.ones(2), torch.ones(2)))
    same_error(lambda: fe.exit_dual_level(), lambda: ft.exit_dual_level())
    same_error(lambda: fe.exit_dual_level(level=0), lambda: ft.exit_dual_level(level=0))
    assert fe.unpack_dual(ember.ones(2)).tangent is None
    with fe.dual_level() as le, ft.dual_level() as lt:
        assert le == lt == 0
        same_error(fe.enter_dual_level, ft.enter_dual_level)
        same_error(lambda: fe.exit_dual_level(level=1), lambda: ft.exit_dual_level(level=1))
        same_error(lambda: fe.make_dual(ember.ones(3), ember.ones(4)),
                   lambda: ft.make_dual(torch.ones(3), torch.ones(4)))
        same_error(lambda: fe.make_dual(ember.arange(3), ember.ones(3)),
                   lambda: ft.make_dual(torch.arange(3), torch.ones(3)))
        same_error(lambda: fe.make_dual(ember.ones(3), ember.arange(3)),
                   lambda: ft.make_dual(torch.ones(3), torch.arange(3)))
        same_error(lambda: fe.make_dual(ember.ones(3), ember.ones(3), level=1),
                   lambda: ft.make_dual(torch.ones(3), torch.ones(3), level=1))
        de, dt = fe.make_dual(ember.ones(3), ember.ones(3)), ft.make_dual(torch.ones(3), torch.ones(3))
        same_error(lambda: fe.make_dual(de, ember.ones(3)), lambda: ft.make_dual(dt, torch.ones(3)))
        same_error(lambda: fe.make_dual(ember.ones(3), de), lambda: ft.make_dual(torch.ones(3), dt))
        assert type(fe.unpack_dual(de)).__name__ == type(ft.unpack_dual(dt)).__name__ == "UnpackedDualTensor"
        assert fe.unpack_dual(de)._fields == ft.unpack_dual(dt)._fields
        assert repr(de) == repr(dt)
    # leaving the level drops the tangents
    assert fe.unpack_dual(de).tangent is None
    assert repr(de) == repr(dt)


def test_not_implemented_message():
    got = []
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            q = fw.make_dual(lib.ones(1, 2, 3, 4), lib.ones(1, 2, 3, 4))
            # the fused attention kernel has no forward formula, in PyTorch either
            got.append(err(lambda: lib.nn.functional.scaled_dot_product_attention(q, q, q)))
    assert got[0] == got[1]
    assert got[0][0] is NotImplementedError
    assert got[0][1].startswith("Trying to use forward AD with _scaled_dot_product_flash_attention_for_cpu that does "
                                "not support it because it has not been implemented yet.")


def test_grad_mode_independent_and_reverse_through_tangent():
    # forward AD runs under no_grad; reverse mode differentiates a tangent
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        x = lib.tensor([0.3, 0.6], dtype=lib.float64, requires_grad=True)
        with fw.dual_level():
            with lib.no_grad():
                t = fw.unpack_dual(fw.make_dual(x.detach(), lib.ones(2, dtype=lib.float64)).sin()).tangent
            assert t.tolist() == pytest.approx([0.955336489125606, 0.8253356149096783])
            d = fw.make_dual(x, lib.ones(2, dtype=lib.float64))
            (g,) = lib.autograd.grad(fw.unpack_dual(d.sin()).tangent.sum(), x)
            assert g.tolist() == pytest.approx((-x.detach().sin()).tolist())


def test_custom_function_jvp():
    results = []
    for lib in (ember, torch):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                ctx.save_for_forward(a)
                ctx.k = k
                return a * k, a.sum()

            @staticmethod
            def jvp(ctx, a_t, _k_t):
                (a,) = ctx.saved_tensors
                return a_t * ctx.k + a * 0, a_t.sum()

        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0]))
            y, s = Scale.apply(d, 3.0)
            results.append((fw.unpack_dual(y).tangent.tolist(), fw.unpack_dual(s).tangent.item()))
    assert results[0] == results[1]

    class NoJvp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoJvpT(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    fe, ft = ember.autograd.forward_ad, torch.autograd.forward_ad
    with fe.dual_level(), ft.dual_level():
        same_error(lambda: NoJvp.apply(fe.make_dual(ember.ones(2), ember.ones(2))),
                   lambda: NoJvpT.apply(ft.make_dual(torch.ones(2), torch.ones(2))))


def test_functional_jacobian_forward_mode():
    def f(lib):
        return lambda a, b: ((a * b).sin(), a.sum() * b)

    a, b = [0.1, 0.2, 0.3], [1.0, -1.0, 2.0]
    je = ember.autograd.functional.jacobian(f(ember), (ember.tensor(a), ember.tensor(b)), vectorize=True,
                                            strategy="forward-mode")
    jt = torch.autograd.functional.jacobian(f(torch), (torch.tensor(a), torch.tensor(b)), vectorize=True,
                                            strategy="forward-mode")
    assert type(je) is type(jt) and type(je[0]) is type(jt[0])
    for re_, rt in zip(je, jt):
        for e, t in zip(re_, rt):
            torch.testing.assert_close(torch.tensor(e.tolist()), t)
    single_e = ember.autograd.functional.jacobian(lambda x: x.exp(), ember.tensor(a), vectorize=True,
                                                  strategy="forward-mode")
    single_t = torch.autograd.functional.jacobian(lambda x: x.exp(), torch.tensor(a), vectorize=True,
                                                  strategy="forward-mode")
    torch.testing.assert_close(torch.tensor(single_e.tolist()), single_t)
    same_error(lambda: ember.autograd.functional.jacobian(f(ember), ember.tensor(a), strategy="forward-mode"),
               lambda: torch.autograd.functional.jacobian(f(torch), torch.tensor(a), strategy="forward-mode"))


def test_gradcheck_forward_ad():
    x = ember.tensor([0.3, -0.7, 1.1], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: (t.exp() * t.sin()).cumprod(0), (x,), check_forward_ad=True)
    assert ember.autograd.gradcheck(lambda t: t.softmax(0), (x,), check_forward_ad=True, check_backward_ad=False)
    assert ember.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,), check_fwd_over_rev=True)

    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, a_t):
            return a_t * 3

    with pytest.raises(ember.autograd.GradcheckError, match="Jacobian computed with forward mode mismatch"):
        ember.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True)


def test_complex_results():
    # polar: a complex result from real inputs; view_as_real reads it back
    a, t = torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([0.3, 2.0], dtype=torch.float64)
    ta, tt = torch.tensor([0.5, -1.0], dtype=torch.float64), torch.tensor([2.0, 0.25], dtype=torch.float64)
    check(lambda lib, x, y: lib.view_as_real(lib.polar(x, y)), [a, t], [ta, tt])
    check(lambda lib, x, y: lib.view_as_real(lib.polar(x, y)), [a, t], [ta, None])


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_layers(mode):
    got = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        layer = getattr(lib.nn, mode)(4, 3, batch_first=True).double()
        x = lib.tensor(rand(2, 5, 4).tolist(), dtype=lib.float64)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            out = layer(fw.make_dual(x, lib.ones_like(x)))[0]
            got.append(torch.tensor(fw.unpack_dual(out).tangent.tolist()))
    torch.testing.assert_close(got[0], got[1], rtol=1e-10, atol=1e-12)


def test_make_dual_is_recorded_as_a_view():
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        x = lib.ones(2, 3, dtype=lib.float64).t().requires_grad_()
        with fw.dual_level():
            d = fw.make_dual(x, lib.ones(3, 2, dtype=lib.float64))
            assert type(d.grad_fn).__name__ == "ViewBackward0"
            assert d._is_view() and d.stride() == (1, 3)
            (d * 2).sum().backward()
        assert x.grad.tolist() == [[2.0, 2.0]] * 3


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_tangents(reduce, include_self):
    got = []
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        self_p = lib.tensor([[0.5, 2.0, -1.0], [3.0, 0.0, 1.0]], dtype=lib.float64)
        src = lib.tensor([[2.0, 2.0, -1.0, 4.0], [3.0, -2.0, 3.0, 1.0]], dtype=lib.float64)
        index = lib.tensor([[0, 0, 2, 1], [1, 2, 0, 0]])
        with fw.dual_level():
            d_self = fw.make_dual(self_p, lib.arange(6, dtype=lib.float64).reshape(2, 3) + 1)
            d_src = fw.make_dual(src, lib.arange(8, dtype=lib.float64).reshape(2, 4) * 10)
            out = d_self.scatter_reduce(1, index, d_src, reduce, include_self=include_self)
            tangent = fw.unpack_dual(out).tangent
        got.append(None if tangent is None else tangent.tolist())
    assert (got[0] is None) == (got[1] is None)
    for row_e, row_t in zip(got[0] or [], got[1] or []):
        assert row_e == pytest.approx(row_t, rel=1e-12)
