"""nn.functional activations, softmax family, dropout and embedding, and their
modules, against torch: values, dtypes, grad_fn names, gradients, reprs, errors."""

from __future__ import annotations

import warnings

import pytest
from _nn_helpers import close, from_torch, pair_randn, same_error
from conftest import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

EF, TF = ember.nn.functional, torch.nn.functional

# (name, kwargs): the same call in both libraries.
ACTIVATIONS = [
    ("relu", {}),
    ("relu6", {}),
    ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {}),
    ("elu", {"alpha": 0.5}),
    ("selu", {}),
    ("celu", {"alpha": 1.5}),
    ("gelu", {}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("mish", {}),
    ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 1.0}),
    ("hardtanh", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    ("hardsigmoid", {}),
    ("hardswish", {}),
    ("logsigmoid", {}),
    ("tanh", {}),
    ("sigmoid", {}),
    ("threshold", {"threshold": 0.1, "value": -3.0}),
    ("softsign", {}),
    ("tanhshrink", {}),
]
INPLACE = {"relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh", "hardsigmoid",
           "hardswish", "threshold"}


def _values(shape, seed=0, scale=3.0):
    # Values spread over the interesting ranges (including +-3 and 0 for the hard* kinks).
    e, t = pair_randn(shape, "float64", seed=seed, scale=scale)
    return t


def _call(lib_f, name, x, kw):
    return getattr(lib_f, name)(x, **kw)


@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_activation_forward(name, kw, dtype):
    t = _values((4, 7)).to(getattr(torch, dtype))
    t[0, :4] = torch.tensor([-3.0, 3.0, 0.0, 25.0])
    e = from_torch(t)
    # non-contiguous: a transposed view
    for ee, tt in ((e, t), (e.t(), t.t())):
        close(_call(EF, name, ee, kw), _call(TF, name, tt, kw))


@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=lambda v: str(v))
def test_activation_backward_float64(name, kw):
    t = _values((3, 5), seed=1)
    t[0, :3] = torch.tensor([-2.5, 2.5, 0.3], dtype=torch.float64)
    t.requires_grad_(True)
    e = from_torch(t)
    re, rt = _call(EF, name, e, kw), _call(TF, name, t, kw)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    g = torch.linspace(-1, 1, 15, dtype=torch.float64).reshape(3, 5)
    re.backward(from_torch(g))
    rt.backward(g)
    close(e.grad, t.grad)


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_activation_inplace(name):
    kw = dict(next(k for n, k in ACTIVATIONS if n == name))
    if name == "threshold":
        t = _values((2, 6))
        e = from_torch(t)
        out_e = EF.threshold(e, 0.1, -3.0, inplace=True)
        out_t = TF.threshold(t, 0.1, -3.0, inplace=True)
    else:
        t = _values((2, 6))
        e = from_torch(t)
        out_e = getattr(EF, name)(e, inplace=True, **kw)
        out_t = getattr(TF, name)(t, inplace=True, **kw)
    assert out_e is e
    close(e, t)
    close(out_e, out_t)


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_backward_through_clone(name):
    kw = dict(next(k for n, k in ACTIVATIONS if n == name))
    t = _values((2, 4)).requires_grad_(True)
    e = from_torch(t)
    ye = getattr(EF, name)(e * 1, inplace=True, **kw)
    yt = getattr(TF, name)(t * 1, inplace=True, **kw)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
    ye.sum().backward()
    yt.sum().backward()
    close(e.grad, t.grad)


def test_integer_hardtanh_threshold_and_dtype_errors():
    e = ember.tensor([-3, 0, 2, 7])
    t = torch.tensor([-3, 0, 2, 7])
    close(EF.hardtanh(e, -1, 3), TF.hardtanh(t, -1, 3))
    close(EF.threshold(e, 1, 9), TF.threshold(t, 1, 9))
    for name in ("leaky_relu", "elu", "softplus", "mish", "hardswish", "logsigmoid"):
        same_error(lambda: getattr(EF, name)(e), lambda: getattr(TF, name)(t), match_message=False)


def test_hardtanh_bad_range():
    e, t = pair_randn((3,))
    same_error(lambda: EF.hardtanh(e, 2.0, 1.0), lambda: TF.hardtanh(t, 2.0, 1.0))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu(dim):
    t = _values((4, 6)).requires_grad_(True)
    e = from_torch(t)
    re, rt = EF.glu(e, dim), TF.glu(t, dim)
    close(re, rt)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == "GluBackward0"
    re.sum().backward()
    rt.sum().backward()
    close(e.grad, t.grad)


def test_glu_errors():
    e, t = pair_randn((3, 5))
    same_error(lambda: EF.glu(e, 1), lambda: TF.glu(t, 1))
    same_error(lambda: EF.glu(from_torch(torch.tensor(1.0))), lambda: TF.glu(torch.tensor(1.0)))


# ---- softmax family -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(name, dim):
    t = _values((3, 4, 5)).requires_grad_(True)
    e = from_torch(t)
    re, rt = getattr(EF, name)(e, dim), getattr(TF, name)(t, dim)
    close(re, rt)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    re.backward(from_torch(torch.ones_like(rt) * 0.3))
    rt.backward(torch.ones_like(rt) * 0.3)
    close(e.grad, t.grad)
    # dtype= casts first
    close(
        getattr(EF, name)(e.to(ember.float32), dim, dtype=ember.float64),
        getattr(TF, name)(t.to(torch.float32), dim, dtype=torch.float64),
    )


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_implicit_dim_warns(name, shape):
    t = _values(shape)
    e = from_torch(t)
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        re = getattr(EF, name)(e)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        rt = getattr(TF, name)(t)
    close(re, rt)
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]


def test_normalize():
    for p, dim in ((2.0, 1), (1.0, 0), (3.0, -1)):
        t = _values((3, 4)).requires_grad_(True)
        e = from_torch(t)
        re, rt = EF.normalize(e, p, dim), TF.normalize(t, p, dim)
        close(re, rt)
        re.sum().backward()
        rt.sum().backward()
        close(e.grad, t.grad)
    z = torch.zeros(2, 3)
    close(EF.normalize(from_torch(z)), TF.normalize(z))


# ---- modules ------------------------------------------------------------------------------------

MODULES = [
    ("ReLU", (), {}), ("ReLU", (True,), {}), ("ReLU6", (), {}), ("ReLU6", (True,), {}), ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2, True), {}), ("ELU", (), {}), ("ELU", (0.5, True), {}), ("CELU", (2.0,), {}),
    ("SELU", (), {}), ("SELU", (True,), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}),
    ("SiLU", (True,), {}), ("Mish", (), {}), ("Softplus", (), {}), ("Softplus", (2, 10), {}),
    ("Hardtanh", (), {}), ("Hardtanh", (-2.0, 2.0, True), {}), ("Hardsigmoid", (), {}), ("Hardswish", (), {}),
    ("LogSigmoid", (), {}), ("Threshold", (0.1, 2.0), {}), ("GLU", (), {}), ("GLU", (0,), {}),
    ("Softmax", (), {"dim": 1}), ("Softmax", (), {}), ("LogSoftmax", (1,), {}), ("Softmin", (0,), {}),
    ("Sigmoid", (), {}), ("Tanh", (), {}), ("Softsign", (), {}), ("Tanhshrink", (), {}),
    ("Dropout", (), {}), ("Dropout", (0.2, True), {}), ("Dropout1d", (0.3,), {}), ("Dropout2d", (0.3,), {}),
    ("Identity", (), {}), ("Flatten", (), {}), ("Unflatten", (1, (2, 2)), {}),
]


@pytest.mark.parametrize("cls,args,kw", MODULES, ids=lambda v: str(v))
def test_module_repr_and_forward(cls, args, kw):
    me, mt = getattr(ember.nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    assert repr(me) == repr(mt)
    if cls.startswith("Dropout"):
        me.eval()
        mt.eval()
    t = _values((2, 4))
    e = from_torch(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(me(e), mt(t.clone()))


def test_sequential_repr_with_activations():
    def build(nn):
        return nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.1), nn.Dropout(0.1), nn.Linear(4, 2), nn.LogSoftmax(1))

    assert repr(build(ember.nn)) == repr(build(torch.nn))


# ---- dropout -------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_same_mask_bit_for_bit(p, dtype):
    t = _values((7, 33)).to(getattr(torch, dtype))
    e = from_torch(t)
    ember.manual_seed(123)
    torch.manual_seed(123)
    re, rt = EF.dropout(e, p), TF.dropout(t, p)
    assert torch.equal(torch.tensor(re.tolist(), dtype=rt.dtype), rt)
    # the generator advanced the same way: the next draw matches too
    assert ember.rand(3).tolist() == torch.rand(3).tolist()


def test_dropout_autograd_and_modes():
    t = _values((4, 5)).requires_grad_(True)
    e = from_torch(t)
    ember.manual_seed(0)
    torch.manual_seed(0)
    re, rt = EF.dropout(e, 0.3), TF.dropout(t, 0.3)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == "MulBackward0"
    re.sum().backward()
    rt.sum().backward()
    close(e.grad, t.grad, rtol=0, atol=0)
    # not training / p == 0: the input itself
    assert EF.dropout(e, 0.5, training=False) is e
    assert EF.dropout(e, 0.0) is e
    # p == 1: zeros
    close(EF.dropout(e.detach(), 1.0), TF.dropout(t.detach(), 1.0))
    for p in (-0.1, 1.5):
        same_error(lambda: EF.dropout(e, p), lambda: TF.dropout(t, p))
        with pytest.raises(ValueError):
            ember.nn.Dropout(p)


def test_dropout_inplace_and_module():
    t = _values((3, 8))
    e = from_torch(t)
    ember.manual_seed(5)
    torch.manual_seed(5)
    out = EF.dropout(e, 0.4, inplace=True)
    TF.dropout(t, 0.4, inplace=True)
    assert out is e
    close(e, t, rtol=0, atol=0)
    me, mt = ember.nn.Dropout(0.25), torch.nn.Dropout(0.25)
    x = _values((6, 6))
    ember.manual_seed(9)
    torch.manual_seed(9)
    close(me(from_torch(x)), mt(x), rtol=0, atol=0)
    me.eval()
    xe = from_torch(x)
    assert me(xe) is xe


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 5)])
def test_dropout2d_same_mask(shape):
    t = _values(shape)
    e = from_torch(t)
    ember.manual_seed(11)
    torch.manual_seed(11)
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        re = EF.dropout2d(e, 0.5)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        rt = TF.dropout2d(t, 0.5)
    close(re, rt, rtol=0, atol=0)
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]


def test_dropout1d_same_mask():
    for shape in ((2, 3, 4), (3, 4)):
        t = _values(shape)
        e = from_torch(t)
        ember.manual_seed(3)
        torch.manual_seed(3)
        close(EF.dropout1d(e, 0.5), TF.dropout1d(t, 0.5), rtol=0, atol=0)


# ---- embedding -----------------------------------------------------------------------------------


@pytest.mark.parametrize("idx_shape", [(5,), (2, 3), (2, 2, 2)])
@pytest.mark.parametrize("padding_idx", [None, 1, -2])
def test_embedding_forward_backward(idx_shape, padding_idx):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(6, 4, generator=g, dtype=torch.float64, requires_grad=True)
    idx = torch.randint(0, 6, idx_shape, generator=g)
    idx.view(-1)[0] = 1
    we, ie = from_torch(w), from_torch(idx)
    re = EF.embedding(ie, we, padding_idx=padding_idx)
    rt = TF.embedding(idx, w, padding_idx=padding_idx)
    close(re, rt)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == "EmbeddingBackward0"
    go = torch.randn(rt.shape, generator=g, dtype=torch.float64)
    re.backward(from_torch(go))
    rt.backward(go)
    close(we.grad, w.grad)


def test_embedding_scale_grad_by_freq_and_int32_indices():
    w = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[0, 2, 2], [4, 2, 0]], dtype=torch.int32)
    we = from_torch(w)
    re = EF.embedding(from_torch(idx), we, scale_grad_by_freq=True)
    rt = TF.embedding(idx, w, scale_grad_by_freq=True)
    close(re, rt)
    re.sum().backward()
    rt.sum().backward()
    close(we.grad, w.grad)


def test_embedding_max_norm_renormalises_weight():
    w = torch.randn(6, 4, dtype=torch.float64) * 3
    idx = torch.tensor([0, 3, 3, 5])
    we = from_torch(w)
    re = EF.embedding(from_torch(idx), we, max_norm=1.0)
    rt = TF.embedding(idx, w, max_norm=1.0)
    close(re, rt)
    close(we, w)


def test_embedding_errors():
    w = torch.randn(4, 3)
    we = from_torch(w)
    same_error(lambda: EF.embedding(ember.tensor([1.0]), we), lambda: TF.embedding(torch.tensor([1.0]), w))
    same_error(lambda: EF.embedding(ember.tensor([7]), we), lambda: TF.embedding(torch.tensor([7]), w))
    for pad in (4, -5):
        same_error(lambda: EF.embedding(ember.tensor([1]), we, padding_idx=pad),
                   lambda: TF.embedding(torch.tensor([1]), w, padding_idx=pad))


def test_embedding_module():
    ember.manual_seed(0)
    torch.manual_seed(0)
    me, mt = ember.nn.Embedding(10, 3, padding_idx=2), torch.nn.Embedding(10, 3, padding_idx=2)
    assert repr(me) == repr(mt)
    close(me.weight, mt.weight, rtol=0, atol=0)
    idx = torch.tensor([[1, 2, 3], [2, 9, 0]])
    close(me(from_torch(idx)), mt(idx))
    for kw in ({"max_norm": 1.0}, {"norm_type": 1.0}, {"scale_grad_by_freq": True}, {"padding_idx": -1}):
        assert repr(ember.nn.Embedding(4, 2, **kw)) == repr(torch.nn.Embedding(4, 2, **kw))
    w = torch.randn(4, 2)
    pe = ember.nn.Embedding.from_pretrained(from_torch(w))
    pt = torch.nn.Embedding.from_pretrained(w)
    assert repr(pe) == repr(pt)
    assert pe.weight.requires_grad is pt.weight.requires_grad is False
    assert ember.nn.Embedding.from_pretrained(from_torch(w), freeze=False).weight.requires_grad
    assert list(me.state_dict().keys()) == list(mt.state_dict().keys())


# ---- nn.init ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,kw", [
    ("xavier_uniform_", {}), ("xavier_normal_", {"gain": 2.0}), ("kaiming_uniform_", {"a": 0.3}),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}), ("trunc_normal_", {}),
    ("trunc_normal_", {"mean": 0.5, "std": 0.2, "a": 0.0, "b": 1.0}), ("trunc_normal_", {"a": 1.0, "b": 1.5}),
    ("trunc_normal_", {"std": 0.02}), ("uniform_", {"a": -2, "b": 3}),
    ("normal_", {"mean": 1.0, "std": 0.1}),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_init_draws_same_numbers(name, kw, dtype):
    te = ember.empty(7, 5, 3, dtype=getattr(ember, dtype))
    tt = torch.empty(7, 5, 3, dtype=getattr(torch, dtype))
    ember.manual_seed(42)
    torch.manual_seed(42)
    getattr(ember.nn.init, name)(te, **kw)
    getattr(torch.nn.init, name)(tt, **kw)
    close(te, tt, rtol=0, atol=0)


def test_erfinv_matches():
    t = torch.linspace(-1, 1, 401, dtype=torch.float64)
    # the same method; the last bit can differ where PyTorch's build contracts differently
    close(ember.erfinv(from_torch(t)), torch.erfinv(t), rtol=1e-14, atol=1e-14)
    close(ember.erfinv(from_torch(t.to(torch.float32))), torch.erfinv(t.to(torch.float32)), rtol=1e-6, atol=1e-6)
    x = torch.tensor([0.1, -0.5, 0.9], dtype=torch.float64, requires_grad=True)
    e = from_torch(x)
    ember.erfinv(e).sum().backward()
    torch.erfinv(x).sum().backward()
    close(e.grad, x.grad)


def test_eye_and_dirac():
    for shape, fn, kw in (((3, 5), "eye_", {}), ((4, 2, 3), "dirac_", {}), ((4, 2, 3, 3), "dirac_", {"groups": 2}),
                          ((2, 2, 3, 3, 3), "dirac_", {})):
        te, tt = ember.empty(*shape), torch.empty(*shape)
        getattr(ember.nn.init, fn)(te, **kw)
        getattr(torch.nn.init, fn)(tt, **kw)
        close(te, tt, rtol=0, atol=0)
    same_error(lambda: ember.nn.init.eye_(ember.empty(2)), lambda: torch.nn.init.eye_(torch.empty(2)))
    same_error(lambda: ember.nn.init.dirac_(ember.empty(3, 2)), lambda: torch.nn.init.dirac_(torch.empty(3, 2)))


# ---- shapes: hypothesis ------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    case=st.sampled_from(ACTIVATIONS),
    dtype=st.sampled_from(["float32", "float64"]),
    seed=st.integers(0, 1000),
)
def test_activation_shapes_hypothesis(shape, case, dtype, seed):
    name, kw = case
    g = torch.Generator().manual_seed(seed)
    t = (torch.randn(tuple(shape), generator=g, dtype=torch.float64) * 4).to(getattr(torch, dtype))
    close(_call(EF, name, from_torch(t), kw), _call(TF, name, t, kw))


def test_embedding_renorm_in_place_as_torch():
    import torch as T

    w = T.randn(6, 4, generator=T.Generator().manual_seed(5)) * 3
    idx = [0, 2, 2, 5]
    ew = ember.tensor(w.tolist())
    got = ember.embedding_renorm_(ew, ember.tensor(idx), 1.5, 2.0)
    want = T.embedding_renorm_(w, T.tensor(idx), 1.5, 2.0)
    assert got is ew
    assert T.allclose(T.tensor(ew.tolist()), want, rtol=1e-6)


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (7, 3), (6, 2, 3)])
def test_orthogonal_init_as_torch(shape):
    import torch as T

    T.manual_seed(3)
    ember.manual_seed(3)
    want = T.nn.init.orthogonal_(T.empty(shape), gain=1.5)
    got = ember.nn.init.orthogonal_(ember.empty(shape), gain=1.5)
    assert T.allclose(T.tensor(got.tolist()), want, atol=2e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        ember.nn.init.orthogonal_(ember.empty(3))
