"""Kernel paths that only large inputs reach, compared with PyTorch: the
vector reduction leaves (four accumulators, blocks of 4096), layer_norm's
row statistics, the unrolled elementwise loop (one and two inputs), the
last-dim softmax backward, and the layout of mm's gradient for a
transposed mat2."""

import numpy as np
import pytest
import torch

import ember

SIZES = [63, 64, 1000, 4097, 20000]


def _pair(arr):
    return ember.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def _close(e, t, rtol, atol=0.0):
    torch.testing.assert_close(torch.from_numpy(e.numpy()), t, rtol=rtol, atol=atol, equal_nan=True)


REDUCTIONS = {
    "sum": lambda x: x.sum(-1),
    "max": lambda x: x.amax(-1),
    "min": lambda x: x.amin(-1),
    "max_all": lambda x: x.max(),
    "norm1": lambda x: x.norm(1, -1),
    "norm2": lambda x: x.norm(2, -1),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_long_row_reductions(op, n, dtype):
    rng = np.random.default_rng(n)
    arr = rng.standard_normal((3, n)).astype(dtype)
    arr[1, rng.integers(n)] = np.nan  # a NaN anywhere in the row
    arr[2, n - 1] = np.nan  # a NaN in the tail
    e, t = _pair(arr)
    f = REDUCTIONS[op]
    _close(f(e), f(t), rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("d", [100, 1000, 4096])
def test_layer_norm_long_rows(d, dtype):
    rng = np.random.default_rng(d)
    arr = (rng.standard_normal((8, d)) * 3 + 5).astype(dtype)
    w = rng.standard_normal(d).astype(dtype)
    b = rng.standard_normal(d).astype(dtype)
    (xe, xt), (we, wt), (be, bt) = _pair(arr), _pair(w), _pair(b)
    xe.requires_grad_(True)
    xt.requires_grad_(True)
    ye = ember.nn.functional.layer_norm(xe, (d,), we, be)
    yt = torch.nn.functional.layer_norm(xt, (d,), wt, bt)
    tol = 1e-5 if dtype == "float32" else 1e-12
    _close(ye.detach(), yt.detach(), rtol=tol, atol=tol)
    (ye * ye).sum().backward()
    (yt * yt).sum().backward()
    _close(xe.grad, xt.grad, rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("n", [63, 64, 65, 1000, 4099])
@pytest.mark.parametrize("op", ["exp", "sigmoid", "tanh", "gelu", "log"])
def test_unrolled_elementwise(op, n):
    arr = (np.random.default_rng(n).standard_normal(n) * 4).astype("float32")
    if op == "log":
        arr = np.abs(arr)
    e, t = _pair(arr)
    if op == "gelu":
        re, rt = ember.nn.functional.gelu(e), torch.nn.functional.gelu(t)
    else:
        re, rt = getattr(e, op)(), getattr(t, op)()
    # gelu is bit for bit (test_gelu_bits.py); the others within an ulp or two.
    _close(re, rt, rtol=0 if op == "gelu" else 2e-6, atol=0 if op == "gelu" else 1e-6)


@pytest.mark.parametrize("transposed", [True, False])
def test_mm_gradient_layout_of_mat2(transposed):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4))
    w = rng.standard_normal((3, 4) if transposed else (4, 3))
    results = []
    for lib in (ember, torch):
        xl, wl = lib.from_numpy(x.copy()), lib.from_numpy(w.copy()).requires_grad_(True)
        mat2 = wl.t() if transposed else wl
        y = lib.addmm(lib.ones(3, dtype=lib.float64), xl, mat2)
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append(gi[2].stride()))
        (y * y).sum().backward()
        results.append((seen[0], wl.grad.stride(), wl.grad.numpy().copy()))
    (se, ge, ve), (st, gt, vt) = results
    assert se == st and ge == gt
    np.testing.assert_allclose(ve, vt, rtol=1e-12)


TOL16 = {"float16": 2e-3, "bfloat16": 1.6e-2}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast"])
@pytest.mark.parametrize("n", [1, 17, 64, 1000])
def test_gelu_backward_vector_loop(n, layout, approximate, dtype):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((3, n)) * 3).astype("float32")
    x[0, : min(n, 4)] = [np.inf, -np.inf, np.nan, 0.0][: min(n, 4)]
    g = rng.standard_normal((3, n)).astype("float32")
    results = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).to(getattr(lib, dtype))
        gl = lib.from_numpy(g.copy()).to(getattr(lib, dtype))
        if layout == "strided":
            xl, gl = xl.t().contiguous().t(), gl[:, :]
        elif layout == "broadcast":
            gl = gl[:1].expand(3, n)
        xl.requires_grad_(True)
        lib.nn.functional.gelu(xl, approximate=approximate).backward(gl)
        results.append(xl.grad.to(lib.float64))
    # Bit for bit but float64's erf form (test_gelu_bits.py).
    tol = 1e-12 if dtype == "float64" and approximate == "none" else 0
    _close(results[0], results[1], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("n", [1, 15, 64, 1000])
def test_softmax_backward_last_dim(n, log, dtype):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((5, n)) * 2).astype("float32")
    g = rng.standard_normal((5, n)).astype("float32")
    results = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).to(getattr(lib, dtype)).requires_grad_(True)
        f = lib.log_softmax if log else lib.softmax
        f(xl, -1).backward(lib.from_numpy(g.copy()).to(getattr(lib, dtype)))
        results.append(xl.grad.to(lib.float64))
    tol = TOL16.get(dtype, 1e-5 if dtype == "float32" else 1e-12)
    _close(results[0], results[1], rtol=tol, atol=tol)


COPY_DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "bool",
    "complex64",
    "complex128",
]


def _both(fn):
    return [fn(lib) for lib in (ember, torch)]


def _same_bits(e, t):
    if t.dtype == torch.bfloat16:
        e, t = e.view(ember.int16), t.view(torch.int16)
    elif t.dtype.is_complex:
        e, t = ember.view_as_real(e), torch.view_as_real(t)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", COPY_DTYPES)
@pytest.mark.parametrize("shape", [(16, 16), (33, 70), (64, 64), (100, 37), (3, 40, 72)])
def test_transposed_copies(shape, dtype):
    # Tiled transpose path (Note [Tiled transpose copy]): full 32x32 tiles,
    # the register blocks of 4-, 8- and 16-byte types, and ragged edges.
    gen = np.random.default_rng(len(shape))
    arr = gen.standard_normal((2,) + shape) * 50
    if dtype.startswith("complex"):
        arr = arr + 1j * gen.standard_normal((2,) + shape)

    def src(lib):
        t = lib.from_numpy(arr.copy()).to(getattr(lib, dtype))[1]
        return t.transpose(-1, -2)

    e, t = _both(lambda lib: src(lib).contiguous())
    assert e.shape == t.shape and e.stride() == t.stride()
    _same_bits(e, t)

    def into_transposed(lib):
        dst = lib.zeros(shape[::-1], dtype=getattr(lib, dtype)).transpose(-1, -2) if len(shape) == 2 else None
        if dst is None:
            dst = lib.zeros(shape[0], shape[2], shape[1], dtype=getattr(lib, dtype)).transpose(-1, -2)
        dst.copy_(lib.from_numpy(arr.copy()).to(getattr(lib, dtype))[0])
        return dst

    _same_bits(*_both(into_transposed))


@pytest.mark.parametrize("perm", [(0, 2, 1, 3), (0, 2, 3, 1), (3, 1, 2, 0), (1, 0, 3, 2)])
def test_permuted_copies(perm):
    arr = np.arange(4 * 9 * 40 * 33, dtype="float32").reshape(4, 9, 40, 33)
    e, t = _both(lambda lib: lib.from_numpy(arr.copy()).permute(*perm).contiguous())
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    e, t = _both(lambda lib: lib.from_numpy(arr.copy())[:, 1:, ::2].permute(*perm).contiguous())
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("n", [1, 7, 255, 256, 1000])
def test_float16_conversions(n, layout):
    vals = np.concatenate(
        [
            np.random.default_rng(n).standard_normal(n) * 100,
            [np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 65520.0, 1e5, 6e-8, 2.9e-8, 1e-40, 1.0009765625],
        ]
    ).astype("float32")

    def conv(lib, dst):
        x = lib.from_numpy(vals.copy())
        if layout == "strided":
            x = x[::2]
        h = x.to(getattr(lib, dst))
        return h, h.float()

    for dst in ("float16", "bfloat16"):
        (eh, ef), (th, tf) = _both(lambda lib: conv(lib, dst))
        eb, tb = eh.view(ember.int16).numpy(), th.view(torch.int16).numpy()
        nan = np.isnan(tf.numpy())
        # NaN payloads differ between PyTorch's vector and scalar bfloat16
        # paths (0xffff / 0x7fc0); only the NaN positions are compared.
        np.testing.assert_array_equal(np.isnan(ef.numpy()), nan)
        np.testing.assert_array_equal(eb[~nan], tb[~nan])
        np.testing.assert_array_equal(ef.numpy()[~nan], tf.numpy()[~nan])


ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x),
    "tanh": lambda F, x: x.tanh(),
    "sigmoid": lambda F, x: x.sigmoid(),
    "silu": lambda F, x: F.silu(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "elu": lambda F, x: F.elu(x, 0.7),
    "selu": lambda F, x: F.selu(x),
    "softplus": lambda F, x: F.softplus(x, 2.0, 3.0),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 0.8),
    "threshold": lambda F, x: F.threshold(x, 0.1, 2.0),
    "mish": lambda F, x: F.mish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [5, 67, 1000])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_fused_activation_gradients(name, n, dtype):
    # Note [Fused first-order gradients]: one vector kernel per gradient.
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((2, n)) * 3).astype("float32")
    x[0, :4] = [0.0, np.nan, 0.1, -0.5]
    x[1, :4] = [3.0, -3.0, 20.0, -0.0]  # kinks and thresholds
    g = rng.standard_normal((2, n)).astype("float32")
    results = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).to(getattr(lib, dtype))[:, ::1].requires_grad_(True)
        gl = lib.from_numpy(g.copy()).to(getattr(lib, dtype)).t().contiguous().t()  # strided grad
        ACTIVATIONS[name](lib.nn.functional, xl).backward(gl)
        results.append(xl.grad.to(lib.float64))
    tol = TOL16.get(dtype, 2e-6 if dtype == "float32" else 1e-12)
    _close(results[0], results[1], rtol=tol, atol=tol)


SPECIAL = [
    0.0,
    -0.0,
    np.nan,
    np.inf,
    -np.inf,
    3.0,
    -3.0,
    2.9999998,
    1.5,
    20.0,
    88.0,
    -88.0,
    100.0,
    -104.0,
    1e-30,
    -1e-30,
    1e-8,
    -1e-8,
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_forward_vector_loop(name, layout, dtype):
    # Forwards run the vector loop for float storage; results within 2 ulp
    # of PyTorch's, special values exact.
    rng = np.random.default_rng(7)
    x = np.concatenate([np.array(SPECIAL, "float32"), (rng.standard_normal(1000) * 6).astype("float32")])
    outs = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).to(getattr(lib, dtype))
        if layout == "strided":
            xl = lib.stack([xl, xl], 1)[:, 0]
        outs.append(ACTIVATIONS[name](lib.nn.functional, xl).float())
    e, t = outs[0].numpy(), outs[1].numpy()
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
    fin = np.isfinite(t)
    np.testing.assert_array_equal(e[~fin & ~np.isnan(t)], t[~fin & ~np.isnan(t)])
    tol = TOL16.get(dtype, 2.4e-7)
    np.testing.assert_allclose(e[fin], t[fin], rtol=tol, atol=tol * 1e-3)


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid", "silu"])
def test_activation_double_backward(name):
    # With create_graph the composite formula records the graph.
    x = np.random.default_rng(3).standard_normal(50)
    results = []
    for lib in (ember, torch):
        xl = lib.from_numpy(x.copy()).requires_grad_(True)
        (gx,) = lib.autograd.grad(ACTIVATIONS[name](lib.nn.functional, xl).sum(), xl, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), xl)
        results.append((gx.detach(), ggx))
    _close(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    _close(results[0][1], results[1][1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 9, 64, 1000])
def test_row_reductions_with_special_values(n, dtype):
    # (8 rows: the column path's groups of eight rows; n columns: its vector chunks and tail.)
    # max/min with indices, logsumexp and prod over contiguous rows (vector
    # leaves) and over columns: NaN, infinities, signed zeros, ties.
    rng = np.random.default_rng(n)
    x = rng.standard_normal((8, n)).astype(dtype)
    x[1, n // 2] = np.nan
    x[2, :] = -np.inf
    x[3, n - 1] = np.inf
    x[4, :] = 0.0
    x[4, n // 3] = -0.0
    x[5, :] = 1.5  # all tied
    x[6, :] = rng.choice([0.5, 2.0], n)  # products stay finite
    e, t = _pair(x)
    for dim in (0, 1):
        for name in ("max", "min"):
            (ev, ei), (tv, ti) = getattr(e, name)(dim), getattr(t, name)(dim)
            np.testing.assert_array_equal(ei.numpy(), ti.numpy())
            np.testing.assert_array_equal(np.signbit(ev.numpy()), np.signbit(tv.numpy()))
            np.testing.assert_array_equal(ev.numpy(), tv.numpy())
        for name in ("amax", "amin"):
            np.testing.assert_array_equal(getattr(e, name)(dim).numpy(), getattr(t, name)(dim).numpy())
        tol = 1e-5 if dtype == "float32" else 1e-12
        _close(ember.logsumexp(e, dim), torch.logsumexp(t, dim), rtol=tol, atol=tol)
        _close(e[6:7].prod(dim), t[6:7].prod(dim), rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(37, 64), (37, 100), (1000, 300)])
def test_column_extremes(shape, dtype):
    # amax/amin over dim 0: vector accumulators over groups of eight rows.
    rng = np.random.default_rng(shape[0])
    x = rng.standard_normal(shape).astype(dtype)
    x[20, shape[1] // 2] = np.nan
    x[:, 3] = -np.inf
    x[5, 7] = np.inf
    e, t = _pair(x)
    for name in ("amax", "amin"):
        np.testing.assert_array_equal(getattr(e, name)(0).numpy(), getattr(t, name)(0).numpy())


@pytest.mark.parametrize("mask", ["none", "causal", "float", "bool", "full4d"])
@pytest.mark.parametrize("shape", [(2, 3, 17, 17, 8), (1, 2, 64, 40, 32), (2, 1, 5, 70, 20)])
@pytest.mark.parametrize("layout", ["contiguous", "heads_transposed"])
def test_fused_attention(shape, mask, layout):
    # Note [Fused attention]: one (batch, head) at a time, sgemm on strided rows.
    B, H, L, S, D = shape
    rng = np.random.default_rng(L * S)
    q, k, v = (rng.standard_normal(s).astype("float32") for s in ((B, L, H, D), (B, S, H, D), (B, S, H, D)))
    g = rng.standard_normal((B, H, L, D)).astype("float32")
    m = rng.standard_normal((L, S)).astype("float32")
    m[:, 0] = -np.inf  # a masked column
    m[1, :] = -np.inf  # a fully masked row
    bm = rng.random((B, H, L, S)) > 0.3
    results = []
    for lib in (ember, torch):
        ts = [lib.from_numpy(a.copy()).transpose(1, 2) for a in (q, k, v)]
        if layout == "contiguous":
            ts = [t.contiguous() for t in ts]
        ts = [t.requires_grad_(True) for t in ts]
        kw = {}
        if mask == "causal":
            kw["is_causal"] = True
        elif mask == "float":
            kw["attn_mask"] = lib.from_numpy(m.copy())
        elif mask == "bool":
            kw["attn_mask"] = lib.from_numpy(m.copy()) > -1
        elif mask == "full4d":
            kw["attn_mask"] = lib.from_numpy(bm.copy())
        out = lib.nn.functional.scaled_dot_product_attention(*ts, **kw)
        out.backward(lib.from_numpy(g.copy()))
        results.append([out.detach()] + [t.grad for t in ts])
    for e, t in zip(*results):
        _close(e, t, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.randn(3, 4).t(),
        lambda lib: lib.randn(2, 3, 4).permute(2, 0, 1),
        lambda lib: lib.randn(3, 4)[:, ::2],
        lambda lib: lib.randn(3, 1, 4).expand(3, 5, 4),
        lambda lib: lib.randn(6, 4),
    ],
)
def test_leaf_gradient_layout(make):
    # Note [Gradient layout]: .grad takes a dense leaf's strides, else is contiguous.
    strides = []
    for lib in (ember, torch):
        p = make(lib).detach().requires_grad_(True)
        (p * 2).sum().backward()
        q = make(lib).detach().requires_grad_(True)
        (q.contiguous() * 2).sum().backward()
        strides.append((p.grad.stride(), q.grad.stride()))
    assert strides[0] == strides[1]


def test_small_gemm_keeps_the_thread_count():
    # Small float32 products run on one OpenMP thread; the per-thread count,
    # which PyTorch in the same process reads too, is restored after them.
    old_e, old_t = ember.get_num_threads(), torch.get_num_threads()
    try:
        ember.set_num_threads(2)
        torch.set_num_threads(2)
        a = ember.randn(4, 4)
        a @ a
        assert torch.get_num_threads() == 2 and ember.get_num_threads() == 2
    finally:
        ember.set_num_threads(old_e)
        torch.set_num_threads(old_t)
