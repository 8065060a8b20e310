"""conv1d, conv2d and conv_transpose2d against PyTorch: values, gradients
(input, weight, bias), dtypes, errors, grad_fn names, both backends (oneDNN
where built, and im2col + GEMM), and the Conv modules."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from _nn_helpers import (
    HAS_UNIFORM,
    close,
    copy_params,
    from_torch,
    init_without_rng,
    pair_randn,
    same_error,
)
from conftest import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import ember

F = torch.nn.functional
EF = ember.nn.functional

assert init_without_rng  # a fixture, used by name below


@contextlib.contextmanager
def backend(name):
    """EMBER_CONV_BACKEND=im2col turns the oneDNN path off for the duration."""
    old = os.environ.get("EMBER_CONV_BACKEND")
    if name == "im2col":
        os.environ["EMBER_CONV_BACKEND"] = "im2col"
    else:
        os.environ.pop("EMBER_CONV_BACKEND", None)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("EMBER_CONV_BACKEND", None)
        else:
            os.environ["EMBER_CONV_BACKEND"] = old


def check_against_torch(op_e, op_t, tensors, dtype):
    """Runs both; equal errors, or equal results and gradients of every input."""
    ts = [t for t in tensors if t is not None]
    es = [from_torch(t) for t in ts]
    es_full = iter(es)
    e_args = [next(es_full) if t is not None else None for t in tensors]
    try:
        yt = op_t(*tensors)
    except Exception:  # noqa: BLE001
        same_error(lambda: op_e(*e_args), lambda: op_t(*tensors), match_message=False)
        return None
    ye = op_e(*e_args)
    close(ye, yt)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
    g = torch.randn(yt.shape, dtype=yt.dtype, generator=torch.Generator().manual_seed(1))
    yt.backward(g)
    ye.backward(from_torch(g))
    for e, t in zip(es, ts):
        close(e.grad, t.grad)
    return yt


def draw_dtype_backend(data):
    return data.draw(st.sampled_from(["float32", "float64"])), data.draw(
        st.sampled_from(["auto", "im2col"])
    )


@given(data=st.data())
def test_conv2d_matches_torch(data):
    dtype, be = draw_dtype_backend(data)
    groups = data.draw(st.integers(1, 3))
    cin, cout = groups * data.draw(st.integers(1, 5)), groups * data.draw(st.integers(1, 3))
    n = data.draw(st.integers(1, 3))
    h, w = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9))
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    padding = (data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
    dilation = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 1000)))
    tdt = getattr(torch, dtype)
    x = torch.randn(n, cin, h, w, generator=g, dtype=tdt).requires_grad_(True)
    wt = torch.randn(cout, cin // groups, *k, generator=g, dtype=tdt).requires_grad_(True)
    b = (
        torch.randn(cout, generator=g, dtype=tdt).requires_grad_(True)
        if data.draw(st.booleans())
        else None
    )
    with backend(be):
        check_against_torch(
            lambda x_, w_, b_: ember.conv2d(x_, w_, b_, stride, padding, dilation, groups),
            lambda x_, w_, b_: F.conv2d(x_, w_, b_, stride, padding, dilation, groups),
            [x, wt, b],
            dtype,
        )


@given(data=st.data())
def test_conv1d_matches_torch(data):
    dtype, be = draw_dtype_backend(data)
    groups = data.draw(st.integers(1, 2))
    cin, cout = groups * data.draw(st.integers(1, 5)), groups * data.draw(st.integers(1, 3))
    n, length = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 12))
    k, stride, pad, dil = (
        data.draw(st.integers(1, 4)),
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(0, 2)),
        data.draw(st.integers(1, 2)),
    )
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 1000)))
    tdt = getattr(torch, dtype)
    x = torch.randn(n, cin, length, generator=g, dtype=tdt).requires_grad_(True)
    wt = torch.randn(cout, cin // groups, k, generator=g, dtype=tdt).requires_grad_(True)
    b = (
        torch.randn(cout, generator=g, dtype=tdt).requires_grad_(True)
        if data.draw(st.booleans())
        else None
    )
    with backend(be):
        check_against_torch(
            lambda x_, w_, b_: ember.conv1d(x_, w_, b_, stride, pad, dil, groups),
            lambda x_, w_, b_: F.conv1d(x_, w_, b_, stride, pad, dil, groups),
            [x, wt, b],
            dtype,
        )


@given(data=st.data())
def test_conv_transpose2d_matches_torch(data):
    dtype, be = draw_dtype_backend(data)
    groups = data.draw(st.integers(1, 2))
    cin, cout = groups * data.draw(st.integers(1, 5)), groups * data.draw(st.integers(1, 5))
    n, h, w = (
        data.draw(st.integers(1, 2)),
        data.draw(st.integers(1, 6)),
        data.draw(st.integers(1, 6)),
    )
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    padding = (data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
    dilation = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    output_padding = (
        data.draw(st.integers(0, max(stride[0], dilation[0]) - 1)),
        data.draw(st.integers(0, max(stride[1], dilation[1]) - 1)),
    )
    # Empty outputs are an error in PyTorch's float64 path but not always in its
    # float32 (oneDNN) one; Ember always raises. Keep to non-empty outputs here.
    for i, size in enumerate((h, w)):
        assume(
            (size - 1) * stride[i]
            - 2 * padding[i]
            + dilation[i] * (k[i] - 1)
            + output_padding[i]
            + 1
            > 0
        )
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 1000)))
    tdt = getattr(torch, dtype)
    x = torch.randn(n, cin, h, w, generator=g, dtype=tdt).requires_grad_(True)
    wt = torch.randn(cin, cout // groups, *k, generator=g, dtype=tdt).requires_grad_(True)
    b = (
        torch.randn(cout, generator=g, dtype=tdt).requires_grad_(True)
        if data.draw(st.booleans())
        else None
    )
    with backend(be):
        check_against_torch(
            lambda x_, w_, b_: ember.conv_transpose2d(
                x_, w_, b_, stride, padding, output_padding, groups, dilation
            ),
            lambda x_, w_, b_: F.conv_transpose2d(
                x_, w_, b_, stride, padding, output_padding, groups, dilation
            ),
            [x, wt, b],
            dtype,
        )


@pytest.mark.parametrize(
    "be,dtype", [("auto", "float32"), ("im2col", "float64"), ("im2col", "float32")]
)
@pytest.mark.parametrize("threads", [1, 2])
def test_larger_images_bands_and_threads(be, dtype, threads):
    # 40x40 output rows of 288-long patches: two im2col bands; samples split over threads.
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        tdt = getattr(torch, dtype)
        x = torch.randn(2, 32, 40, 40, dtype=tdt, requires_grad=True)
        w = torch.randn(6, 32, 3, 3, dtype=tdt, requires_grad=True)
        b = torch.randn(6, dtype=tdt, requires_grad=True)
        with backend(be):
            check_against_torch(
                lambda x_, w_, b_: ember.conv2d(x_, w_, b_, 1, 1),
                lambda x_, w_, b_: F.conv2d(x_, w_, b_, 1, 1),
                [x, w, b],
                dtype,
            )
            # 1x1 kernels read the input directly
            w1 = torch.randn(5, 32, 1, 1, dtype=tdt, requires_grad=True)
            check_against_torch(
                lambda x_, w_: ember.conv2d(x_, w_),
                lambda x_, w_: F.conv2d(x_, w_),
                [x.detach().requires_grad_(True), w1],
                dtype,
            )
    finally:
        ember.set_num_threads(old)


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("k,dil", [(3, 1), (4, 1), (4, 2), (2, 3), (5, 1)])
def test_padding_strings(padding, k, dil):
    for dims in (1, 2):
        shape = (2, 3, 7) if dims == 1 else (2, 3, 7, 6)
        x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
        w = torch.randn(4, 3, *([k] * dims), dtype=torch.float64, requires_grad=True)
        b = torch.randn(4, dtype=torch.float64, requires_grad=True)
        fe, ft = (ember.conv1d, F.conv1d) if dims == 1 else (ember.conv2d, F.conv2d)
        if padding == "valid" and (k - 1) * dil + 1 > 6:
            continue
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yt = ft(x, w, b, padding=padding, dilation=dil)
        xe, we, be_ = from_torch(x), from_torch(w), from_torch(b)
        ye = fe(xe, we, be_, padding=padding, dilation=dil)
        close(ye, yt)
        assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
        xe, we, be_ = from_torch(x), from_torch(w), from_torch(b)
        g = torch.randn(yt.shape, dtype=torch.float64)
        yt.backward(g)
        fe(xe, we, be_, padding=padding, dilation=dil).backward(from_torch(g))
        for e, t in [(xe, x), (we, w), (be_, b)]:
            close(e.grad, t.grad)


def test_unbatched_inputs():
    for fe, ft, xs, ws in [
        (ember.conv1d, F.conv1d, (3, 8), (4, 3, 3)),
        (ember.conv2d, F.conv2d, (3, 6, 5), (4, 3, 3, 2)),
        (ember.conv_transpose2d, F.conv_transpose2d, (3, 4, 5), (3, 2, 3, 3)),
    ]:
        xe, xt = pair_randn(xs, requires_grad=True)
        we, wt = pair_randn(ws, seed=1)
        ye, yt = fe(xe, we), ft(xt, wt)
        close(ye, yt)
        assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__ == "SqueezeBackward1"
        yt.sum().backward()
        ye.backward(ember.ones(*ye.shape, dtype=ember.float64))
        close(xe.grad, xt.grad)


def test_grad_fn_names_and_requires_grad():
    xe, xt = pair_randn((1, 2, 5, 5), requires_grad=True)
    we, wt = pair_randn((3, 2, 3, 3), seed=1)
    for fe, ft, w_e, w_t in [
        (ember.conv2d, F.conv2d, we, wt),
        (
            ember.conv_transpose2d,
            F.conv_transpose2d,
            we.permute(1, 0, 2, 3),
            wt.permute(1, 0, 2, 3),
        ),
    ]:
        assert (
            type(fe(xe, w_e).grad_fn).__name__
            == type(ft(xt, w_t).grad_fn).__name__
            == "ConvolutionBackward0"
        )
    x1e, x1t = pair_randn((1, 2, 6), requires_grad=True)
    w1e, w1t = pair_randn((3, 2, 2), seed=2)
    assert (
        type(ember.conv1d(x1e, w1e).grad_fn).__name__ == type(F.conv1d(x1t, w1t).grad_fn).__name__
    )
    with ember.no_grad():
        assert ember.conv2d(xe, we).grad_fn is None
    # only the weight requires grad: no input gradient is computed
    xe2, xt2 = pair_randn((2, 2, 5, 5))
    we2, wt2 = pair_randn((3, 2, 3, 3), seed=1, requires_grad=True)
    ember.conv2d(xe2, we2).backward(ember.ones(2, 3, 3, 3, dtype=ember.float64))
    F.conv2d(xt2, wt2).backward(torch.ones(2, 3, 3, 3, dtype=torch.float64))
    close(we2.grad, wt2.grad)
    assert xe2.grad is None


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_integer_convolution_matches_torch(dtype):
    g = torch.Generator().manual_seed(0)
    xt = torch.randint(-3, 4, (2, 4, 5, 6), generator=g).to(getattr(torch, dtype))
    wt = torch.randint(-2, 3, (6, 2, 3, 2), generator=g).to(getattr(torch, dtype))
    bt = torch.randint(-2, 3, (6,), generator=g).to(getattr(torch, dtype))
    close(
        ember.conv2d(from_torch(xt), from_torch(wt), from_torch(bt), 1, 1, 1, 2),
        F.conv2d(xt, wt, bt, 1, 1, 1, 2),
    )
    wtt = torch.randint(-2, 3, (4, 3, 2, 2), generator=g).to(getattr(torch, dtype))
    if dtype == "int64":
        close(
            ember.conv_transpose2d(from_torch(xt), from_torch(wtt), None, 2),
            F.conv_transpose2d(xt, wtt, None, 2),
        )
    else:
        same_error(
            lambda: ember.conv_transpose2d(from_torch(xt), from_torch(wtt)),
            lambda: F.conv_transpose2d(xt, wtt),
        )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_float_convolution(dtype):
    xt = torch.randn(2, 4, 6, 6).to(getattr(torch, dtype))
    wt = torch.randn(3, 4, 3, 3).to(getattr(torch, dtype))
    tol = {"rtol": 2e-2, "atol": 5e-2} if dtype == "bfloat16" else {"rtol": 5e-3, "atol": 1e-2}
    close(
        ember.conv2d(from_torch(xt), from_torch(wt), padding=1),
        F.conv2d(xt, wt, padding=1),
        dtype,
        **tol,
    )
    close(
        ember.conv_transpose2d(from_torch(xt), from_torch(wt.transpose(0, 1).contiguous())),
        F.conv_transpose2d(xt, wt.transpose(0, 1).contiguous()),
        dtype,
        **tol,
    )


def test_non_contiguous_inputs():
    xc = torch.randn(2, 6, 3, 5, dtype=torch.float64)
    wc = torch.randn(4, 3, 2, 3, dtype=torch.float64)
    xe = from_torch(xc).permute(0, 1, 3, 2)
    we = from_torch(wc).permute(0, 1, 3, 2)
    assert not xe.is_contiguous() and not we.is_contiguous()
    close(
        ember.conv2d(xe, we, groups=2),
        F.conv2d(xc.permute(0, 1, 3, 2), wc.permute(0, 1, 3, 2), groups=2),
    )


ERROR_CASES = [
    # (input shape, weight shape, kwargs)
    ((2, 4, 6, 6), (4, 3, 3, 3), {}),
    ((2, 4, 6, 6), (3, 2, 3, 3), {"groups": 2}),
    ((2, 4, 6, 6), (4, 4, 7, 7), {}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"stride": 0}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"padding": -1}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"dilation": 0}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"groups": 0}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"bias": (3,)}),
    ((6, 6), (4, 4, 3, 3), {}),
    ((2, 4, 6, 6), (4, 4, 3), {}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"stride": (1, 1, 1)}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"padding": "same", "stride": 2}),
    ((2, 4, 6, 6), (4, 4, 3, 3), {"padding": "foo"}),
    ((2, 4, 0, 6), (4, 4, 3, 3), {}),
]


@pytest.mark.parametrize("xs,ws,kw", ERROR_CASES)
def test_conv2d_errors_match(xs, ws, kw):
    # float32: PyTorch words a few of these differently on its float64 path.
    kw = dict(kw)
    xe, xt = pair_randn(xs, "float32")
    we, wt = pair_randn(ws, "float32", seed=1)
    if "bias" in kw:
        be, bt = pair_randn(kw.pop("bias"), "float32", seed=2)
        kw_e, kw_t = dict(kw, bias=be), dict(kw, bias=bt)
    else:
        kw_e, kw_t = kw, kw
    same_error(lambda: ember.conv2d(xe, we, **kw_e), lambda: F.conv2d(xt, wt, **kw_t))


def test_transposed_and_dtype_errors_match():
    xe, xt = pair_randn((2, 4, 6, 6), "float32")
    we, wt = pair_randn((4, 4, 3, 3), "float32", seed=1)
    same_error(
        lambda: ember.conv_transpose2d(xe, we, output_padding=1),
        lambda: F.conv_transpose2d(xt, wt, output_padding=1),
    )
    same_error(
        lambda: ember.conv_transpose2d(xe, we, stride=2, output_padding=2),
        lambda: F.conv_transpose2d(xt, wt, stride=2, output_padding=2),
    )
    w3e, w3t = pair_randn((3, 4, 3, 3), "float32", seed=1)
    same_error(lambda: ember.conv_transpose2d(xe, w3e), lambda: F.conv_transpose2d(xt, w3t))
    wde, wdt = pair_randn((4, 4, 3, 3), "float64", seed=1)
    # mixed dtypes: the same error type (PyTorch's wording depends on its internal path)
    same_error(lambda: ember.conv2d(xe, wde), lambda: F.conv2d(xt, wdt), match_message=False)
    same_error(
        lambda: ember.conv2d(xe.to(ember.float64), we),
        lambda: F.conv2d(xt.double(), wt),
        match_message=False,
    )
    bde, bdt = pair_randn((4,), "float64")
    same_error(lambda: ember.conv2d(xe, we, bde), lambda: F.conv2d(xt, wt, bdt))
    same_error(
        lambda: ember.conv2d(xe.to(ember.bool), we.to(ember.bool)),
        lambda: F.conv2d(xt.bool(), wt.bool()),
    )
    with pytest.raises(TypeError):
        ember.conv_transpose2d(xe, we, padding="same")
    # an empty batch is fine
    close(
        ember.conv2d(pair_randn((0, 4, 6, 6))[0], wde),
        F.conv2d(torch.zeros(0, 4, 6, 6, dtype=torch.float64), wdt),
    )


# ---- modules ---------------------------------------------------------------------------------------

MODULES = [
    ("Conv2d", (3, 8, 3), {}),
    (
        "Conv2d",
        (4, 8, (3, 5)),
        {"stride": (2, 1), "padding": (4, 2), "dilation": (3, 1), "groups": 2, "bias": False},
    ),
    ("Conv2d", (3, 6, 3), {"padding": "same"}),
    ("Conv2d", (3, 6, 2), {"padding": "valid", "dilation": 2}),
    ("Conv2d", (3, 6, 3), {"padding": 1, "padding_mode": "reflect"}),
    ("Conv1d", (16, 33, 3), {"stride": 2}),
    ("Conv1d", (4, 4, 2), {"padding": "same", "groups": 4}),
    (
        "ConvTranspose2d",
        (16, 33, (3, 5)),
        {"stride": (2, 1), "padding": (4, 2), "output_padding": (1, 0)},
    ),
    ("ConvTranspose2d", (4, 6, 3), {"groups": 2, "bias": False, "dilation": 2}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
def test_module_structure_matches(init_without_rng, name, args, kwargs):
    me, mt = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(me) == repr(mt)
    assert list(me.state_dict().keys()) == list(mt.state_dict().keys())
    for (ne, pe), (nt, pt) in zip(me.named_parameters(), mt.named_parameters()):
        assert ne == nt and tuple(pe.shape) == tuple(pt.shape) and pe.requires_grad
    for attr in (
        "in_channels",
        "out_channels",
        "kernel_size",
        "stride",
        "padding",
        "dilation",
        "groups",
        "output_padding",
        "transposed",
        "padding_mode",
        "_reversed_padding_repeated_twice",
    ):
        assert getattr(me, attr) == getattr(mt, attr), attr


@pytest.mark.parametrize(
    "name,args,kwargs", [m for m in MODULES if m[2].get("padding_mode", "zeros") == "zeros"]
)
def test_module_forward_backward_matches(init_without_rng, name, args, kwargs):
    me, mt = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    copy_params(me, mt)
    cin = args[0]
    shape = (2, cin, 9) if name == "Conv1d" else (2, cin, 9, 8)
    xe, xt = pair_randn(shape, "float32", requires_grad=True)
    ye, yt = me(xe), mt(xt)
    close(ye, yt)
    yt.sum().backward()
    ye.backward(ember.ones(*ye.shape))
    close(xe.grad, xt.grad)
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        close(pe.grad, pt.grad, rtol=1e-3, atol=1e-3)


def test_conv_transpose_output_size(init_without_rng):
    me, mt = (
        ember.nn.ConvTranspose2d(3, 2, 3, stride=2),
        torch.nn.ConvTranspose2d(3, 2, 3, stride=2),
    )
    copy_params(me, mt)
    xe, xt = pair_randn((1, 3, 4, 4), "float32")
    close(me(xe, output_size=[10, 10]), mt(xt, output_size=[10, 10]))
    same_error(lambda: me(xe, output_size=[12, 12]), lambda: mt(xt, output_size=[12, 12]))


@pytest.mark.parametrize(
    "ctor",
    [
        lambda nn: nn.Conv2d(4, 4, 3, groups=0),
        lambda nn: nn.Conv2d(3, 4, 3, groups=2),
        lambda nn: nn.Conv2d(4, 3, 3, groups=2),
        lambda nn: nn.Conv2d(4, 4, 3, padding="foo"),
        lambda nn: nn.Conv2d(4, 4, 3, padding="same", stride=2),
        lambda nn: nn.Conv2d(4, 4, 3, padding_mode="bad"),
        lambda nn: nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
    ],
)
def test_module_constructor_errors_match(init_without_rng, ctor):
    import re

    def canon(msg):  # a set's printed order depends on the process's string hashes
        return re.sub(
            r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", msg
        )

    with pytest.raises(ValueError) as et:
        ctor(torch.nn)
    with pytest.raises(ValueError) as ee:
        ctor(ember.nn)
    assert canon(str(ee.value)) == canon(str(et.value))


@pytest.mark.skipif(
    not HAS_UNIFORM or not hasattr(ember, "manual_seed"), reason="needs the random operators"
)
@pytest.mark.parametrize("name,args,kwargs", MODULES[:3] + MODULES[5:])
def test_module_initialisation_matches(name, args, kwargs):
    ember.manual_seed(0)
    torch.manual_seed(0)
    me, mt = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        close(pe.detach(), pt.detach(), rtol=1e-6, atol=1e-7)


def test_convolution_and_max_pool2d_with_indices_entry_points():
    import torch as T

    g = T.Generator().manual_seed(3)
    x, w, b = T.randn(1, 2, 5, 5, generator=g), T.randn(3, 2, 3, 3, generator=g), T.randn(3, generator=g)
    ex, ew, eb = (ember.tensor(t.tolist()) for t in (x, w, b))
    got = ember.convolution(ex, ew, eb, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    want = T.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    assert T.allclose(T.tensor(got.tolist()), want, atol=1e-5)
    ev, ei = ember.nn.functional.max_pool2d_with_indices(ex, 2, 2)
    tv, ti = T.nn.functional.max_pool2d_with_indices(x, 2, 2)
    assert ev.tolist() == tv.tolist() and ei.tolist() == ti.tolist()


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_conv2d_padding_modes_as_torch(mode, padding):
    import torch as T

    T.manual_seed(0)
    tm = T.nn.Conv2d(2, 3, 3, padding=padding, padding_mode=mode).double()
    em = ember.nn.Conv2d(2, 3, 3, padding=padding, padding_mode=mode).double()
    em.weight.data = ember.tensor(tm.weight.tolist(), dtype=ember.float64)
    em.bias.data = ember.tensor(tm.bias.tolist(), dtype=ember.float64)
    x = T.randn(2, 2, 5, 6, dtype=T.float64, requires_grad=True)
    ex = ember.tensor(x.tolist(), dtype=ember.float64, requires_grad=True)
    want, got = tm(x), em(ex)
    assert repr(em) == repr(tm)
    assert T.allclose(T.tensor(got.tolist(), dtype=T.float64), want.detach())
    want.sum().backward()
    got.sum().backward()
    assert T.allclose(T.tensor(ex.grad.tolist(), dtype=T.float64), x.grad)
    assert T.allclose(T.tensor(em.weight.grad.tolist(), dtype=T.float64), tm.weight.grad)


def test_conv1d_padding_mode_reflect_as_torch():
    import torch as T

    T.manual_seed(1)
    tm = T.nn.Conv1d(2, 2, 3, padding=2, padding_mode="reflect").double()
    em = ember.nn.Conv1d(2, 2, 3, padding=2, padding_mode="reflect").double()
    em.weight.data = ember.tensor(tm.weight.tolist(), dtype=ember.float64)
    em.bias.data = ember.tensor(tm.bias.tolist(), dtype=ember.float64)
    x = T.randn(1, 2, 7, dtype=T.float64)
    assert T.allclose(T.tensor(em(ember.tensor(x.tolist(), dtype=ember.float64)).tolist(), dtype=T.float64), tm(x))


def _avx512_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split(":")[1].split()
    except (OSError, StopIteration):
        return False
    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags)


@pytest.mark.skipif(not _avx512_cpu(), reason="checked bit for bit on AVX-512 machines (oneDNN's kernels there)")
@pytest.mark.parametrize(
    "fn, n, c, size, o, k, stride, padding",
    [
        ("conv2d", 2, 1, 28, 32, 3, 1, 1),  # a first layer on grey images: oneDNN in PyTorch
        ("conv2d", 4, 3, 32, 16, 3, 1, 1),
        ("conv2d", 16, 1, 28, 6, 5, 1, 2),
        ("conv2d", 1, 3, 16, 8, 3, 1, 1),  # one small image: PyTorch's own im2col
        ("conv2d", 8, 16, 14, 32, 3, 1, 1),
        ("conv1d", 2, 8, 20, 8, 3, 1, 1),
        ("conv_transpose2d", 2, 8, 9, 8, 3, 1, 1),
        ("conv3d", 2, 16, 8, 32, 3, 1, 1),  # Note [3-d convolution]
        ("conv3d", 2, 3, 9, 5, 3, 2, 1),
        ("conv3d", 3, 4, 7, 6, 1, 2, 0),
    ],
)
def test_convolution_bits_as_torch(fn, n, c, size, o, k, stride, padding):
    """Forward and all three gradients bit for bit (Note [Which convolutions oneDNN computes],
    Note [Convolution bias gradients]), with a loss whose gradient varies."""
    rng = np.random.default_rng(n * 100 + c)
    dims = {"conv1d": 1, "conv3d": 3}.get(fn, 2)
    shape, wshape = (n, c) + (size,) * dims, (o, c) + (k,) * dims
    if fn == "conv_transpose2d":
        wshape = (c, o, k, k)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (shape, wshape, (o,))]

    def run(L):
        x, w, b = (L.from_numpy(a.copy()).requires_grad_() for a in arrays)
        y = getattr(L.nn.functional, fn)(x, w, b, stride=stride, padding=padding)
        (y * y).sum().backward()
        return [t.detach().numpy() for t in (y, x.grad, w.grad, b.grad)]

    for i, (got, want) in enumerate(zip(run(ember), run(torch))):
        assert np.array_equal(got, want), ("output", "input grad", "weight grad", "bias grad")[i]
