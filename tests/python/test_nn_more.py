"""The further nn.functional functions (RMS/instance/local response norm, PReLU,
shrinks, distances, shuffles, bilinear, alpha dropout, gumbel softmax) against
torch: values (bit for bit where PyTorch's computation is a composite of
operators Ember has), dtypes, gradients, argument errors."""

from __future__ import annotations

import pytest
from _nn_helpers import as_torch, close, from_torch, same_error
from conftest import torch

import ember

EF, TF = ember.nn.functional, torch.nn.functional
DTYPES = ["float32", "float64"]


def randn(*shape, seed=0, dtype="float64", requires_grad=False, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    t = (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(getattr(torch, dtype))
    return t.requires_grad_(requires_grad)


def exact(e, t):
    """Same dtype, shape and bits."""
    assert str(e.dtype) == str(t.dtype), f"{e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"{tuple(e.shape)} != {tuple(t.shape)}"
    got = as_torch(e)
    assert torch.equal(got, t.detach()) or torch.allclose(got, t.detach(), rtol=0, atol=0, equal_nan=True), \
        f"max diff {(got - t.detach()).abs().max()}"


def check(fe, ft, inputs, grad_of=None, bitwise=False, **tol):
    """fe(*ember inputs) vs ft(*torch inputs): values (bitwise, or to rounding where a
    reduction is involved: Ember's sums may add in another order), then gradients."""
    ins_e = [from_torch(t) if isinstance(t, torch.Tensor) else t for t in inputs]
    re, rt = fe(*ins_e), ft(*inputs)
    if bitwise:
        exact(re, rt)
    else:
        close(re, rt, **tol)
    if rt.requires_grad:
        go = randn(*rt.shape, seed=99, dtype=str(rt.dtype).split(".")[1])
        re.backward(from_torch(go))
        rt.backward(go)
        idx = grad_of if grad_of is not None else [i for i, t in enumerate(inputs)
                                                    if isinstance(t, torch.Tensor) and t.requires_grad]
        for i in idx:
            close(ins_e[i].grad, inputs[i].grad, **tol)
    return re, rt


# ---- rms_norm ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,norm", [((3, 4), [4]), ((2, 3, 5), [3, 5]), ((2, 3, 5), [5]), ((6,), [6])])
@pytest.mark.parametrize("with_weight", [False, True])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(dtype, shape, norm, with_weight, eps):
    x = randn(*shape, dtype=dtype, requires_grad=True)
    w = randn(*norm, seed=3, dtype=dtype, requires_grad=True) if with_weight else None
    check(lambda a, b: EF.rms_norm(a, norm, b, eps), lambda a, b: TF.rms_norm(a, norm, b, eps), [x, w])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rms_norm_half(dtype):
    x = randn(4, 8, dtype=dtype)
    w = randn(8, seed=1, dtype=dtype)
    check(lambda a, b: EF.rms_norm(a, [8], b), lambda a, b: TF.rms_norm(a, [8], b), [x, w])


def test_rms_norm_errors():
    x = randn(3, 4)
    same_error(lambda: EF.rms_norm(from_torch(x), [5]), lambda: TF.rms_norm(x, [5]))
    for shape in ([3, 4, 4], [], [2, 4]):
        same_error(lambda: EF.rms_norm(from_torch(x), shape), lambda: TF.rms_norm(x, shape))


# ---- prelu, hardshrink, softshrink -------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,wn", [((4, 3), 3), ((2, 3, 5), 3), ((2, 3, 4, 4), 3), ((2, 3, 4), 1), ((5,), 1),
                                      ((), 1), ((2, 3, 4, 4), 1)])
def test_prelu(dtype, shape, wn):
    x = randn(*shape, dtype=dtype, requires_grad=True)
    w = randn(wn, seed=5, dtype=dtype, requires_grad=True)
    check(EF.prelu, TF.prelu, [x, w], bitwise=True)


def test_prelu_errors():
    x, w = randn(3, 4), randn(3)
    same_error(lambda: EF.prelu(from_torch(x), from_torch(w)), lambda: TF.prelu(x, w))


@pytest.mark.parametrize("dtype", DTYPES + ["bfloat16"])
@pytest.mark.parametrize("name", ["hardshrink", "softshrink"])
@pytest.mark.parametrize("lambd", [None, 0.0, 0.3, 1.5])
def test_shrinks(dtype, name, lambd):
    x = randn(6, 7, dtype=dtype, requires_grad=dtype != "bfloat16")
    x.data[0, :4] = torch.tensor([0.5, -0.5, 0.3, -0.3]).to(x.dtype)
    kw = {} if lambd is None else {"lambd": lambd}
    check(lambda a: getattr(EF, name)(a, **kw), lambda a: getattr(TF, name)(a, **kw), [x], bitwise=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softshrink_negative_lambda(dtype):
    x = randn(3, dtype=dtype)
    same_error(lambda: EF.softshrink(from_torch(x), -1.0), lambda: TF.softshrink(x, -1.0))


# ---- distances ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s1,s2,dim", [((4, 5), (4, 5), 1), ((4, 5), (4, 5), 0), ((4, 5), (1, 5), 1),
                                       ((2, 3, 4), (3, 4), -1), ((5,), (5,), 0)])
@pytest.mark.parametrize("eps", [1e-8, 0.5])
def test_cosine_similarity(dtype, s1, s2, dim, eps):
    a = randn(*s1, dtype=dtype, requires_grad=True)
    b = randn(*s2, seed=1, dtype=dtype, requires_grad=True)
    check(lambda x, y: EF.cosine_similarity(x, y, dim, eps), lambda x, y: TF.cosine_similarity(x, y, dim, eps), [a, b])


def test_cosine_similarity_zero_vector_and_errors():
    a = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    b = randn(2, 3, requires_grad=True)
    check(EF.cosine_similarity, TF.cosine_similarity, [a, b])
    x, y = randn(3, 4), randn(3, 5)
    same_error(lambda: EF.cosine_similarity(from_torch(x), from_torch(y)), lambda: TF.cosine_similarity(x, y))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("s1,s2", [((4, 5), (4, 5)), ((4, 5), (5,)), ((5,), (5,))])
def test_pairwise_distance(dtype, p, keepdim, s1, s2):
    a = randn(*s1, dtype=dtype, requires_grad=True)
    b = randn(*s2, seed=1, dtype=dtype, requires_grad=True)
    check(lambda x, y: EF.pairwise_distance(x, y, p, 1e-6, keepdim),
          lambda x, y: TF.pairwise_distance(x, y, p, 1e-6, keepdim), [a, b])


@pytest.mark.parametrize("p", [2, 1, 3.5, 0])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_pdist(p, n):
    x = randn(n, 4, requires_grad=True)
    check(lambda a: EF.pdist(a, p), lambda a: TF.pdist(a, p), [x])


def test_pdist_errors():
    x = randn(2, 3, 4)
    same_error(lambda: EF.pdist(from_torch(x)), lambda: TF.pdist(x))


# ---- shuffles ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape,r", [((1, 8, 3, 3), 2), ((2, 9, 2, 4), 3), ((18, 2, 3), 3), ((2, 2, 4, 2, 2), 1)])
def test_pixel_shuffle_roundtrip(shape, r):
    x = randn(*shape, requires_grad=True)
    re, rt = check(lambda a: EF.pixel_shuffle(a, r), lambda a: TF.pixel_shuffle(a, r), [x], bitwise=True)
    y = randn(*rt.shape, seed=2, requires_grad=True)
    check(lambda a: EF.pixel_unshuffle(a, r), lambda a: TF.pixel_unshuffle(a, r), [y], bitwise=True)


@pytest.mark.parametrize("fn,shape,r", [("pixel_shuffle", (4, 4), 2), ("pixel_shuffle", (1, 5, 4, 4), 2),
                                        ("pixel_unshuffle", (1, 5, 5, 4), 2), ("pixel_unshuffle", (1, 5, 4, 5), 2),
                                        ("pixel_unshuffle", (1, 5, 4, 4), 0), ("pixel_unshuffle", (4, 4), 2)])
def test_pixel_shuffle_errors(fn, shape, r):
    x = randn(*shape)
    same_error(lambda: getattr(EF, fn)(from_torch(x), r), lambda: getattr(TF, fn)(x, r))


@pytest.mark.parametrize("shape,g", [((2, 6, 3), 2), ((1, 6, 2, 2), 3), ((2, 4, 1, 2, 2), 4), ((2, 6, 3), 1)])
def test_channel_shuffle(shape, g):
    x = randn(*shape, requires_grad=True)
    check(lambda a: EF.channel_shuffle(a, g), lambda a: TF.channel_shuffle(a, g), [x], bitwise=True)


@pytest.mark.parametrize("shape,g", [((2, 5, 3), 2), ((2, 6), 2)])
def test_channel_shuffle_errors(shape, g):
    x = randn(*shape)
    same_error(lambda: EF.channel_shuffle(from_torch(x), g), lambda: TF.channel_shuffle(x, g))


# ---- instance_norm, local_response_norm --------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 4), (1, 2, 2, 3, 2)])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("running", [False, True])
def test_instance_norm(dtype, shape, affine, running):
    x = randn(*shape, dtype=dtype, requires_grad=True)
    c = shape[1]
    w = randn(c, seed=1, dtype=dtype, requires_grad=True) if affine else None
    b = randn(c, seed=2, dtype=dtype, requires_grad=True) if affine else None
    rm_t = randn(c, seed=3, dtype=dtype) if running else None
    rv_t = randn(c, seed=4, dtype=dtype).abs() if running else None
    rm_e = from_torch(rm_t) if running else None
    rv_e = from_torch(rv_t) if running else None
    check(lambda a, ww, bb: EF.instance_norm(a, rm_e, rv_e, ww, bb, momentum=0.2),
          lambda a, ww, bb: TF.instance_norm(a, rm_t, rv_t, ww, bb, momentum=0.2), [x, w, b])
    if running:
        close(rm_e, rm_t)
        close(rv_e, rv_t)
        y = randn(*shape, seed=7, dtype=dtype)
        check(lambda a: EF.instance_norm(a, rm_e, rv_e, use_input_stats=False),
              lambda a: TF.instance_norm(a, rm_t, rv_t, use_input_stats=False), [y])


def test_instance_norm_errors():
    x = randn(1, 5, 1)
    same_error(lambda: EF.instance_norm(from_torch(x)), lambda: TF.instance_norm(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 6, 3, 3), (1, 4, 2, 2, 3)])
@pytest.mark.parametrize("size,alpha,beta,k", [(2, 1e-4, 0.75, 1.0), (3, 0.5, 0.6, 2.0), (5, 1.0, 1.0, 1.0)])
def test_local_response_norm(dtype, shape, size, alpha, beta, k):
    x = randn(*shape, dtype=dtype, requires_grad=True)
    check(lambda a: EF.local_response_norm(a, size, alpha, beta, k),
          lambda a: TF.local_response_norm(a, size, alpha, beta, k), [x])


def test_local_response_norm_errors():
    x = randn(3)
    same_error(lambda: EF.local_response_norm(from_torch(x), 2), lambda: TF.local_response_norm(x, 2))


# ---- bilinear ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lead", [(4,), (2, 3), ()])
@pytest.mark.parametrize("with_bias", [True, False])
def test_bilinear(dtype, lead, with_bias):
    a = randn(*lead, 3, dtype=dtype, requires_grad=True)
    b = randn(*lead, 4, seed=1, dtype=dtype, requires_grad=True)
    w = randn(5, 3, 4, seed=2, dtype=dtype, requires_grad=True)
    bias = randn(5, seed=3, dtype=dtype, requires_grad=True) if with_bias else None
    check(EF.bilinear, TF.bilinear, [a, b, w, bias])


@pytest.mark.parametrize("s1,s2,sw", [((3, 4), (3, 5), (2, 4, 6)), ((3, 4), (3, 5), (2, 3, 5)),
                                      ((3, 4), (2, 5), (2, 4, 5))])
def test_bilinear_errors(s1, s2, sw):
    a, b, w = randn(*s1), randn(*s2), randn(*sw)
    same_error(lambda: EF.bilinear(from_torch(a), from_torch(b), from_torch(w)), lambda: TF.bilinear(a, b, w))


# ---- alpha dropout, gumbel softmax --------------------------------------------------------


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("training", [False, True])
def test_alpha_dropout_same_seed(name, p, training):
    x = randn(4, 5, 3, requires_grad=True)
    torch.manual_seed(3)
    ember.manual_seed(3)
    check(lambda a: getattr(EF, name)(a, p, training), lambda a: getattr(TF, name)(a, p, training), [x],
          bitwise=True)


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_errors_and_inplace(name):
    x = randn(4, 5)
    same_error(lambda: getattr(EF, name)(from_torch(x), 1.5), lambda: getattr(TF, name)(x, 1.5))
    torch.manual_seed(1)
    ember.manual_seed(1)
    e = from_torch(x)
    getattr(EF, name)(e, 0.5, True, True)
    getattr(TF, name)(x, 0.5, True, True)
    exact(e, x)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("tau,dim", [(1.0, -1), (0.5, 0)])
def test_gumbel_softmax_same_seed(hard, tau, dim):
    x = randn(3, 6, requires_grad=True)
    torch.manual_seed(0)
    ember.manual_seed(0)
    check(lambda a: EF.gumbel_softmax(a, tau, hard, dim=dim), lambda a: TF.gumbel_softmax(a, tau, hard, dim=dim),
          [x])


# ---- modules ------------------------------------------------------------------------------

# (constructor args, kwargs, input shapes): the same module in both libraries.
MODULES = [
    ("RMSNorm", (4,), {}, [(3, 4)]),
    ("RMSNorm", ([3, 4],), {"eps": 1e-3, "elementwise_affine": False}, [(2, 3, 4)]),
    ("PReLU", (), {}, [(2, 3, 4)]),
    ("PReLU", (3, 0.1), {}, [(2, 3, 4)]),
    ("Hardshrink", (), {}, [(3, 5)]),
    ("Softshrink", (0.3,), {}, [(3, 5)]),
    ("Softmax2d", (), {}, [(2, 3, 4, 4)]),
    ("Softmax2d", (), {}, [(3, 4, 4)]),
    ("CosineSimilarity", (), {}, [(3, 5), (3, 5)]),
    ("CosineSimilarity", (0, 1e-4), {}, [(3, 5), (3, 5)]),
    ("PairwiseDistance", (), {}, [(3, 5), (3, 5)]),
    ("PairwiseDistance", (1.0, 1e-3, True), {}, [(3, 5), (3, 5)]),
    ("PixelShuffle", (2,), {}, [(1, 8, 3, 3)]),
    ("PixelUnshuffle", (2,), {}, [(1, 2, 4, 6)]),
    ("ChannelShuffle", (2,), {}, [(2, 4, 3)]),
    ("InstanceNorm1d", (3,), {}, [(2, 3, 5)]),
    ("InstanceNorm1d", (3,), {"affine": True}, [(3, 5)]),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, [(2, 3, 4, 4)]),
    ("InstanceNorm3d", (2,), {"momentum": 0.3, "track_running_stats": True}, [(2, 2, 3, 2, 2)]),
    ("LocalResponseNorm", (2,), {}, [(2, 4, 3, 3)]),
    ("LocalResponseNorm", (3, 0.1, 0.5, 2.0), {}, [(2, 4, 3)]),
    ("Bilinear", (3, 4, 5), {}, [(2, 3), (2, 4)]),
    ("Bilinear", (3, 4, 5), {"bias": False}, [(2, 3), (2, 4)]),
    ("AlphaDropout", (), {}, [(3, 4)]),
    ("FeatureAlphaDropout", (0.2,), {}, [(3, 4, 2)]),
]


@pytest.mark.parametrize("name,args,kw,shapes", MODULES, ids=lambda v: v if isinstance(v, str) else None)
def test_module_against_torch(name, args, kw, shapes):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kw).double()
    ember.manual_seed(0)
    em = getattr(ember.nn, name)(*args, **kw).double()
    assert repr(em) == repr(tm)
    # Same parameters and buffers, names, shapes and (same seed) initial values.
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in em.named_buffers()] == [n for n, _ in tm.named_buffers()]
    for (_, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        exact(pe.detach(), pt.detach())
    ins = [randn(*s, seed=i, requires_grad=True) for i, s in enumerate(shapes)]
    for training in (True, False):
        tm.train(training)
        em.train(training)
        ins = [t.detach().requires_grad_(True) for t in ins]
        check(em, tm, ins)
        for (_, be), (_, bt) in zip(em.named_buffers(), tm.named_buffers()):
            close(be, bt)
        for (_, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
            if pt.grad is not None:
                close(pe.grad, pt.grad)
                pe.grad, pt.grad = None, None


def test_bilinear_same_seed_float32():
    torch.manual_seed(0)
    ember.manual_seed(0)
    tm, em = torch.nn.Bilinear(3, 4, 5), ember.nn.Bilinear(3, 4, 5)
    exact(em.weight.detach(), tm.weight.detach())
    exact(em.bias.detach(), tm.bias.detach())


@pytest.mark.parametrize("name,args,kw,shape", [
    ("InstanceNorm1d", (3,), {}, (2, 3, 4, 4)),
    ("InstanceNorm2d", (3,), {}, (3, 4)),
    ("InstanceNorm2d", (3,), {"affine": True}, (2, 4, 3, 3)),
    ("Softmax2d", (), {}, (3, 4)),
], ids=lambda v: v if isinstance(v, str) else None)
def test_module_errors(name, args, kw, shape):
    x = randn(*shape)
    same_error(lambda: getattr(ember.nn, name)(*args, **kw)(from_torch(x)),
               lambda: getattr(torch.nn, name)(*args, **kw)(x))


def test_instance_norm_channel_mismatch_warns():
    x = randn(2, 4, 5)
    with pytest.warns(UserWarning, match="does not match num_features"):
        ember.nn.InstanceNorm1d(3)(from_torch(x))


@pytest.mark.parametrize("bias", [True, False])
def test_lazy_linear(bias):
    x = randn(2, 5, 4, dtype="float32", requires_grad=True)
    torch.manual_seed(0)
    ember.manual_seed(0)
    tm, em = torch.nn.LazyLinear(3, bias=bias), ember.nn.LazyLinear(3, bias=bias)
    assert repr(em) == repr(tm)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert em.has_uninitialized_params() and repr(em.weight) == repr(tm.weight)
    check(em, tm, [x])
    assert type(em) is ember.nn.Linear and type(em.weight) is ember.nn.Parameter
    assert repr(em) == repr(tm)
    for (_, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        exact(pe.detach(), pt.detach())
        close(pe.grad, pt.grad)


# ---- dropout3d, rrelu, lp pooling, BatchNorm3d -------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 2, 2, 2), (3, 2, 2, 2)])
@pytest.mark.parametrize("p,training", [(0.4, True), (0.4, False), (1.0, True)])
def test_dropout3d_same_seed(shape, p, training):
    x = randn(*shape, requires_grad=True)
    torch.manual_seed(5)
    ember.manual_seed(5)
    check(lambda a: EF.dropout3d(a, p, training), lambda a: TF.dropout3d(a, p, training), [x], bitwise=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("lower,upper", [(1.0 / 8, 1.0 / 3), (0.1, 0.9)])
def test_rrelu_same_seed(dtype, training, lower, upper):
    x = randn(4, 6, dtype=dtype, requires_grad=True)
    torch.manual_seed(2)
    ember.manual_seed(2)
    # The same draws; float32 products can round differently by an ulp.
    check(lambda a: EF.rrelu(a, lower, upper, training), lambda a: TF.rrelu(a, lower, upper, training), [x],
          bitwise=dtype == "float64" or not training)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("kernel,stride,ceil_mode", [(2, None, False), (3, 1, False), (3, 2, True)])
def test_lp_pool(norm_type, kernel, stride, ceil_mode):
    x = randn(2, 3, 7, requires_grad=True)
    check(lambda a: EF.lp_pool1d(a, norm_type, kernel, stride, ceil_mode),
          lambda a: TF.lp_pool1d(a, norm_type, kernel, stride, ceil_mode), [x])
    y = randn(2, 3, 7, 6, requires_grad=True)
    k2 = (kernel, 2)
    check(lambda a: EF.lp_pool2d(a, norm_type, k2, stride, ceil_mode),
          lambda a: TF.lp_pool2d(a, norm_type, k2, stride, ceil_mode), [y])


MORE_MODULES = [
    ("RReLU", (), {}, [(3, 5)]),
    ("RReLU", (0.1, 0.2), {}, [(3, 5)]),
    ("LPPool1d", (2, 3), {}, [(2, 3, 7)]),
    ("LPPool2d", (1.5, (2, 3), 1), {"ceil_mode": True}, [(2, 3, 5, 6)]),
    ("Dropout3d", (), {}, [(2, 3, 2, 2, 2)]),
    ("BatchNorm3d", (3,), {}, [(2, 3, 2, 2, 2)]),
    ("BatchNorm3d", (3,), {"affine": False, "momentum": None}, [(2, 3, 2, 2, 2)]),
]


@pytest.mark.parametrize("name,args,kw,shapes", MORE_MODULES, ids=lambda v: v if isinstance(v, str) else None)
def test_more_modules_against_torch(name, args, kw, shapes):
    test_module_against_torch(name, args, kw, shapes)


def test_rrelu_inplace_repr_and_batchnorm3d_error():
    assert repr(ember.nn.RReLU(0.1, 0.2, True)) == repr(torch.nn.RReLU(0.1, 0.2, True))
    x = randn(2, 3, 4)
    same_error(lambda: ember.nn.BatchNorm3d(3)(from_torch(x)), lambda: torch.nn.BatchNorm3d(3)(x))
