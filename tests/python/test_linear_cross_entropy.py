"""F.linear_cross_entropy, nn.LinearCrossEntropyLoss and LinearCrossEntropyOptions
against PyTorch: the reference form and the chunked form (every policy, chunk
size and reduction), their gradients, options resolution and errors."""

import itertools
import warnings

import numpy as np
import pytest
import torch

import ember


def _call(lib, x, w, t, b=None, cw=None, dtype="float32", grads=(True, True, True), upstream=None, **kw):
    dt = getattr(lib, dtype)
    X = lib.tensor(x, dtype=dt).requires_grad_(grads[0])
    W = lib.tensor(w, dtype=dt).requires_grad_(grads[1])
    B = None if b is None else lib.tensor(b, dtype=dt).requires_grad_(grads[2])
    CW = None if cw is None else lib.tensor(cw, dtype=dt)
    opts = kw.pop("options", None)
    if opts is not None:
        opts = lib.nn.LinearCrossEntropyOptions(
            **{k: (getattr(lib, v) if k == "acc_dtype" else v) for k, v in opts.items()}
        )
    loss = lib.nn.functional.linear_cross_entropy(X, W, lib.tensor(t), linear_bias=B, weight=CW, options=opts, **kw)
    if loss.dim() == 0:
        loss.backward()
    else:
        up = upstream if upstream is not None else np.arange(loss.numel(), dtype=np.float64).reshape(loss.shape)
        (loss * lib.tensor(up, dtype=loss.dtype)).sum().backward()
    out = [loss] + [v.grad for v in (X, W, B) if v is not None and v.requires_grad]
    return str(loss.dtype).split(".")[-1], [o.detach().float().numpy() for o in out]


def _outcome(lib, *args, **kw):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _call(lib, *args, **kw)
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e)


def _sample(n, f, c, seed, bias=False, class_weight=False, ignore=None):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((n, f)), rng.standard_normal((c, f))
    t = rng.integers(0, c, n)
    if ignore is not None and n:
        t[::3] = ignore
    return x, w, t, rng.standard_normal(c) if bias else None, rng.random(c) if class_weight else None


OPTIONS = [
    None,
    {},
    {"batch_chunk_size": 3},
    {"acc_policy": "balanced"},
    {"acc_policy": "compact", "batch_chunk_size": 4},
    {"acc_policy": "accurate", "chunking_method": None},
    {"chunking_method": "aspect_ratio:3", "allow_retain_graph": True},
]
SHAPES = [(8, 4, 20), (33, 16, 50), (5, 24, 7), (0, 4, 6)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("opts", OPTIONS)
def test_bits_float(dtype, reduction, opts):
    """float32/float64: every output and gradient bit for bit, chunked or not."""
    for (n, f, c), bias, cw, ignore in itertools.product(SHAPES, [False, True], [False, True], [None, 3, 100]):
        x, w, t, b, weight = _sample(n, f, c, n + f, bias, cw, ignore)
        kw = dict(dtype=dtype, reduction=reduction, options=opts, ignore_index=ignore)
        expected, got = _outcome(torch, x, w, t, b, weight, **kw), _outcome(ember, x, w, t, b, weight, **kw)
        assert got[0] == expected[0]
        for a, e in zip(got[1], expected[1]):
            np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("opts", OPTIONS[1:] + [{"acc_policy": "compact", "acc_dtype": "float32"}])
def test_chunked_16bit(dtype, opts):
    """16-bit inputs with float32 accumulation: the loss bit for bit; the
    gradients within one rounding (16-bit products may add in another order)."""
    for (n, f, c), reduction, bias in itertools.product(SHAPES[:3], ["mean", "sum", "none"], [False, True]):
        x, w, t, b, weight = _sample(n, f, c, f + c, bias, True, 3)
        kw = dict(dtype=dtype, reduction=reduction, options=opts, ignore_index=3)
        exp_dtype, expected = _outcome(torch, x, w, t, b, weight, **kw)
        got_dtype, got = _outcome(ember, x, w, t, b, weight, **kw)
        assert got_dtype == exp_dtype
        np.testing.assert_array_equal(got[0], expected[0])
        for a, e in zip(got[1:], expected[1:]):
            np.testing.assert_allclose(a, e, rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize(
    "case",
    [
        dict(shape=(6,), wshape=(5, 6), tshape=()),  # unbatched
        dict(shape=(4, 6), wshape=(5, 3, 6), tshape=(4, 3)),  # K-dimensional loss
        dict(shape=(4, 6), wshape=(5, 6), tshape=(4, 5), probs=True),
        dict(shape=(4, 6), wshape=(5, 6), tshape=(4,), label_smoothing=0.2),
        dict(shape=(6,), wshape=(5, 6), tshape=(), options={}),  # unbatched, chunked
    ],
)
def test_reference_forms(case):
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal(case["shape"]), rng.standard_normal(case["wshape"])
    t = rng.random(case["tshape"]) if case.get("probs") else rng.integers(0, 5, case["tshape"])
    kw = {k: v for k, v in case.items() if k in ("label_smoothing", "options")}
    for reduction in ("mean", "sum", "none"):
        expected = _outcome(torch, x, w, t, reduction=reduction, **kw)
        got = _outcome(ember, x, w, t, reduction=reduction, **kw)
        assert got[0] == expected[0]
        for a, e in zip(got[1], expected[1]):
            np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3, 4), lib.ones(5, 4), lib.zeros(2, 3).long()),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 4), lib.ones(4), lib.zeros(2).long()),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 4), lib.ones(5, 3), lib.zeros(2).long()),
        lambda lib: lib.nn.functional.linear_cross_entropy(
            lib.ones(2, 4), lib.ones(5, 4), lib.zeros(2).long(), linear_bias=lib.ones(4)
        ),
        lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(4), lib.ones(5, 2, 4), lib.zeros(()).long()),
        lambda lib: lib.nn.functional.linear_cross_entropy(
            lib.ones(2, 4), lib.ones(5, 4), lib.ones(2, 5), ignore_index=1
        ),
        lambda lib: lib.nn.functional.linear_cross_entropy(
            lib.ones(2, 4, dtype=lib.bfloat16),
            lib.ones(5, 4, dtype=lib.bfloat16),
            lib.zeros(2).long(),
            options=lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.float64),
        ),
        lambda lib: lib.nn.LinearCrossEntropyOptions(acc_policy="fast"),
        lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
        lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="square"),
        lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
        lambda lib: lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.int32),
        lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")._adjust(
            64, 8, 100, lib.float32, lib.device("cpu")
        ),
        lambda lib: lib.nn.LinearCrossEntropyLoss(4, 5, weight=lib.ones(4)),
        lambda lib: lib.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5),
    ],
)
def test_errors(call):
    outcomes = []
    for lib in (torch, ember):
        try:
            call(lib)
            outcomes.append(None)
        except Exception as e:  # noqa: BLE001 - the type and text are compared
            outcomes.append((type(e).__name__, str(e).replace("ember.", "torch.")))
    assert outcomes[1] == outcomes[0]
    assert outcomes[0] is not None


@pytest.mark.parametrize("device", ["cpu", None])
def test_adjust(device):
    """Options resolved for a call: policy, chunking and acc_dtype as PyTorch resolves them."""
    grid = itertools.product(
        [None, 5, 64],
        ["auto", None, "aspect_ratio", "aspect_ratio:4"],
        ["auto", "accurate", "compact"],
        [None, "float32"],
        ["float32", "bfloat16", "float16"],
        [(64, 8, 100), (7, 16, 3), (0, 4, 9), (1000, 32, 50000)],
    )
    for size, method, policy, acc, dtype, (n, f, c) in grid:
        res = []
        for lib in (torch, ember):
            try:
                o = lib.nn.LinearCrossEntropyOptions(
                    batch_chunk_size=size,
                    chunking_method=method,
                    acc_policy=policy,
                    acc_dtype=None if acc is None else getattr(lib, acc),
                )
                dev = None if device is None else lib.device(device)
                a = o._adjust(n, f, c, getattr(lib, dtype), dev)
                res.append((a.acc_policy, a.chunking_method, a.batch_chunk_size, str(a.acc_dtype).split(".")[-1]))
            except Exception as e:  # noqa: BLE001
                res.append((type(e).__name__, str(e)))
        assert res[1] == res[0], (size, method, policy, acc, dtype, n, f, c)


def test_backward_twice():
    x, w, t, _, _ = _sample(6, 4, 9, 0)
    for lib in (torch, ember):
        X = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        W = lib.tensor(w, dtype=lib.float32, requires_grad=True)
        loss = lib.nn.functional.linear_cross_entropy(
            X, W, lib.tensor(t), options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        )
        loss.backward(retain_graph=True)
        with pytest.raises(RuntimeError, match="chunked backward called twice"):
            loss.backward()
    grads = []
    for lib in (torch, ember):
        X = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        W = lib.tensor(w, dtype=lib.float32, requires_grad=True)
        opts = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2, allow_retain_graph=True)
        loss = lib.nn.functional.linear_cross_entropy(X, W, lib.tensor(t), options=opts, reduction="sum")
        loss.backward(retain_graph=True)
        loss.backward()
        grads.append((X.grad.numpy(), W.grad.numpy()))
    for a, e in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(a, e)


def test_options_ignored_warning():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match=r"``options`` ignored; chunked path needs") as rec:
            lib.nn.functional.linear_cross_entropy(
                lib.ones(2, 4),
                lib.ones(5, 4),
                lib.zeros(2).long(),
                label_smoothing=0.1,
                options=lib.nn.LinearCrossEntropyOptions(),
            )
        assert "label_smoothing=0.1" in str(rec[0].message)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("out_features", [(), (3,)])
def test_module(bias, out_features):
    rng = np.random.default_rng(3)
    rows = 5 * int(np.prod(out_features))
    x, t = rng.standard_normal((6, 4)), rng.integers(0, 5, (6, *out_features))
    params = [rng.standard_normal((rows, 4))] + ([rng.standard_normal(rows)] if bias else [])
    results = []
    for lib in (torch, ember):
        m = lib.nn.LinearCrossEntropyLoss(4, 5, out_features=out_features, bias=bias, ignore_index=2)
        with lib.no_grad():
            for p, v in zip(m.parameters(), params):
                p.copy_(lib.tensor(v, dtype=lib.float32))
        loss = m(lib.tensor(x, dtype=lib.float32), lib.tensor(t))
        loss.backward()
        results.append((repr(m), loss.item(), [p.grad.numpy() for p in m.parameters()]))
    assert results[1][:2] == results[0][:2]
    for a, e in zip(results[1][2], results[0][2]):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("wants", list(itertools.product([False, True], repeat=3)))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_some_inputs_without_grad(wants, reduction):
    """Only the gradients asked for are computed, chunked or not; no grad at all gives a loss without a graph."""
    x, w, t, b, _ = _sample(9, 6, 11, 5, bias=True)
    for opts in ({"batch_chunk_size": 4}, {"acc_policy": "compact"}, None):
        got = []
        for lib in (torch, ember):
            out = _outcome(lib, x, w, t, b, reduction=reduction, options=opts, grads=wants)
            if not any(wants):
                out = out[0]
            got.append(out)
        if not any(wants):
            assert got[1] == got[0]
            continue
        assert got[1][0] == got[0][0]
        for a, e in zip(got[1][1], got[0][1]):
            np.testing.assert_array_equal(a, e)
