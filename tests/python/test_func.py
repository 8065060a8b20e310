"""ember.func against torch.func: vmap over the operator families (random in_dims), its
errors, grad/vjp/jacrev/jacfwd/jvp/hessian, per-sample gradients and ensembles."""

import warnings

import numpy as np
import pytest
import torch
import torch.func as tf
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.func as ef
from ember._functorch.pytree import tree_flatten


def _ember(t):
    if isinstance(t, torch.Tensor):
        return ember.from_numpy(t.detach().numpy().copy())
    if isinstance(t, (list, tuple)):
        return type(t)(_ember(x) for x in t)
    if isinstance(t, dict):
        return {k: _ember(v) for k, v in t.items()}
    return t


def _same(got, want, atol=1e-5, exact=False):
    flat_got = tree_flatten(got)[0]
    flat_want = torch.utils._pytree.tree_flatten(want)[0]
    assert len(flat_got) == len(flat_want)
    for g, w in zip(flat_got, flat_want):
        if not isinstance(w, torch.Tensor):
            assert g == w
            continue
        assert isinstance(g, ember.Tensor), type(g)
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        if exact:
            np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())
        else:
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-4, atol=atol)


def both(fn, *args, atol=1e-5):
    """fn(lib, F, *args) under ember and torch, compared."""
    want = fn(torch, tf, *args)
    got = fn(ember, ef, *_ember(args))
    _same(got, want, atol)


def _batched_input(rng, shape, in_dim, size=3):
    """A tensor of the given sample shape with a batch of `size` at in_dim (None: no batch)."""
    if in_dim is None:
        return torch.from_numpy(rng.standard_normal(shape).astype("float32"))
    full = rng.standard_normal((size, *shape)).astype("float32")
    return torch.from_numpy(full).movedim(0, in_dim)


# ---- families under random in_dims ----
UNARY = ["sin", "exp", "tanh", "relu", "sigmoid", "abs", "neg", "sqrt_abs", "clamp", "float", "clone"]
BINARY = ["add", "mul", "sub", "div", "maximum", "pow_abs", "where", "atan2", "lt"]


def _unary(lib, name):
    return {
        "sqrt_abs": lambda a: a.abs().sqrt(),
        "clamp": lambda a: a.clamp(-0.5, 0.5),
        "float": lambda a: a.double(),
        "clone": lambda a: a.clone(),
    }.get(name, lambda a: getattr(lib, name)(a))


def _binary(lib, name):
    return {
        "pow_abs": lambda a, b: a.abs() ** b,
        "where": lambda a, b: lib.where(a > b, a, b),
        "lt": lambda a, b: a < b,
        "div": lambda a, b: a / (b.abs() + 1),
    }.get(name, lambda a, b: getattr(lib, name)(a, b))


shapes = st.sampled_from([(), (4,), (2, 4), (3, 1, 4)])


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(UNARY), shape=shapes, data=st.data(), seed=st.integers(0, 1000))
def test_vmap_unary_random_in_dims(op, shape, data, seed):
    rng = np.random.default_rng(seed)
    in_dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    x = _batched_input(rng, shape, in_dim)
    out_dim = data.draw(st.integers(0, len(shape)))
    both(lambda lib, F, x: F.vmap(_unary(lib, op), in_dims=in_dim, out_dims=out_dim)(x), x)


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(BINARY), a_shape=shapes, b_shape=shapes, data=st.data(), seed=st.integers(0, 1000))
def test_vmap_binary_broadcast_random_in_dims(op, a_shape, b_shape, data, seed):
    rng = np.random.default_rng(seed)
    da = data.draw(st.one_of(st.none(), st.integers(-len(a_shape) - 1, len(a_shape))))
    db = data.draw(st.integers(-len(b_shape) - 1, len(b_shape))) if da is None else data.draw(
        st.one_of(st.none(), st.integers(-len(b_shape) - 1, len(b_shape))))
    a, b = _batched_input(rng, a_shape, da), _batched_input(rng, b_shape, db)
    both(lambda lib, F, a, b: F.vmap(_binary(lib, op), in_dims=(da, db))(a, b), a, b)


REDUCTIONS = [
    lambda lib, a: a.sum(),
    lambda lib, a: a.sum(-1),
    lambda lib, a: a.mean((0, -1), keepdim=True),
    lambda lib, a: a.amax(0),
    lambda lib, a: a.max(),
    lambda lib, a: a.max(1),
    lambda lib, a: a.argmax(),
    lambda lib, a: a.argmin(0),
    lambda lib, a: a.std(1),
    lambda lib, a: a.var(),
    lambda lib, a: a.prod(1),
    lambda lib, a: lib.logsumexp(a, 1),
    lambda lib, a: a.cumsum(-1),
    lambda lib, a: lib.softmax(a, 0),
    lambda lib, a: lib.nn.functional.log_softmax(a, -1),
    lambda lib, a: (a > 0).all(),
    lambda lib, a: (a > 0).any(1),
    lambda lib, a: a.sort(1).values,
    lambda lib, a: a.topk(2, 1).indices,
    lambda lib, a: lib.nn.functional.layer_norm(a, (4,)),
    lambda lib, a: lib.nn.functional.normalize(a, dim=1),
]


@settings(max_examples=40, deadline=None)
@given(i=st.integers(0, len(REDUCTIONS) - 1), in_dim=st.integers(-3, 2), seed=st.integers(0, 1000))
def test_vmap_reductions_and_dim_ops(i, in_dim, seed):
    x = _batched_input(np.random.default_rng(seed), (3, 4), in_dim)
    both(lambda lib, F, x: F.vmap(lambda a: REDUCTIONS[i](lib, a), in_dims=in_dim)(x), x)


VIEWS = [
    lambda lib, a: a.view(12),
    lambda lib, a: a.reshape(2, -1, 3),
    lambda lib, a: a.permute(1, 0),
    lambda lib, a: a.t(),
    lambda lib, a: a.T,
    lambda lib, a: a.transpose(0, -1).contiguous(),
    lambda lib, a: a.unsqueeze(1).squeeze(),
    lambda lib, a: a.unsqueeze(-1).expand(3, 4, 2),
    lambda lib, a: a.flatten(),
    lambda lib, a: a.movedim(0, 1),
    lambda lib, a: a.narrow(1, 1, 2),
    lambda lib, a: a.select(0, 1),
    lambda lib, a: a.unbind(1),
    lambda lib, a: a.chunk(2, 1),
    lambda lib, a: a.split([1, 3], -1),
    lambda lib, a: a.diagonal(),
    lambda lib, a: a.flip(0),
    lambda lib, a: a.roll(1, 0),
    lambda lib, a: a.roll(2),
    lambda lib, a: a.flatten(1),
    lambda lib, a: a.diagonal(1, 1, 0),
    lambda lib, a: a.repeat(2, 1),
    lambda lib, a: a[1:, ::2],
    lambda lib, a: a[..., None, 1],
    lambda lib, a: a[lib.tensor([0, 2])],
    lambda lib, a: a[:, lib.tensor([3, 0, 0])],
    lambda lib, a: a[a > 0.5] if False else a.tril(),
    lambda lib, a: lib.cat([a, a * 2], 1),
    lambda lib, a: lib.stack([a, a.exp()], -1),
    lambda lib, a: a.gather(1, lib.tensor([[0], [1], [3]])),
    lambda lib, a: lib.zeros_like(a) + lib.ones(4),
    lambda lib, a: a.new_zeros(2) + a.sum(),
    lambda lib, a: lib.trace(a[:, :3]),  # no rule: the loop fallback
    lambda lib, a: a.view_as(lib.ones(4, 3)),
    lambda lib, a: a.expand_as(lib.ones(2, 3, 4)),
]


@settings(max_examples=60, deadline=None)
@given(i=st.integers(0, len(VIEWS) - 1), in_dim=st.integers(-3, 2), seed=st.integers(0, 1000))
def test_vmap_views_indexing_factories(i, in_dim, seed):
    x = _batched_input(np.random.default_rng(seed), (3, 4), in_dim)
    both(lambda lib, F, x: F.vmap(lambda a: VIEWS[i](lib, a), in_dims=in_dim)(x), x)


MATMULS = [((4,), (4,)), ((4,), (4, 2)), ((3, 4), (4,)), ((3, 4), (4, 2)), ((2, 3, 4), (4, 5)),
           ((3, 4), (2, 4, 5)), ((4,), (2, 4, 3))]


@settings(max_examples=40, deadline=None)
@given(i=st.integers(0, len(MATMULS) - 1), da=st.sampled_from([None, 0, -1]), db=st.sampled_from([None, 0, 1]),
       seed=st.integers(0, 1000))
def test_vmap_matmul_family(i, da, db, seed):
    if da is None and db is None:
        db = 0
    rng = np.random.default_rng(seed)
    a_shape, b_shape = MATMULS[i]
    a, b = _batched_input(rng, a_shape, da), _batched_input(rng, b_shape, db)
    both(lambda lib, F, a, b: F.vmap(lib.matmul, in_dims=(da, db))(a, b), a, b)
    both(lambda lib, F, a, b: F.vmap(lambda x, y: x @ y, in_dims=(da, db))(a, b), a, b)


def test_vmap_mm_mv_dot_addmm_linear():
    rng = np.random.default_rng(0)
    m, v, w = _batched_input(rng, (3, 4), 0), _batched_input(rng, (4,), 0), torch.randn(5, 4)
    both(lambda lib, F, m, v: F.vmap(lib.mv)(m, v), m, v)
    both(lambda lib, F, v: F.vmap(lib.dot)(v, v), v)
    both(lambda lib, F, m, w: F.vmap(lib.mm, in_dims=(0, None))(m, w.t()), m, w)
    both(lambda lib, F, m, w: F.vmap(lambda x: lib.addmm(lib.ones(5), x, w.t(), beta=2))(m), m, w)
    both(lambda lib, F, m, w: F.vmap(lambda x, ww: lib.nn.functional.linear(x, ww, ww[:, 0]))(m, w.expand(3, 5, 4)),
         m, w)


def test_vmap_losses():
    rng = np.random.default_rng(1)
    x = _batched_input(rng, (2, 5), 0)
    t = torch.tensor([[0, 4], [1, 1], [2, 3]])
    both(lambda lib, F, x, t: F.vmap(lib.nn.functional.cross_entropy)(x, t), x, t)
    both(lambda lib, F, x, t: F.vmap(lambda a, b: lib.nn.functional.nll_loss(a.log_softmax(-1), b,
                                                                              reduction="sum"))(x, t), x, t)
    both(lambda lib, F, x: F.vmap(lambda a: lib.nn.functional.mse_loss(a, a.flip(0)))(x), x)


def test_vmap_pytrees_out_dims_chunks_nesting():
    rng = np.random.default_rng(2)
    x, y = _batched_input(rng, (2, 3), 1), _batched_input(rng, (3,), 0)
    both(lambda lib, F, x, y: F.vmap(lambda d: (d["a"] * d["b"][0], d["a"].sum()),
                                     in_dims=({"a": 1, "b": (0,)},), out_dims=(1, 0))({"a": x, "b": (y,)}), x, y)
    both(lambda lib, F, x, y: F.vmap(lambda a, b: [a + b, None], in_dims=(1, None), out_dims=[0, None])(x, y[0]),
         x, y)
    _raises(lambda lib, F: F.vmap(lambda a: [a, None], out_dims=(0, None))(lib.ones(2)), ValueError,
            "out_dims is not compatible")
    both(lambda lib, F, x: F.vmap(lib.exp, in_dims=1, chunk_size=2)(x), x)
    both(lambda lib, F, x: F.vmap(lambda a, b: a + b, in_dims=(1, None), out_dims=-1)(x, x[:, 0]), x)
    both(lambda lib, F, x, y: F.vmap(F.vmap(lambda a, b: a * b + a.sum(), in_dims=(0, None)), in_dims=(1, 0))(x, y),
         x, y)
    z = torch.randn(2, 3, 4)
    both(lambda lib, F, z: F.vmap(F.vmap(lambda a: a @ a, in_dims=1), in_dims=2)(z.transpose(1, 2)[:, :, :3]), z)
    # an output not batched at this level is expanded
    both(lambda lib, F, x: F.vmap(lambda a: lib.ones(2))(x), x)
    assert ember.vmap is ef.vmap


def test_vmap_inplace():
    rng = np.random.default_rng(3)
    x, y = _batched_input(rng, (2, 3), 0), _batched_input(rng, (3,), 0)
    both(lambda lib, F, x, y: F.vmap(lambda a, b: a.clone().mul_(2).add_(b))(x, y), x, y)

    def setitem(lib, F, x, y):
        def f(a, b):
            a = a.clone()
            a[0] = b
            return a

        return F.vmap(f)(x, y)

    both(setitem, x, y)


def _raises(fn, exc, match=None):
    with pytest.raises(exc, match=match) as want:
        fn(torch, tf)
    with pytest.raises(exc, match=match) as got:
        fn(ember, ef)
    return str(got.value), str(want.value)


def test_vmap_errors():
    def x(lib):
        return lib.ones(3, 2)

    _raises(lambda lib, F: F.vmap(lambda a: a.item())(x(lib)), RuntimeError, "item")
    _raises(lambda lib, F: F.vmap(lambda a: 1 if a.sum() > 0 else 0)(x(lib)), RuntimeError, "data-dependent")
    _raises(lambda lib, F: F.vmap(lambda a, b: lib.zeros(2).add_(a))(x(lib), x(lib)), RuntimeError)
    _raises(lambda lib, F: F.vmap(lambda a: lib.zeros(2).copy_(a))(x(lib)), RuntimeError)
    _raises(lambda lib, F: F.vmap(lambda a, b: a + b)(x(lib), lib.ones(4)), ValueError, "same size")
    _raises(lambda lib, F: F.vmap(lambda a: a, in_dims=2)(x(lib)), ValueError, "dimensionality")
    _raises(lambda lib, F: F.vmap(lambda a: a, in_dims=(0, 0))(x(lib)), ValueError, "in_dims is not compatible")
    _raises(lambda lib, F: F.vmap(lambda a: a, in_dims=0.5)(x(lib)), ValueError, "expected `in_dims`")
    _raises(lambda lib, F: F.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x(lib)), ValueError, "out_dims")
    _raises(lambda lib, F: F.vmap(lambda a: 3)(x(lib)), ValueError, "must only return Tensors")
    _raises(lambda lib, F: F.vmap(lambda a: a, out_dims=None)(x(lib)), ValueError, "BatchedTensor")
    _raises(lambda lib, F: F.vmap(lambda a: a, in_dims=None)(x(lib)), ValueError, "expected `in_dims`")
    _raises(lambda lib, F: F.vmap(lambda a: a, in_dims=(None,))(x(lib)), ValueError, "at least one Tensor")
    _raises(lambda lib, F: F.vmap(lambda a: a)(), ValueError, "no inputs")
    _raises(lambda lib, F: F.vmap(lambda a: a, in_dims=0)(3.0), ValueError, "non-Tensor")
    _raises(lambda lib, F: F.vmap(lambda a: a, randomness="bad")(x(lib)), RuntimeError, "randomness")
    _raises(lambda lib, F: F.vmap(lambda a: a + lib.rand(2))(x(lib)), RuntimeError, "random")
    _raises(lambda lib, F: F.vmap(lambda a: lib.nn.functional.dropout(a))(x(lib)), RuntimeError, "random")


def test_vmap_randomness():
    x = ember.ones(4, 3)
    same = ef.vmap(lambda a: a * ember.rand(3), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[0:1])
    different = ef.vmap(lambda a: a * ember.rand(3), randomness="different")(x)
    assert not np.allclose(different.numpy(), different.numpy()[0:1])
    assert tuple(different.shape) == (4, 3)
    dropped = ef.vmap(lambda a: ember.nn.functional.dropout(a, 0.5), randomness="same")(ember.ones(4, 64))
    assert np.allclose(dropped.numpy(), dropped.numpy()[0:1])
    like = ef.vmap(lambda a: ember.randn_like(a), randomness="different")(x)
    assert not np.allclose(like.numpy(), like.numpy()[0:1])


# ---- grad, vjp, jacobians ----
def test_grad_argnums_aux_and_errors():
    rng = np.random.default_rng(4)
    a, b = _batched_input(rng, (3,), None), _batched_input(rng, (3,), None)
    both(lambda lib, F, a, b: F.grad(lambda x, y: (x.sin() * y).sum())(a, b), a, b)
    both(lambda lib, F, a, b: F.grad(lambda x, y: (x.sin() * y).sum(), argnums=(0, 1))(a, b), a, b)
    both(lambda lib, F, a, b: F.grad(lambda x, y: (x * y).sum(), argnums=-1)(a, b), a, b)
    both(lambda lib, F, a: F.grad_and_value(lambda x: ((x ** 3).sum(), x.cos()), has_aux=True)(a), a)
    both(lambda lib, F, a, b: F.grad(lambda d: (d["p"] * d["q"][0]).sum())({"p": a, "q": [b]}), a, b)
    _raises(lambda lib, F: F.grad(lambda x: x * 2)(lib.ones(3)), RuntimeError, "scalar")
    _raises(lambda lib, F: F.grad(lambda x: 2.0)(lib.ones(3)), RuntimeError, "return a Tensor")
    _raises(lambda lib, F: F.grad(lambda x: x.sum(), argnums=3)(lib.ones(3)), RuntimeError, "argnum")
    _raises(lambda lib, F: F.grad(lambda x: x.sum(), argnums=())(lib.ones(3)), RuntimeError, "non-empty")
    _raises(lambda lib, F: F.grad(lambda x: x.sum(), has_aux=True)(lib.ones(3)), RuntimeError, "aux")
    _raises(lambda lib, F: F.grad(lambda x: x.sum())(3), ValueError, "must be Tensor")
    _raises(lambda lib, F: F.jacrev(lambda x: x, chunk_size=0)(lib.ones(2)), ValueError, "chunk_size")
    _raises(lambda lib, F: F.vmap(lambda x: x, chunk_size=0)(lib.ones(2)), ValueError, "chunk_size")
    _raises(lambda lib, F: F.vmap(3)(lib.ones(2)), TypeError)
    _raises(lambda lib, F: F.vmap(lambda x: x, out_dims=3)(lib.ones(2, 2)), IndexError, "out of range")
    _raises(lambda lib, F: F.functionalize(lambda x: x, remove="x"), RuntimeError, "remove")
    got, want = _raises(lambda lib, F: F.vjp(lambda x: x * 2, lib.ones(2))[1](lib.ones(3)), RuntimeError, "Mismatch")
    assert got == want
    _raises(lambda lib, F: F.vjp(lambda x: (x, x), lib.ones(2))[1](lib.ones(2)), RuntimeError, "pytree structure")
    _raises(lambda lib, F: F.vjp(lambda x: (x > 0).long(), lib.ones(2)), RuntimeError, "floating-point")


def test_vjp_jvp():
    rng = np.random.default_rng(5)
    a, t = _batched_input(rng, (4,), None), _batched_input(rng, (4,), None)
    both(lambda lib, F, a, t: (lambda o: (o[0], o[1](t)))(F.vjp(lambda x: x.exp() * x.sum(), a)), a, t)
    both(lambda lib, F, a, t: (lambda o: (o[0], o[1](t), o[2]))(F.vjp(lambda x: (x.tanh(), x.sum()), a,
                                                                       has_aux=True)), a, t)
    both(lambda lib, F, a, t: F.jvp(lambda x, y: x.sin() * y, (a, a + 1), (t, a)), a, t)
    both(lambda lib, F, a, t: F.jvp(lambda x: (x.exp(), x.sum()), (a,), (t,)), a, t)
    both(lambda lib, F, a, t: F.jvp(lambda x: (x.exp(), x.max()), (a,), (t,), has_aux=True), a, t)
    both(lambda lib, F, a, t: (lambda o: (o[0], o[1](t)))(F.linearize(lambda x: x.sin() * 2, a)), a, t)
    _raises(lambda lib, F: F.jvp(lambda x: x, lib.ones(2), (lib.ones(2),)), RuntimeError, "tuple")
    _raises(lambda lib, F: F.jvp(lambda x: x, (lib.ones(2),), (lib.ones(2), lib.ones(2))), RuntimeError,
            "same python structure")


def test_jacrev_jacfwd_hessian():
    rng = np.random.default_rng(6)
    x, w = _batched_input(rng, (3,), None), _batched_input(rng, (3, 3), None)

    def f(lib):
        return lambda v, m: lib.tanh(m @ v) * v.sum()

    both(lambda lib, F, x, w: F.jacrev(f(lib))(x, w), x, w)
    both(lambda lib, F, x, w: F.jacrev(f(lib), argnums=(0, 1))(x, w), x, w)
    both(lambda lib, F, x, w: F.jacrev(f(lib), chunk_size=2)(x, w), x, w)
    both(lambda lib, F, x, w: F.jacfwd(f(lib))(x, w), x, w)
    both(lambda lib, F, x, w: F.jacfwd(f(lib), argnums=1)(x, w), x, w)
    both(lambda lib, F, x: F.jacrev(lambda v: (v.sin(), v.sum()))(x), x)
    both(lambda lib, F, x: F.jacrev(lambda v: (v.exp(), v.sum()), has_aux=True)(x), x)
    both(lambda lib, F, x: F.hessian(lambda v: (v.sin() * v).sum() * v[0])(x), x, atol=1e-4)
    both(lambda lib, F, x, w: F.jacrev(F.jacrev(lambda v: lib.tanh(w @ v).sum()))(x), x, w, atol=1e-4)
    both(lambda lib, F, x, w: F.jacfwd(F.jacrev(lambda v: lib.tanh(w @ v).sum()))(x), x, w, atol=1e-4)


def test_vmap_of_transforms():
    rng = np.random.default_rng(7)
    xs, w = _batched_input(rng, (3,), 0, size=5), _batched_input(rng, (2, 3), None)
    both(lambda lib, F, xs: F.vmap(F.jacrev(lambda v: v.sin() * v.sum()))(xs), xs)
    both(lambda lib, F, xs: F.vmap(F.jacfwd(lambda v: v.sin() * v.sum()))(xs), xs)
    both(lambda lib, F, xs: F.vmap(F.hessian(lambda v: (v ** 3).sum()))(xs), xs, atol=1e-4)
    both(lambda lib, F, xs, w: F.vmap(F.grad(lambda m, v: lib.tanh(m @ v).sum()), in_dims=(None, 0))(w, xs),
         xs, w)
    both(lambda lib, F, xs, w: F.vmap(lambda v: F.vjp(lambda m: m @ v, w)[1](v[:2]))(xs), xs, w)
    both(lambda lib, F, xs: F.vmap(lambda v: F.jvp(lib.sin, (v,), (v.cos(),)))(xs), xs)
    both(lambda lib, F, xs: F.grad(lambda v: F.vmap(lib.sin)(v).sum())(xs), xs)


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


def _copied_mlps(n):
    torch.manual_seed(0)
    torch_models = [_mlp(torch) for _ in range(n)]
    ember_models = [_mlp(ember) for _ in range(n)]
    for e, t in zip(ember_models, torch_models):
        e.load_state_dict({k: _ember(v) for k, v in t.state_dict().items()})
    return ember_models, torch_models


def test_per_sample_gradients():
    (em,), (tm,) = _copied_mlps(1)
    x, y = torch.randn(6, 4), torch.tensor([0, 2, 1, 1, 0, 2])

    def run(lib, F, model, x, y):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi):
            out = F.functional_call(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    # bit for bit: the weights' products fold the batch into rows as PyTorch's rule does (Note [Shared matrix])
    _same(run(ember, ef, em, *_ember((x, y))), run(torch, tf, tm, x, y), exact=True)


def test_ensemble_with_stack_module_state():
    ems, tms = _copied_mlps(3)
    x = torch.randn(5, 4)

    def run(lib, F, models, x):
        params, buffers = F.stack_module_state(models)
        base = models[0]
        out = F.vmap(lambda p, b, xi: F.functional_call(base, (p, b), (xi,)), in_dims=(0, 0, None))(params, buffers, x)
        return out, {k: v.requires_grad for k, v in params.items()}

    _same(run(ember, ef, ems, _ember(x)), run(torch, tf, tms, x))
    _raises(lambda lib, F: F.stack_module_state([]), RuntimeError, "at least one model")
    _raises(lambda lib, F: F.stack_module_state([lib.nn.Linear(1, 1), lib.nn.Tanh()]), RuntimeError, "same class")


def test_functional_call_dicts_and_errors():
    (em,), (tm,) = _copied_mlps(1)
    x = torch.randn(2, 4)

    def run(lib, F, model, x):
        params = dict(model.named_parameters())
        first = {k: v * 2 for k, v in params.items() if k.startswith("0.")}
        rest = {k: v for k, v in params.items() if not k.startswith("0.")}
        return F.functional_call(model, (first, rest), (x,)), F.functional_call(model, first, x)

    _same(run(ember, ef, em, _ember(x)), run(torch, tf, tm, x))
    _raises(lambda lib, F: F.functional_call(lib.nn.Linear(1, 1), ({"bias": lib.ones(1)}, {"bias": lib.ones(1)}),
                                             (lib.ones(1),)), ValueError, "multiple dictionaries")
    _raises(lambda lib, F: F.functional_call(lib.nn.Linear(1, 1), 3, (lib.ones(1),)), ValueError, "dict")
    _raises(lambda lib, F: F.functional_call(lib.nn.Linear(1, 1), {"bias": lib.ones(1)}, (lib.ones(1),),
                                             strict=True), RuntimeError, "Missing key")


def test_functionalize_and_namespace():
    def f(x):
        y = x.clone()
        y.add_(1)
        return y * 2

    x = ember.ones(3)
    assert ef.functionalize(f)(x).tolist() == tf.functionalize(lambda t: f(t))(torch.ones(3)).tolist()
    missing = {n for n in dir(tf) if not n.startswith("_")} - set(dir(ef))
    assert missing <= {"rearrange"}, missing


def test_vmap_modules_and_plain_tensor_methods():
    torch.manual_seed(0)
    x = torch.randn(3, 2, 6, 6)

    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU(), nn.Flatten(0), nn.Dropout(0.3), nn.Linear(48, 2))

    tm, em = build(torch).eval(), build(ember).eval()
    em.load_state_dict({k: _ember(v) for k, v in tm.state_dict().items()})
    _same(ef.vmap(em)(_ember(x)), tf.vmap(tm)(x))  # conv2d runs through the loop fallback
    v = torch.randn(4)
    both(lambda lib, F, x, v: F.vmap(lambda a: v.mul(a) + v.add(a, alpha=2) - v.matmul(a))(x[:, 0, 0, :4]), x, v)
    both(lambda lib, F, x: F.vmap(lambda a: (a * a).sum() / len(a) + a.size(-1) + a.shape[0])(x), x)


def test_jvp_when_forward_ad_cannot_differentiate(monkeypatch):
    """With a forward_ad whose operators lack forward derivatives, jvp falls back to the double vjp."""
    import contextlib
    import types

    def make_dual(primal, tangent):
        raise NotImplementedError("no forward derivative")

    stub = types.SimpleNamespace(dual_level=contextlib.nullcontext, make_dual=make_dual, unpack_dual=None)
    monkeypatch.setattr(ember.autograd, "forward_ad", stub, raising=False)
    a, t = torch.randn(3), torch.randn(3)
    both(lambda lib, F, a, t: F.jvp(lambda x: x.sin() * x.sum(), (a,), (t,)), a, t)
    both(lambda lib, F, a: F.jacfwd(lambda x: x.exp() * x[0])(a), a)


@pytest.mark.parametrize("in_dim", [0, 1, -1])
def test_vmap_every_listed_op_once(in_dim):
    x = _batched_input(np.random.default_rng(8), (3, 4), in_dim)
    for op in REDUCTIONS + VIEWS:
        both(lambda lib, F, x: F.vmap(lambda a: op(lib, a), in_dims=in_dim)(x), x)


@pytest.mark.parametrize("groups", [1, 3])
def test_vmap_conv_batched_input_and_weight(groups):
    torch.manual_seed(1)
    x, b = torch.randn(4, 2, 3, 7, 7), torch.randn(4, 6)
    w = torch.randn(4, 6, 3 // groups, 3, 3)

    def conv(lib):
        return lib.nn.functional.conv2d

    both(lambda lib, F, x, w, b: F.vmap(lambda a: conv(lib)(a, w[0], b[0], padding=1, groups=groups))(x), x, w, b)
    both(lambda lib, F, x, w, b: F.vmap(lambda k, bb: conv(lib)(x[0], k, bb, stride=2, groups=groups))(w, b), x, w, b)
    both(lambda lib, F, x, w, b: F.vmap(lambda a, k: conv(lib)(a, k, b[0], groups=groups))(x, w), x, w, b)
    both(lambda lib, F, x, w: F.vmap(lambda a, k: conv(lib)(a, k, groups=groups))(x[:, 0], w), x, w)


def test_per_sample_gradients_cnn():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(100, 2))

    torch.manual_seed(2)
    tm, em = build(torch), build(ember)
    em.load_state_dict({k: _ember(v) for k, v in tm.state_dict().items()})
    x, y = torch.randn(5, 3, 7, 7), torch.tensor([0, 1, 1, 0, 1])

    def run(lib, F, model, x, y):
        params = {k: p.detach() for k, p in model.named_parameters()}

        def loss(p, xi, yi):
            return lib.nn.functional.cross_entropy(F.functional_call(model, p, (xi[None],)), yi[None])

        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    _same(run(ember, ef, em, *_ember((x, y))), run(torch, tf, tm, x, y), atol=1e-4)


# ---- nn families folded into an existing dim (rules_nn.py) ----
@pytest.fixture
def no_fallback(monkeypatch):
    """Fails the test when an operator runs through the per-sample loop."""
    from ember._functorch import rules

    monkeypatch.setattr(rules, "_FALLBACK_WARNING", [True])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        yield


def _strides_same(got, want):
    assert tuple(got.stride()) == tuple(want.stride())


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", ["none", "shared", "batched"])
def test_vmap_batch_norm(no_fallback, training, affine):
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((5, 4, 3, 6)).astype("float32"))
    w = torch.from_numpy(rng.standard_normal((5, 3)).astype("float32"))
    b = torch.from_numpy(rng.standard_normal((5, 3)).astype("float32"))
    results = []
    for lib, F, vm in ((torch, torch.nn.functional, tf.vmap), (ember, ember.nn.functional, ef.vmap)):
        xs, ws, bs = (_ember(t) if lib is ember else t for t in (x, w, b))
        mean, var = lib.zeros(5, 3), lib.ones(5, 3) * 2
        if affine == "batched":
            out = vm(lambda t, m, v, w_, b_: F.batch_norm(t, m, v, w_, b_, training=training))(xs, mean, var, ws, bs)
        else:
            weight, bias = (ws[0], bs[0]) if affine == "shared" else (None, None)
            out = vm(lambda t, m, v: F.batch_norm(t, m, v, weight, bias, training=training))(xs, mean, var)
        results.append((out, mean, var))
    (t_out, t_mean, t_var), (e_out, e_mean, e_var) = results
    _same(e_out, t_out)
    _same(e_mean, t_mean)
    _same(e_var, t_var)
    _strides_same(e_out, t_out)


def test_vmap_batch_norm_shared_running_stats():
    x = torch.randn(5, 4, 3)
    for lib, F, vm in ((torch, torch.nn.functional, tf.vmap), (ember, ember.nn.functional, ef.vmap)):
        xs = _ember(x) if lib is ember else x
        mean, var = lib.zeros(3), lib.ones(3)
        with pytest.raises(RuntimeError) as e:
            vm(lambda t: F.batch_norm(t, mean, var, training=True))(xs)
        assert str(e.value).startswith("Batch norm got a batched tensor as input while the running_mean")
        if lib is torch:
            want = str(e.value)
        else:
            assert str(e.value) == want
    # eval with shared statistics and no statistics at all are fine
    both(lambda lib, F, t: F.vmap(lambda s: lib.nn.functional.batch_norm(s, lib.ones(3), lib.ones(3) * 4))(t), x)
    both(lambda lib, F, t: F.vmap(lambda s: lib.nn.functional.batch_norm(s, None, None, training=True))(t), x)
    both(lambda lib, F, t: F.vmap(lib.nn.BatchNorm1d(3, track_running_stats=False))(t), x)


def test_vmap_embedding(no_fallback):
    rng = np.random.default_rng(1)
    table = torch.from_numpy(rng.standard_normal((10, 4)).astype("float32"))
    tables = torch.from_numpy(rng.standard_normal((5, 10, 4)).astype("float32"))
    idx = torch.from_numpy(rng.integers(0, 10, (5, 2, 7)))
    for fn in (
        lambda lib, F, i, t, ts: F.vmap(lambda s: lib.nn.functional.embedding(s, t))(i),
        lambda lib, F, i, t, ts: F.vmap(lambda s, w: lib.nn.functional.embedding(s, w))(i, ts),
        lambda lib, F, i, t, ts: F.vmap(lambda w: lib.nn.functional.embedding(i[0], w), in_dims=0)(ts),
        lambda lib, F, i, t, ts: F.vmap(lambda s: lib.nn.functional.embedding(s, t, padding_idx=0))(i),
    ):
        both(fn, idx, table, tables)
    # gradients reach each sample's table
    g = ef.grad(lambda w, i: ember.nn.functional.embedding(i, w).sum())
    gt = tf.grad(lambda w, i: torch.nn.functional.embedding(i, w).sum())
    _same(ef.vmap(g)(_ember(tables), _ember(idx)), tf.vmap(gt)(tables, idx))


@pytest.mark.parametrize(
    "call",
    [
        lambda F, t: F.max_pool2d(t, 2),
        lambda F, t: F.max_pool2d(t, 2, return_indices=True),
        lambda F, t: F.avg_pool2d(t, 2, stride=1, padding=1),
        lambda F, t: F.adaptive_avg_pool2d(t, (2, 3)),
        lambda F, t: F.adaptive_max_pool2d(t, 2, return_indices=True),
        lambda F, t: F.max_pool1d(t[0], 3),
        lambda F, t: F.avg_pool1d(t[:, 0], 2),
        lambda F, t: F.max_pool3d(t[None], (1, 2, 2)),
        lambda F, t: F.lp_pool2d(t, 2.0, 2),
    ],
)
def test_vmap_pooling(no_fallback, call):
    x = torch.randn(5, 4, 3, 6, 8)
    both(lambda lib, F, t: F.vmap(lambda s: call(lib.nn.functional, s))(t), x)
    want = tf.vmap(lambda s: call(torch.nn.functional, s))(x)
    got = ef.vmap(lambda s: call(ember.nn.functional, s))(_ember(x))
    for g, w in zip(tree_flatten(got)[0], torch.utils._pytree.tree_flatten(want)[0]):
        _strides_same(g, w)


@pytest.mark.parametrize("name", ["sin", "exp", "tanh", "sum"])
def test_transforms_of_an_operator_itself(name):
    # jacrev(torch.sin) holds the builtin itself: inside the vmap over rows
    # it must still reach the batching rules.
    x = torch.linspace(-1, 1, 4)
    both(lambda lib, F, v: F.jacrev(getattr(lib, name))(v), x)
    both(lambda lib, F, v: F.jacfwd(getattr(lib, name))(v), x)
    both(lambda lib, F, v: F.vmap(F.jacrev(getattr(lib, name)))(v.reshape(2, 2)), x)
    both(lambda lib, F, v: F.hessian(getattr(lib, name))(v), x)
