"""batch_norm, layer_norm and group_norm against PyTorch: values, running
statistics, train/eval, float64 gradients (input, weight, bias), dtypes,
errors, grad_fn names, and the BatchNorm/LayerNorm/GroupNorm modules."""

from __future__ import annotations

import math

import pytest
from _nn_helpers import close, copy_params, from_torch, pair_randn, same_error
from conftest import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import ember

F = torch.nn.functional
EF = ember.nn.functional


def grads_match(ye, yt, pairs, seed=5):
    g = torch.randn(yt.shape, dtype=yt.dtype, generator=torch.Generator().manual_seed(seed))
    ye.backward(from_torch(g))
    try:
        yt.backward(g)
    except RuntimeError as err:
        # PyTorch 2.13's group_norm backward fails with a bias and no weight
        # ("tensor does not have a device"); Ember's gradients are checked elsewhere.
        assert "does not have a device" in str(err)
        return
    # float32 gradients carry the rounding of the statistics times 1/std.
    tol = {"rtol": 2e-3, "atol": 2e-3} if yt.dtype == torch.float32 else {}
    for e, t in pairs:
        if t is not None and t.requires_grad:
            close(e.grad, t.grad, **tol)


def maybe(data, shape, dtype, seed, scale=1.0, offset=0.0):
    if not data.draw(st.booleans()):
        return None, None
    g = torch.Generator().manual_seed(seed)
    t = (
        (torch.randn(*shape, generator=g, dtype=torch.float64) * scale + offset)
        .to(dtype)
        .requires_grad_(True)
    )
    return from_torch(t), t


@given(data=st.data())
def test_batch_norm_matches_torch(data):
    dtype = getattr(torch, data.draw(st.sampled_from(["float32", "float64"])))
    n, c = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    spatial = data.draw(st.lists(st.integers(1, 5), min_size=0, max_size=2))
    training = data.draw(st.booleans())
    momentum = data.draw(st.sampled_from([0.1, 0.5, 1.0, 0.0]))
    eps = data.draw(st.sampled_from([1e-5, 1e-3, 0.5]))
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 999)))
    xt = (
        (torch.randn(n, c, *spatial, generator=g, dtype=torch.float64) * 2 + 1)
        .to(dtype)
        .requires_grad_(True)
    )
    xe = from_torch(xt)
    we, wt = maybe(data, (c,), dtype, 1)
    be, bt = maybe(data, (c,), dtype, 2)
    track = data.draw(st.booleans()) or not training
    rmt = (torch.randn(c, generator=g, dtype=torch.float64) * 0.1).to(dtype) if track else None
    rvt = (torch.rand(c, generator=g, dtype=torch.float64) + 0.5).to(dtype) if track else None
    rme, rve = (from_torch(rmt), from_torch(rvt)) if track else (None, None)
    args_t = (rmt, rvt, wt, bt, training, momentum, eps)
    args_e = (rme, rve, we, be, training, momentum, eps)
    try:
        yt = F.batch_norm(xt, *args_t)
    except Exception:  # noqa: BLE001
        same_error(lambda: EF.batch_norm(xe, *args_e), lambda: F.batch_norm(xt, *args_t))
        return
    ye = EF.batch_norm(xe, *args_e)
    close(ye, yt)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__ == "NativeBatchNormBackward0"
    if track:
        close(rme, rmt)
        close(rve, rvt)
    grads_match(ye, yt, [(xe, xt), (we, wt), (be, bt)])


@given(data=st.data())
def test_layer_norm_matches_torch(data):
    dtype = getattr(torch, data.draw(st.sampled_from(["float32", "float64"])))
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    k = data.draw(st.integers(1, len(shape)))
    normalized = tuple(shape[-k:])
    # A single float32 element normalises to rounding noise times 1/sqrt(eps).
    assume(dtype == torch.float64 or math.prod(normalized) > 1)
    eps = data.draw(st.sampled_from([1e-5, 1e-2]))
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 999)))
    xt = (
        (torch.randn(*shape, generator=g, dtype=torch.float64) * 3 - 2)
        .to(dtype)
        .requires_grad_(True)
    )
    xe = from_torch(xt)
    we, wt = maybe(data, normalized, dtype, 1)
    be, bt = maybe(data, normalized, dtype, 2)
    yt = F.layer_norm(xt, normalized, wt, bt, eps)
    ye = EF.layer_norm(xe, normalized, we, be, eps)
    close(ye, yt)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__ == "NativeLayerNormBackward0"
    grads_match(ye, yt, [(xe, xt), (we, wt), (be, bt)])


@given(data=st.data())
def test_group_norm_matches_torch(data):
    dtype = getattr(torch, data.draw(st.sampled_from(["float32", "float64"])))
    groups = data.draw(st.integers(1, 3))
    n, c = data.draw(st.integers(1, 3)), groups * data.draw(st.integers(1, 3))
    spatial = data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=2))
    eps = data.draw(st.sampled_from([1e-5, 1e-2]))
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 999)))
    xt = (
        (torch.randn(n, c, *spatial, generator=g, dtype=torch.float64) + 0.5)
        .to(dtype)
        .requires_grad_(True)
    )
    xe = from_torch(xt)
    we, wt = maybe(data, (c,), dtype, 1)
    be, bt = maybe(data, (c,), dtype, 2)
    try:
        yt = F.group_norm(xt, groups, wt, bt, eps)
    except Exception:  # noqa: BLE001
        same_error(
            lambda: EF.group_norm(xe, groups, we, be, eps),
            lambda: F.group_norm(xt, groups, wt, bt, eps),
        )
        return
    ye = EF.group_norm(xe, groups, we, be, eps)
    close(ye, yt)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__ == "NativeGroupNormBackward0"
    grads_match(ye, yt, [(xe, xt), (we, wt), (be, bt)])


@pytest.mark.parametrize("threads", [1, 2])
def test_larger_inputs(threads):
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        xe, xt = pair_randn((8, 6, 12, 12), requires_grad=True, scale=3.0)
        we, wt = pair_randn((6,), requires_grad=True, seed=1)
        be, bt = pair_randn((6,), requires_grad=True, seed=2)
        rme, rmt = pair_randn((6,), seed=3)
        rve, rvt = (
            from_torch(torch.ones(6, dtype=torch.float64)),
            torch.ones(6, dtype=torch.float64),
        )
        ye, yt = EF.batch_norm(xe, rme, rve, we, be, True), F.batch_norm(xt, rmt, rvt, wt, bt, True)
        close(ye, yt)
        close(rme, rmt)
        close(rve, rvt)
        grads_match(ye, yt, [(xe, xt), (we, wt), (be, bt)])
        for t in (xt, wt, bt):
            t.grad = None
        for e in (xe, we, be):
            e.grad = None
        ye, yt = EF.group_norm(xe, 3, we, be), F.group_norm(xt, 3, wt, bt)
        close(ye, yt)
        grads_match(ye, yt, [(xe, xt), (we, wt), (be, bt)])
        le, lt = pair_randn((64, 96), requires_grad=True, seed=4)
        lwe, lwt = pair_randn((96,), requires_grad=True, seed=6)
        ye, yt = EF.layer_norm(le, (96,), lwe), F.layer_norm(lt, (96,), lwt)
        close(ye, yt)
        grads_match(ye, yt, [(le, lt), (lwe, lwt)])
    finally:
        ember.set_num_threads(old)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_float_inputs(dtype):
    tdt = getattr(torch, dtype)
    xt = torch.randn(4, 3, 5, 5).to(tdt)
    xe = from_torch(xt)
    tol = {"rtol": 2e-2, "atol": 3e-2}
    close(
        EF.batch_norm(xe, None, None, training=True),
        F.batch_norm(xt, None, None, training=True),
        dtype,
        **tol,
    )
    close(EF.layer_norm(xe, (5, 5)), F.layer_norm(xt, (5, 5)), dtype, **tol)
    close(EF.group_norm(xe, 3), F.group_norm(xt, 3), dtype, **tol)


def test_native_statistics_outputs():
    xe, xt = pair_randn((2, 4, 3, 3))
    for re_, rt in [
        (
            ember.native_batch_norm(xe, None, None, None, None, True, 0.1, 1e-5),
            torch.native_batch_norm(xt, None, None, None, None, True, 0.1, 1e-5),
        ),
        (
            ember.native_layer_norm(xe, [3, 3], None, None, 1e-5),
            torch.native_layer_norm(xt, [3, 3], None, None, 1e-5),
        ),
        (
            ember.native_group_norm(xe, None, None, 2, 4, 9, 2, 1e-5),
            torch.native_group_norm(xt, None, None, 2, 4, 9, 2, 1e-5),
        ),
    ]:
        for a, b in zip(re_, rt):
            close(a, b)
    rm, rv = (
        from_torch(torch.zeros(4, dtype=torch.float64)),
        from_torch(torch.ones(4, dtype=torch.float64)),
    )
    out = ember.native_batch_norm(xe, None, None, rm, rv, False, 0.1, 1e-5)
    assert tuple(out[1].shape) == (0,) and tuple(out[2].shape) == (0,)


def test_integer_inputs_are_not_implemented():
    e, t = from_torch(torch.ones(2, 4, 3, dtype=torch.long)), torch.ones(2, 4, 3, dtype=torch.long)
    same_error(
        lambda: EF.batch_norm(e, None, None, training=True),
        lambda: F.batch_norm(t, None, None, training=True),
    )
    same_error(lambda: EF.layer_norm(e, (3,)), lambda: F.layer_norm(t, (3,)))
    same_error(lambda: EF.group_norm(e, 2), lambda: F.group_norm(t, 2))


NORM_ERRORS = [
    lambda F_, lib, x: F_.batch_norm(x, lib.zeros(3), lib.ones(3)),
    lambda F_, lib, x: F_.batch_norm(x, None, None, training=True, weight=lib.ones(3)),
    lambda F_, lib, x: F_.batch_norm(x, None, None, training=False),
    lambda F_, lib, x: F_.batch_norm(x.reshape(1, 144), None, None, training=True),
    lambda F_, lib, x: F_.batch_norm(x.reshape(1, 144, 1), None, None, training=True),
    lambda F_, lib, x: F_.batch_norm(x.reshape(144), None, None, training=True),
    lambda F_, lib, x: F_.batch_norm(x, None, None, training=True, eps=0.0),
    lambda F_, lib, x: F_.batch_norm(x.to(lib.float64), lib.zeros(4), lib.ones(4)),
    lambda F_, lib, x: F_.layer_norm(x, (5,)),
    lambda F_, lib, x: F_.layer_norm(x, (6,), weight=lib.ones(5)),
    lambda F_, lib, x: F_.layer_norm(x, (6,), bias=lib.ones(5)),
    lambda F_, lib, x: F_.layer_norm(x, ()),
    lambda F_, lib, x: F_.layer_norm(x.to(lib.float64), (6,), lib.ones(6)),
    lambda F_, lib, x: F_.group_norm(x, 3),
    lambda F_, lib, x: F_.group_norm(x, 2, weight=lib.ones(3)),
    lambda F_, lib, x: F_.group_norm(x, 2, bias=lib.ones(3)),
    lambda F_, lib, x: F_.group_norm(x.reshape(144), 2),
    lambda F_, lib, x: F_.group_norm(x, 0),
    lambda F_, lib, x: F_.group_norm(lib.ones(1, 4), 4),
]


@pytest.mark.parametrize("call", NORM_ERRORS)
def test_errors_match(call):
    e, t = pair_randn((1, 4, 6, 6), "float32")
    e2, t2 = pair_randn((2, 4, 6, 6), "float32")
    if call in (NORM_ERRORS[3], NORM_ERRORS[4], NORM_ERRORS[5], NORM_ERRORS[17], NORM_ERRORS[18]):
        e2, t2 = e, t
    same_error(lambda: call(EF, ember, e2), lambda: call(F, torch, t2))


def test_empty_inputs():
    for shape in [(0, 4, 3), (0, 4)]:
        e, t = pair_randn(shape, requires_grad=True)
        close(
            EF.batch_norm(e, None, None, training=True), F.batch_norm(t, None, None, training=True)
        )
        close(EF.layer_norm(e, (shape[-1],)), F.layer_norm(t, (shape[-1],)))
        close(EF.group_norm(e, 2), F.group_norm(t, 2))


# ---- modules ---------------------------------------------------------------------------------------

BN_MODULES = [
    ("BatchNorm2d", (4,), {}),
    ("BatchNorm2d", (4,), {"momentum": None}),
    ("BatchNorm2d", (4,), {"affine": False}),
    ("BatchNorm2d", (4,), {"track_running_stats": False}),
    ("BatchNorm2d", (4,), {"eps": 1e-3, "momentum": 0.3, "bias": False}),
    ("BatchNorm1d", (4,), {}),
    ("BatchNorm1d", (4,), {"momentum": None, "affine": False}),
]


@pytest.mark.parametrize("name,args,kwargs", BN_MODULES)
def test_batchnorm_modules_match(name, args, kwargs):
    me, mt = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(me) == repr(mt)
    assert list(me.state_dict().keys()) == list(mt.state_dict().keys())
    for (ne, be), (nt, bt) in zip(me.named_buffers(), mt.named_buffers()):
        assert ne == nt
        close(be, bt)
    if mt.track_running_stats:
        assert (
            me.num_batches_tracked.dtype == ember.int64
            and tuple(me.num_batches_tracked.shape) == ()
        )
    shapes = [(3, 4, 5, 5), (2, 4, 3, 3)] if name == "BatchNorm2d" else [(6, 4), (3, 4, 5)]
    for step, shape in enumerate(shapes * 2):
        if step == 2:
            me.eval()
            mt.eval()
        xe, xt = pair_randn(shape, "float32", requires_grad=True, seed=step, scale=2.0)
        ye, yt = me(xe), mt(xt)
        close(ye, yt)
        for (_, be), (_, bt) in zip(me.named_buffers(), mt.named_buffers()):
            close(be, bt)
        yt.sum().backward()
        ye.backward(ember.ones(*ye.shape))
        close(xe.grad, xt.grad, rtol=1e-3, atol=1e-4)
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        close(pe.grad, pt.grad, rtol=1e-3, atol=1e-3)
    me.reset_running_stats()
    mt.reset_running_stats()
    for (_, be), (_, bt) in zip(me.named_buffers(), mt.named_buffers()):
        close(be, bt)


def test_batchnorm_input_dim_errors():
    for name, bad in [("BatchNorm1d", (2, 4, 3, 3)), ("BatchNorm2d", (2, 4, 3))]:
        e, t = pair_randn(bad)
        same_error(
            lambda n=name, x=e: getattr(ember.nn, n)(4)(x),
            lambda n=name, x=t: getattr(torch.nn, n)(4)(x),
        )


def test_batchnorm_state_dict_round_trip():
    mt = torch.nn.BatchNorm2d(3)
    mt(torch.randn(4, 3, 2, 2))
    me = ember.nn.BatchNorm2d(3)
    copy_params(me, mt)
    sd = me.state_dict()
    assert list(sd.keys()) == list(mt.state_dict().keys())
    for k, v in mt.state_dict().items():
        close(sd[k], v)
    me.eval()
    mt.eval()
    xe, xt = pair_randn((2, 3, 2, 2), "float32")
    close(me(xe), mt(xt))


OTHER_MODULES = [
    ("LayerNorm", (6,), {}),
    ("LayerNorm", ([5, 6],), {"eps": 1e-3, "elementwise_affine": False}),
    ("LayerNorm", ((5, 6),), {"bias": False}),
    ("GroupNorm", (2, 4), {}),
    ("GroupNorm", (4, 4), {"eps": 1e-3, "affine": False}),
    ("GroupNorm", (1, 4), {"bias": False}),
]


@pytest.mark.parametrize("name,args,kwargs", OTHER_MODULES)
def test_layer_and_group_norm_modules_match(name, args, kwargs):
    me, mt = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(me) == repr(mt)
    assert list(me.state_dict().keys()) == list(mt.state_dict().keys())
    with torch.no_grad():
        for p in mt.parameters():
            p.add_(torch.randn(p.shape))
    copy_params(me, mt)
    xe, xt = pair_randn((3, 4, 5, 6), "float32", requires_grad=True)
    ye, yt = me(xe), mt(xt)
    close(ye, yt)
    yt.sum().backward()
    ye.backward(ember.ones(*ye.shape))
    close(xe.grad, xt.grad, rtol=1e-3, atol=1e-4)
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        close(pe.grad, pt.grad, rtol=1e-3, atol=1e-3)


def test_module_constructor_errors():
    same_error(lambda: ember.nn.GroupNorm(3, 4), lambda: torch.nn.GroupNorm(3, 4))


def test_flatten_modules():
    for args in [(), (0,), (1, 2), (-3, -2)]:
        me, mt = ember.nn.Flatten(*args), torch.nn.Flatten(*args)
        assert repr(me) == repr(mt)
        e, t = pair_randn((2, 3, 4, 5), requires_grad=True)
        close(me(e), mt(t))
    me, mt = ember.nn.Unflatten(1, (2, 6)), torch.nn.Unflatten(1, (2, 6))
    assert repr(me) == repr(mt)
    e, t = pair_randn((3, 12, 2))
    close(me(e), mt(t))
    close(ember.nn.Unflatten(-1, (2, -1))(e), torch.nn.Unflatten(-1, (2, -1))(t))
    same_error(lambda: ember.nn.Unflatten(1, 5), lambda: torch.nn.Unflatten(1, 5))
    same_error(lambda: ember.nn.Unflatten(1, (2, 2.0)), lambda: torch.nn.Unflatten(1, (2, 2.0)))



@pytest.mark.parametrize("params", ["same", "float32", "none"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_native_group_norm_statistics_dtype(dtype, params):
    """mean and rstd have the parameters' dtype: the input's, or float32 for
    float32 parameters with 16-bit input (what torch's CUDA kernel also gives)."""
    out = []
    for lib in (ember, torch):
        dt = getattr(lib, dtype)
        x = lib.linspace(-2.0, 3.0, 24, dtype=lib.float32).reshape(2, 4, 3).to(dt)
        pdt = dt if params == "same" else lib.float32
        w = None if params == "none" else lib.linspace(0.5, 1.5, 4, dtype=lib.float32).to(pdt)
        b = None if params == "none" else lib.linspace(-0.5, 0.5, 4, dtype=lib.float32).to(pdt)
        y, mean, rstd = lib.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)
        out.append([(str(t.dtype).split(".")[-1], t.float().reshape(-1).tolist()) for t in (y, mean, rstd)])
    for (dt_e, v_e), (dt_t, v_t) in zip(*out):
        assert dt_e == dt_t
        assert v_e == pytest.approx(v_t, rel=1e-2, abs=1e-2)
