"""Matrix products against PyTorch: matmul's broadcasting rules for every
1-D/2-D/batched combination, mm/bmm/addmm/mv/dot/vdot/outer/addmv/baddbmm/
addbmm, every dtype (BLAS for float32/float64, loops for the rest),
transposed inputs, exception types and messages, gradients and grad_fn
names."""

from __future__ import annotations

import math

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, assert_same, dtypes, pair, torch
from hypothesis import given
from hypothesis import strategies as st

import ember


def run_both(fn_e, fn_t):
    try:
        expected = fn_t()
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)):
            fn_e()
        return None, None
    return fn_e(), expected


def tol(dname):
    return {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-5, "float64": 1e-12}.get(dname)


def same(e, t, dname):
    if t.dtype.is_floating_point:
        name = str(t.dtype).split(".")[1]  # tolerance of the result dtype
        assert_same(e, t, rtol=tol(name), atol=tol(name))
    else:
        assert_same(e, t)


def values(draw, dname, n):
    if dname == "bool":
        return [draw(st.booleans()) for _ in range(n)]
    if dname in FLOAT_NAMES:
        return [draw(st.floats(-3, 3, allow_nan=False, width=16)) for _ in range(n)]
    if dname == "uint8":
        return [draw(st.integers(0, 5)) for _ in range(n)]
    return [draw(st.integers(-5, 5)) for _ in range(n)]


def make(draw, dname, shape, transposed=False):
    """(ember, torch) with `shape`; transposed=True stores the last two dims
    swapped (a .mT view) so the BLAS transpose flags are exercised."""
    if transposed and len(shape) >= 2:
        stored = shape[:-2] + (shape[-1], shape[-2])
        e, t = pair(values(draw, dname, math.prod(stored)), dname, stored)
        perm = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
        return e.permute(*perm), t.permute(*perm)
    return pair(values(draw, dname, math.prod(shape)), dname, shape)


@st.composite
def matmul_shapes(draw):
    """Shapes for matmul: 1-D to 4-D each, batch dims broadcasting (with 1s),
    sometimes mismatched to hit the errors."""
    n, k, m = draw(st.integers(0, 4)), draw(st.integers(0, 4)), draw(st.integers(0, 4))
    da, db = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = [draw(st.integers(1, 3)) for _ in range(2)]
    a = (k,) if da == 1 else tuple(b if draw(st.booleans()) else 1 for b in batch[: da - 2]) + (n, k)
    b = (k,) if db == 1 else tuple(x if draw(st.booleans()) else 1 for x in batch[: db - 2]) + (k, m)
    if draw(st.integers(0, 9)) == 0:
        b = b[:-2] + (k + 1,) + b[-1:] if db >= 2 else (k + 1,)
    return a, b


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_matmul_matches(dname, data):
    sa, sb = data.draw(matmul_shapes())
    ea, ta = make(data.draw, dname, sa, data.draw(st.booleans()))
    eb, tb = make(data.draw, dname, sb, data.draw(st.booleans()))
    got, want = run_both(lambda: ember.matmul(ea, eb), lambda: torch.matmul(ta, tb))
    if want is not None:
        same(got, want, dname)
        same(ea @ eb, ta @ tb, dname)


PRODUCTS = {
    "mm": (lambda lib, a, b, c: lib.mm(a, b), ((2, 3), (3, 4))),
    "bmm": (lambda lib, a, b, c: a.bmm(b), ((2, 2, 3), (2, 3, 4))),
    "addmm": (lambda lib, a, b, c: lib.addmm(c, a, b, beta=0.5, alpha=2), ((2, 3), (3, 4), (4,))),
    "addmm_beta0": (lambda lib, a, b, c: c.addmm(a, b, beta=0), ((2, 3), (3, 4), (2, 4))),
    "mv": (lambda lib, a, b, c: lib.mv(a, b), ((3, 4), (4,))),
    "addmv": (lambda lib, a, b, c: lib.addmv(c, a, b, alpha=3), ((3, 4), (4,), (3,))),
    "dot": (lambda lib, a, b, c: lib.dot(a, b), ((5,), (5,))),
    "vdot": (lambda lib, a, b, c: a.vdot(b), ((5,), (5,))),
    "outer": (lambda lib, a, b, c: lib.outer(a, b), ((3,), (4,))),
    "baddbmm": (lambda lib, a, b, c: lib.baddbmm(c, a, b, beta=2, alpha=0.5), ((2, 2, 3), (2, 3, 4), (2, 1, 4))),
    "addbmm": (lambda lib, a, b, c: lib.addbmm(c, a, b), ((3, 2, 3), (3, 3, 4), (2, 4))),
}


@pytest.mark.parametrize("op", list(PRODUCTS))
@pytest.mark.parametrize("dname", DTYPE_NAMES)
@given(data=st.data())
def test_products_match(op, dname, data):
    fn, shapes = PRODUCTS[op]
    scale = data.draw(st.sampled_from([0, 1, 2]))  # 0: empty dims
    shapes = [tuple(0 if (d == 3 and scale == 0) else d for d in s) for s in shapes]
    tr = data.draw(st.booleans())
    ops = [make(data.draw, dname, s, tr) for s in shapes]
    while len(ops) < 3:
        ops.append((None, None))
    got, want = run_both(lambda: fn(ember, *[o[0] for o in ops]), lambda: fn(torch, *[o[1] for o in ops]))
    if want is not None:
        same(got, want, dname)


def test_int_overflow_and_mixed_dtypes():
    a, ta = pair([[100, 50], [20, 7]], "int8")
    same(a.mm(a), ta.mm(ta), "int8")
    same(a @ a, ta @ ta, "int8")
    ai, ti = pair([1, 2], "int64")
    af, tf = pair([1.0, 2.0], "float32")
    same(ember.outer(ai, af), torch.outer(ti, tf), "float32")
    same(ember.dot(ai, ai), torch.dot(ti, ti), "int64")


def test_errors_match():
    cases = [
        lambda lib: lib.mm(lib.ones(2, 3), lib.ones(2, 3)),
        lambda lib: lib.mm(lib.ones(3), lib.ones(3, 2)),
        lambda lib: lib.mm(lib.ones(2, 2), lib.ones(2)),
        lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64)),
        lambda lib: lib.mm(lib.ones(2, 2, dtype=lib.bool), lib.ones(2, 2, dtype=lib.bool)),
        lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(3, 3, 2)),
        lambda lib: lib.bmm(lib.ones(2, 3), lib.ones(3, 2)),
        lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 3, 2, dtype=lib.float64)),
        lambda lib: lib.bmm(lib.ones(2, 2, 2, dtype=lib.bool), lib.ones(2, 2, 2, dtype=lib.bool)),
        lambda lib: lib.mv(lib.ones(2, 3), lib.ones(2)),
        lambda lib: lib.mv(lib.ones(2, 3), lib.ones(2, 3)),
        lambda lib: lib.dot(lib.ones(3), lib.ones(2)),
        lambda lib: lib.dot(lib.ones(2, 2), lib.ones(2, 2)),
        lambda lib: lib.dot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
        lambda lib: lib.dot(lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool)),
        lambda lib: lib.matmul(lib.tensor(1.0), lib.ones(2, 2)),
        lambda lib: lib.matmul(lib.ones(3), lib.ones(2)),
        lambda lib: lib.matmul(lib.ones(2, 2, 3), lib.ones(3, 3, 2)),
        lambda lib: lib.matmul(lib.ones(2), lib.ones(3, 2)),
        lambda lib: lib.matmul(lib.ones(5, 2, 3), lib.ones(2)),
        lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(5, 2, 3)),
        lambda lib: lib.addmm(lib.ones(3), lib.ones(2, 3), lib.ones(3, 2)),
        lambda lib: lib.addmm(lib.ones(2, 2), lib.ones(2), lib.ones(2, 2)),
        lambda lib: lib.addmm(lib.ones(2, 2, dtype=lib.float64), lib.ones(2, 2), lib.ones(2, 2)),
        lambda lib: lib.ones(2).addmm_(lib.ones(2, 2), lib.ones(2, 2)),
        lambda lib: lib.addmv(lib.ones(3), lib.ones(2, 2), lib.ones(2)),
        lambda lib: lib.addbmm(lib.ones(2, 2), lib.ones(3, 2, 3), lib.ones(2, 3, 2)),
        lambda lib: lib.outer(lib.ones(2, 2), lib.ones(2)),
    ]
    for case in cases:
        with pytest.raises(Exception) as te:
            case(torch)
        with pytest.raises(type(te.value)) as ee:
            case(ember)
        assert str(ee.value) == str(te.value), case


GRAD_CASES = [
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (1, 4, 5)),
    ((7, 2, 3, 4), (2, 4, 5)),
    ((7, 2, 3, 4), (4, 5)),
    ((7, 1, 3, 4), (4,)),
    ((4,), (2, 2, 4, 5)),
    ((3, 4), (2, 2, 4, 5)),
    ((2, 1, 3, 4), (1, 2, 4, 5)),
]


@pytest.mark.parametrize("sa,sb", GRAD_CASES)
@pytest.mark.parametrize("grads", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("transposed", [False, True])
def test_matmul_grad_fn_and_gradients(sa, sb, grads, transposed):
    import random

    rnd = random.Random(hash((sa, sb, grads, transposed)) & 0xFFFF)
    ea, ta = _rand_pair(rnd, sa, transposed)
    eb, tb = _rand_pair(rnd, sb, transposed)
    for x, g in ((ea, grads[0]), (ta, grads[0]), (eb, grads[1]), (tb, grads[1])):
        x.requires_grad_(g)
    re, rt = ea @ eb, ta @ tb
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    same(re.detach(), rt.detach(), "float64")
    w = [rnd.uniform(-1, 1) for _ in range(rt.numel())]
    we, wt = pair(w, "float64", tuple(rt.shape))
    (re * we).sum().backward()
    (rt * wt).sum().backward()
    for x, y, g in ((ea, ta, grads[0]), (eb, tb, grads[1])):
        if g:
            same(x.grad, y.grad, "float64")


def _rand_pair(rnd, shape, transposed):
    stored = shape[:-2] + (shape[-1], shape[-2]) if transposed and len(shape) >= 2 else shape
    vals = [rnd.uniform(-2, 2) for _ in range(math.prod(stored))]
    e, t = pair(vals, "float64", stored)
    if transposed and len(shape) >= 2:
        perm = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
        e, t = e.permute(*perm).detach(), t.permute(*perm).detach()
    return e, t


PRODUCT_GRAD_NODES = {
    "MmBackward0": (lambda lib, a, b, c: lib.mm(a, b), ((2, 3), (3, 4), None)),
    "BmmBackward0": (lambda lib, a, b, c: lib.bmm(a, b), ((2, 2, 3), (2, 3, 4), None)),
    "AddmmBackward0": (lambda lib, a, b, c: lib.addmm(c, a, b, beta=0.5, alpha=-2), ((2, 3), (3, 4), (4,))),
    "MvBackward0": (lambda lib, a, b, c: lib.mv(a, b), ((3, 4), (4,), None)),
    "AddmvBackward0": (lambda lib, a, b, c: lib.addmv(c, a, b, beta=2), ((3, 4), (4,), (1,))),
    "DotBackward0": (lambda lib, a, b, c: lib.dot(a, b), ((4,), (4,), None)),
    "VdotBackward0": (lambda lib, a, b, c: lib.vdot(a, b), ((4,), (4,), None)),
    "MulBackward0": (lambda lib, a, b, c: lib.outer(a, b), ((3,), (4,), None)),
    "BaddbmmBackward0": (lambda lib, a, b, c: lib.baddbmm(c, a, b, alpha=3), ((2, 2, 3), (2, 3, 4), (2, 4))),
    "AddbmmBackward0": (lambda lib, a, b, c: lib.addbmm(c, a, b, beta=0), ((3, 2, 3), (3, 3, 4), (2, 4))),
}


@pytest.mark.parametrize("node", list(PRODUCT_GRAD_NODES))
@pytest.mark.parametrize("transposed", [False, True])
def test_product_gradients(node, transposed):
    import random

    rnd = random.Random(7)
    fn, shapes = PRODUCT_GRAD_NODES[node]
    pairs = [(_rand_pair(rnd, s, transposed) if s else (None, None)) for s in shapes]
    for e, t in pairs:
        if e is not None:
            e.requires_grad_(True)
            t.requires_grad_(True)
    re = fn(ember, *[p[0] for p in pairs])
    rt = fn(torch, *[p[1] for p in pairs])
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == node
    same(re.detach(), rt.detach(), "float64")
    re.sum().backward()
    rt.sum().backward()
    for e, t in pairs:
        if e is not None:
            same(e.grad, t.grad, "float64")


def test_double_backward_through_mm():
    res = []
    for lib in (ember, torch):
        a = lib.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[0.5, -2.0], [1.5, 2.0]], dtype=lib.float64, requires_grad=True)
        (ga,) = lib.autograd.grad((a @ b).sum(), a, create_graph=True)
        (ga * ga).sum().backward()
        res.append(b.grad)
    same(res[0], res[1], "float64")


@pytest.mark.parametrize("n", [1, 63, 64, 200])
def test_blas_layouts(n):
    # Transposed, sliced and expanded operands against torch (BLAS flags and copies).
    g = torch.Generator().manual_seed(n)
    t = torch.randn(n, n + 3, generator=g, dtype=torch.float64)
    e = ember.tensor(t.tolist(), dtype=ember.float64)
    for dt in ("float32", "float64"):
        ed, td = dtypes(dt)
        x, y = e.to(ed), t.to(td)
        xt, yt = x.permute(1, 0), y.permute(1, 0)
        same(xt @ x, yt @ y, dt)
        same(x @ xt, y @ yt, dt)
        xs, ys = x.as_strided((n, (n + 3) // 2), (n + 3, 2)), y.as_strided((n, (n + 3) // 2), (n + 3, 2))
        same(xs.permute(1, 0) @ xs, ys.permute(1, 0) @ ys, dt)
        v, w = x.as_strided((n + 3,), (1,)), y.as_strided((n + 3,), (1,))
        same(x @ v, y @ w, dt)
        same(xt.permute(1, 0) @ v, yt.permute(1, 0) @ w, dt)
        col, colt = x.as_strided((n,), (n + 3,)), y.as_strided((n,), (n + 3,))
        same(ember.dot(col, col), torch.dot(colt, colt), dt)
        b3, c3 = x.reshape(1, n, n + 3).expand(3, n, n + 3), y.reshape(1, n, n + 3).expand(3, n, n + 3)
        same(b3 @ xt, c3 @ yt, dt)
        same(b3.bmm(b3.permute(0, 2, 1)), c3.bmm(c3.permute(0, 2, 1)), dt)


def test_matmul_threads_setting_is_respected():
    a = ember.ones(64, 64)
    prev = ember.get_num_threads()
    ember.set_num_threads(1)
    try:
        assert (a @ a).sum().item() == 64 * 64 * 64
    finally:
        ember.set_num_threads(prev)


def test_out_and_inplace_variants():
    cases = [
        lambda lib, o: lib.matmul(lib.ones(2, 3), lib.ones(3, 4), out=o),
        lambda lib, o: lib.mm(lib.ones(2, 3), lib.ones(3, 4), out=o),
        lambda lib, o: lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 3, 4), out=o),
        lambda lib, o: lib.mv(lib.ones(2, 3), lib.ones(3), out=o),
        lambda lib, o: lib.dot(lib.ones(3), lib.ones(3), out=o),
        lambda lib, o: lib.addmm(lib.ones(4), lib.ones(2, 3), lib.ones(3, 4), out=o),
        lambda lib, o: lib.matmul(lib.ones(2, 3, requires_grad=True), lib.ones(3, 4), out=o),
        lambda lib, o: lib.mm(lib.ones(2, 3, requires_grad=True), lib.ones(3, 4), out=o),
    ]
    for dt in ("float32", "float64"):
        for case in cases:
            ed, td = dtypes(dt)
            oe, ot = ember.empty(0, dtype=ed), torch.empty(0, dtype=td)
            got, want = run_both(lambda: case(ember, oe), lambda: case(torch, ot))
            if want is not None:
                assert got is oe
                same(oe, ot, dt)
    for name, args in (("addmm_", ((2, 3), (3, 4))), ("baddbmm_", ((2, 2, 3), (2, 3, 4))), ("addmv_", ((2, 3), (3,)))):
        res = []
        for lib in (ember, torch):
            shapes = [(2, 4) if name == "addmm_" else (2, 2, 4) if name == "baddbmm_" else (2,)] + list(args)
            xs = [lib.full(s, 0.5) for s in shapes]
            r = getattr(xs[0], name)(*xs[1:], beta=2, alpha=3)
            assert r is xs[0]
            res.append(r)
        same(res[0], res[1], "float32")
    e, t = pair([1.0, 2.0, 3.0], "float32")
    same(e.cumsum_(0), t.cumsum_(0), "float32")
    same(e.cumprod_(0), t.cumprod_(0), "float32")
