"""Matrix products against PyTorch: matmul's broadcasting rules for every
1-D/2-D/batched combination, mm/bmm/addmm/mv/dot/vdot/outer/addmv/baddbmm/
addbmm, every dtype (BLAS for float32/float64, loops for the rest),
transposed inputs, exception types and messages, gradients and grad_fn
names."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, assert_same, dtypes, pair, to_torch, torch
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


# ---- decompositions and solvers (LAPACK) ------------------------------------------------------------
#
# Each case runs the same float32/float64 inputs through ember.linalg and
# torch.linalg. Eigenvectors are unique only up to sign, so they are compared
# after giving each vector's largest entry a positive sign; singular vectors
# already agree in sign with PyTorch's on these inputs and are compared as
# they are.


def from_torch(t):
    return ember.tensor(t.tolist(), dtype=getattr(ember, str(t.dtype).split(".")[1])).reshape(tuple(t.shape))


def _sym(lib, a):
    """A symmetric (Hermitian, for complex a) positive-definite matrix."""
    return a @ a.mH + lib.eye(a.shape[-1], dtype=a.dtype)


def _phase(x):
    """The sign of real x; the unit phase x / |x| of complex x."""
    return x / x.abs() if x.is_complex() else x.sign()


def _fix_sign(v):
    """Eigenvectors with their largest-magnitude entry made positive (real)."""
    if v.numel() == 0:
        return v
    idx = v.abs().argmax(-2, keepdim=True)
    return v * _phase(v.gather(-2, idx)).conj()


def _svd_canon(r):
    """(U, S, Vh) with U's first k columns signed as _fix_sign does, Vh's rows
    flipped to match, and the full bases' shapes kept (their extra columns are
    not unique)."""
    U, S, Vh = r
    k = S.shape[-1]
    if U.numel() == 0 or k == 0:
        return U, S, Vh
    u = U[..., :, :k]
    idx = u.abs().argmax(-2, keepdim=True)
    sign = _phase(u.gather(-2, idx)).conj()
    return u * sign, S, Vh[..., :k, :] * sign.mH, U.shape[-1], Vh.shape[-2]


LAPACK_TOL = {"float32": 2e-4, "float64": 1e-10}

# name -> (function of (lib, A, B), shape of A, shape of B or None)
LAPACK_CASES = {
    "solve": (lambda L, a, b: L.linalg.solve(a, b), (3, 3), (3, 2)),
    "solve_vector": (lambda L, a, b: L.linalg.solve(a, b[..., 0]), (3, 3), (3, 1)),
    "solve_left_false": (lambda L, a, b: L.linalg.solve(a, b.mT, left=False), (3, 3), (3, 2)),
    "solve_ex": (lambda L, a, b: tuple(L.linalg.solve_ex(a, b)), (3, 3), (3, 2)),
    "inv": (lambda L, a, b: L.linalg.inv(a), (4, 4), None),
    "inv_ex": (lambda L, a, b: tuple(L.linalg.inv_ex(a)), (4, 4), None),
    "det": (lambda L, a, b: L.linalg.det(a), (4, 4), None),
    "slogdet": (lambda L, a, b: tuple(L.linalg.slogdet(a)), (4, 4), None),
    "logdet": (lambda L, a, b: L.logdet(_sym(L, a)), (3, 3), None),
    "cholesky": (lambda L, a, b: L.linalg.cholesky(_sym(L, a)), (4, 4), None),
    "cholesky_upper": (lambda L, a, b: L.linalg.cholesky(_sym(L, a), upper=True), (4, 4), None),
    "cholesky_ex": (lambda L, a, b: tuple(L.linalg.cholesky_ex(_sym(L, a))), (4, 4), None),
    "cholesky_solve": (lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(_sym(L, a))), (3, 3), (3, 2)),
    "cholesky_inverse": (lambda L, a, b: L.cholesky_inverse(L.linalg.cholesky(_sym(L, a))), (3, 3), None),
    "qr": (lambda L, a, b: tuple(L.linalg.qr(a)), (4, 3), None),
    "qr_wide": (lambda L, a, b: tuple(L.linalg.qr(a)), (3, 4), None),
    "qr_complete": (lambda L, a, b: tuple(L.linalg.qr(a, mode="complete")), (4, 3), None),
    "qr_r": (lambda L, a, b: L.linalg.qr(a, mode="r")[1], (4, 3), None),
    "eigh": (lambda L, a, b: (lambda r: (r[0], _fix_sign(r[1])))(L.linalg.eigh(_sym(L, a))), (4, 4), None),
    "eigh_upper": (lambda L, a, b: L.linalg.eigh(_sym(L, a), UPLO="U")[0], (4, 4), None),
    "eigvalsh": (lambda L, a, b: L.linalg.eigvalsh(_sym(L, a)), (4, 4), None),
    "svd": (lambda L, a, b: _svd_canon(L.linalg.svd(a)), (4, 3), None),
    "svd_reduced": (lambda L, a, b: _svd_canon(L.linalg.svd(a, full_matrices=False)), (3, 5), None),
    "svdvals": (lambda L, a, b: L.linalg.svdvals(a), (5, 3), None),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, (5, 3), (5, 2)),
    "lstsq_gelsd": (lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelsd")), (5, 3), (5, 2)),
    "lstsq_gelss": (lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelss")), (3, 5), (3, 2)),
    "lstsq_gels": (lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gels")), (5, 3), (5, 2)),
    "lu": (lambda L, a, b: tuple(L.linalg.lu(a)), (4, 4), None),
    "lu_tall": (lambda L, a, b: tuple(L.linalg.lu(a)), (5, 3), None),
    "lu_wide": (lambda L, a, b: tuple(L.linalg.lu(a)), (3, 5), None),
    "lu_factor": (lambda L, a, b: tuple(L.linalg.lu_factor(a)), (4, 4), None),
    "lu_factor_ex": (lambda L, a, b: tuple(L.linalg.lu_factor_ex(a)), (4, 4), None),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), (3, 3), (3, 2)),
    "lu_solve_adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), (3, 3), (3, 2)),
    "lu_solve_right": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b.mT, left=False), (3, 3), (3, 2)),
    "lu_unpack": (lambda L, a, b: tuple(L.lu_unpack(*L.linalg.lu_factor(a))), (4, 4), None),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a.triu(), b, upper=True), (3, 3), (3, 2)),
    "solve_triangular_right": (
        lambda L, a, b: L.linalg.solve_triangular(a.tril(), b.mT, upper=False, left=False, unitriangular=True),
        (3, 3),
        (3, 2),
    ),
    "triangular_solve": (lambda L, a, b: tuple(L.triangular_solve(b, a.tril(), upper=False)), (3, 3), (3, 2)),
    "pinv": (lambda L, a, b: L.linalg.pinv(a), (5, 3), None),
    "pinv_hermitian": (lambda L, a, b: L.linalg.pinv(_sym(L, a), hermitian=True), (3, 3), None),
    "pinverse": (lambda L, a, b: L.pinverse(a), (3, 5), None),
    "matrix_rank": (lambda L, a, b: L.linalg.matrix_rank(a), (5, 3), None),
    "matrix_rank_tol": (lambda L, a, b: L.linalg.matrix_rank(a, atol=0.5, rtol=0.1), (5, 3), None),
    "matrix_norm_nuc": (lambda L, a, b: L.linalg.matrix_norm(a, "nuc"), (4, 3), None),
    "matrix_norm_2": (lambda L, a, b: L.linalg.matrix_norm(a, 2), (4, 3), None),
    "matrix_norm_-2": (lambda L, a, b: L.linalg.matrix_norm(a, -2, keepdim=True), (4, 3), None),
    "norm_2": (lambda L, a, b: L.linalg.norm(a.reshape(-1, 3), 2), (4, 3), None),
    "cond": (lambda L, a, b: L.linalg.cond(a), (4, 4), None),
    "cond_1": (lambda L, a, b: L.linalg.cond(a, 1), (4, 4), None),
    "cond_fro": (lambda L, a, b: L.linalg.cond(a, "fro"), (4, 4), None),
    "matrix_exp": (lambda L, a, b: L.linalg.matrix_exp(a), (4, 4), None),
    "matrix_exp_large": (lambda L, a, b: L.linalg.matrix_exp(4 * a), (4, 4), None),
    "matrix_power": (lambda L, a, b: L.linalg.matrix_power(a, 5), (3, 3), None),
    "matrix_power_neg": (lambda L, a, b: L.linalg.matrix_power(a, -2), (3, 3), None),
    "matrix_power_0": (lambda L, a, b: L.linalg.matrix_power(a, 0), (3, 3), None),
    "householder_product": (lambda L, a, b: L.linalg.householder_product(*L.geqrf(a)), (5, 3), None),
    "ormqr": (lambda L, a, b: L.ormqr(*L.geqrf(a), b), (3, 3), (3, 2)),
    "ormqr_right_t": (lambda L, a, b: L.ormqr(*L.geqrf(a), b.mT, left=False, transpose=True), (3, 3), (3, 2)),
    "ldl_factor": (lambda L, a, b: tuple(L.linalg.ldl_factor(a + a.mT)), (4, 4), None),
    "ldl_solve": (lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a + a.mT), b), (4, 4), (4, 2)),
    "tensorinv": (lambda L, a, b: L.linalg.tensorinv(a.reshape(4, 2, 2), ind=1), (4, 4), None),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), (4, 3), (4, 3)),
    "vander": (lambda L, a, b: L.linalg.vander(a[..., 0, :], N=4), (3, 3), None),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), (3, 2), (3, 2)),
    "diagonal": (lambda L, a, b: L.linalg.diagonal(a, offset=1), (3, 4), None),
}


def _lapack_inputs(shape_a, shape_b, batch, dname, seed=0):
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dname)
    ta = torch.randn(*batch, *shape_a, generator=g, dtype=torch.float64).to(dt)
    if shape_a[-1] == shape_a[-2]:
        ta = ta + 2 * torch.eye(shape_a[-1], dtype=dt)  # well conditioned
    tb = None if shape_b is None else torch.randn(*batch, *shape_b, generator=g, dtype=torch.float64).to(dt)
    return ta, tb


def _compare(got, want, dname):
    if isinstance(want, int):
        assert got == want
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w, dname)
        return
    tol = LAPACK_TOL[dname] if want.dtype.is_floating_point else None
    assert_same(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)], ids=["single", "batch", "batch2"])
@pytest.mark.parametrize("dname", ["float32", "float64"])
@pytest.mark.parametrize("case", list(LAPACK_CASES))
def test_lapack_values(case, dname, batch):
    fn, sa, sb = LAPACK_CASES[case]
    if case == "tensorinv" and batch:
        pytest.skip("tensorinv takes one tensor, not a batch")
    ta, tb = _lapack_inputs(sa, sb, batch, dname)
    ea = from_torch(ta)
    eb = None if tb is None else from_torch(tb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = fn(torch, ta, tb)
        got = fn(ember, ea, eb)
    _compare(got, want, dname)


EMPTY_CASES = [
    "solve",
    "inv",
    "det",
    "slogdet",
    "cholesky",
    "qr",
    "qr_wide",
    "eigh",
    "eigvalsh",
    "svd",
    "svdvals",
    "lu",
    "lu_factor",
    "pinv",
    "matrix_rank",
    "matrix_norm_2",
    "cond",
    "matrix_exp",
    "lstsq_gelsd",
]


@pytest.mark.parametrize("shape", [((0,), None), ((2,), 0)], ids=["empty_batch", "0x0"])
@pytest.mark.parametrize("case", EMPTY_CASES)
def test_lapack_empty(case, shape):
    fn, sa, sb = LAPACK_CASES[case]
    batch, size = shape
    if size is not None:
        sa = (0, 0)
        sb = None if sb is None else (0, sb[-1])
    ta, tb = _lapack_inputs(sa, sb, batch, "float64")
    want = fn(torch, ta, tb)
    got = fn(ember, from_torch(ta), None if tb is None else from_torch(tb))
    _compare(got, want, "float64")


def _ember_args(args):
    return [from_torch(a).requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]


# name -> (function, shapes of the differentiable inputs); float64, batched
GRAD_CASES = {
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [(2, 3, 3), (2, 3, 2)]),
    "solve_left_false": (lambda L, a, b: L.linalg.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "solve_broadcast": (lambda L, a, b: L.linalg.solve(a, b), [(3, 3), (2, 3, 1)]),
    "inv": (lambda L, a: L.linalg.inv(a), [(2, 3, 3)]),
    "det": (lambda L, a: L.linalg.det(a), [(2, 3, 3)]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a)[1], [(2, 3, 3)]),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a)[0], [(2, 3, 3)]),
    "lu_tall": (lambda L, a: L.linalg.lu(a)[1:], [(4, 3)]),
    "lu_wide": (lambda L, a: L.linalg.lu(a)[1:], [(3, 4)]),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), [(3, 3), (3, 2)]),
    "cholesky": (lambda L, a: L.linalg.cholesky(_sym(L, a)), [(2, 3, 3)]),
    "cholesky_upper": (lambda L, a: L.linalg.cholesky(_sym(L, a), upper=True), [(3, 3)]),
    "qr": (lambda L, a: L.linalg.qr(a), [(2, 3, 3)]),
    "qr_tall": (lambda L, a: L.linalg.qr(a), [(4, 3)]),
    "qr_wide": (lambda L, a: L.linalg.qr(a), [(3, 4)]),
    "eigh": (lambda L, a: (lambda r: (r[0], r[1].abs()))(L.linalg.eigh(_sym(L, a))), [(2, 3, 3)]),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(_sym(L, a)), [(3, 3)]),
    "svd_tall": (lambda L, a: (lambda r: (r[0] @ r[2], r[1]))(L.linalg.svd(a, full_matrices=False)), [(2, 4, 3)]),
    "svd_wide": (lambda L, a: (lambda r: (r[0] @ r[2], r[1]))(L.linalg.svd(a, full_matrices=False)), [(3, 4)]),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), [(4, 3)]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [(4, 3)]),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    "solve_triangular": (
        lambda L, a, b: L.linalg.solve_triangular(a.triu() + 3 * L.eye(3, dtype=a.dtype), b, upper=True),
        [(3, 3), (3, 2)],
    ),
    "solve_triangular_unit_right": (
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        [(3, 3), (2, 3)],
    ),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), [(2, 3, 3)]),
    "matrix_power": (lambda L, a: L.linalg.matrix_power(a, -2), [(3, 3)]),
    "householder_product": (lambda L, a, t: L.linalg.householder_product(a, t), [(4, 3), (3,)]),
    "cond": (lambda L, a: L.linalg.cond(a), [(3, 3)]),
    "matrix_norm_nuc": (lambda L, a: L.linalg.matrix_norm(a, "nuc"), [(3, 4)]),
    "cholesky_solve": (lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(_sym(L, a))), [(3, 3), (3, 2)]),
    "cholesky_inverse": (lambda L, a: L.cholesky_inverse(L.linalg.cholesky(_sym(L, a))), [(3, 3)]),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4,)]),
    "tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a, b), [(2, 3, 6), (2, 3)]),
}


def _grad_inputs(shapes, seed=1):
    g = torch.Generator().manual_seed(seed)
    out = []
    for s in shapes:
        t = torch.randn(*s, generator=g, dtype=torch.float64)
        if len(s) >= 2 and s[-1] == s[-2]:
            t = t + 2 * torch.eye(s[-1], dtype=torch.float64)
        out.append(t.requires_grad_(True))
    return out


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_lapack_gradients(case):
    fn, shapes = GRAD_CASES[case]
    targs = _grad_inputs(shapes)
    eargs = _ember_args(targs)
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), eargs)
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, *a), eargs)
    # the gradient itself equals PyTorch's
    tout = fn(torch, *targs)
    eout = fn(ember, *eargs)
    tout = tout if isinstance(tout, tuple) else (tout,)
    eout = eout if isinstance(eout, tuple) else (eout,)
    tsum = sum((o * torch.linspace(0.5, 1.5, o.numel(), dtype=o.dtype).reshape(o.shape)).sum() for o in tout)
    esum = sum((o * ember.linspace(0.5, 1.5, o.numel(), dtype=o.dtype).reshape(o.shape)).sum() for o in eout)
    tgrads = torch.autograd.grad(tsum, targs)
    egrads = ember.autograd.grad(esum, eargs)
    for eg, tg in zip(egrads, tgrads):
        assert_same(eg, tg, rtol=1e-8, atol=1e-8)


def _singular(lib, n=3, batch=()):
    a = lib.zeros(*batch, n, n, dtype=lib.float64)
    return a


ERROR_CASES = {
    "solve_singular": lambda L: L.linalg.solve(_singular(L), L.ones(3, dtype=L.float64)),
    "solve_singular_batch": lambda L: L.linalg.solve(_singular(L, 3, (2,)), L.ones(2, 3, dtype=L.float64)),
    "solve_shape": lambda L: L.linalg.solve(L.eye(3), L.ones(4)),
    "solve_shape_right": lambda L: L.linalg.solve(L.eye(3), L.ones(3, 2), left=False),
    "solve_dtype": lambda L: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.float64)),
    "solve_int": lambda L: L.linalg.solve(L.ones(3, 3, dtype=L.int64), L.ones(3, dtype=L.int64)),
    "inv_singular": lambda L: L.linalg.inv(_singular(L)),
    "inv_singular_batch": lambda L: L.linalg.inv(L.stack([L.eye(3, dtype=L.float64), _singular(L)])),
    "inv_int": lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.int64)),
    "inv_half": lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.float16)),
    "inv_nonsquare": lambda L: L.linalg.inv(L.ones(2, 3)),
    "inv_1d": lambda L: L.linalg.inv(L.ones(3)),
    "det_int": lambda L: L.linalg.det(L.ones(3, 3, dtype=L.int64)),
    "det_nonsquare": lambda L: L.linalg.det(L.ones(2, 3)),
    "cholesky_not_pd": lambda L: L.linalg.cholesky(-L.eye(3)),
    "cholesky_not_pd_batch": lambda L: L.linalg.cholesky(L.stack([L.eye(3), -L.eye(3)])),
    "cholesky_int": lambda L: L.linalg.cholesky(L.ones(3, 3, dtype=L.int64)),
    "cholesky_half": lambda L: L.linalg.cholesky(L.ones(3, 3, dtype=L.float16)),
    "eigh_nonsquare": lambda L: L.linalg.eigh(L.ones(2, 3)),
    "eigh_uplo": lambda L: L.linalg.eigh(L.eye(3), UPLO="X"),
    "eigh_int": lambda L: L.linalg.eigh(L.ones(3, 3, dtype=L.int64)),
    "svd_1d": lambda L: L.linalg.svd(L.ones(3)),
    "svd_int": lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.int64)),
    "svd_nan": lambda L: L.linalg.svd(L.full((3, 3), float("nan"))),
    "qr_mode": lambda L: L.linalg.qr(L.eye(3), mode="x"),
    "qr_int": lambda L: L.linalg.qr(L.ones(3, 3, dtype=L.int64)),
    "lu_factor_singular": lambda L: L.linalg.lu_factor(L.zeros(3, 3)),
    "lu_factor_half": lambda L: L.linalg.lu_factor(L.ones(3, 3, dtype=L.float16)),
    "lu_solve_shape": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(3)), L.ones(4, 2)),
    "lstsq_driver": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 2), driver="x"),
    "lstsq_shape": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4, 2)),
    "lstsq_dtype": lambda L: L.linalg.lstsq(L.ones(3, 2, dtype=L.float64), L.ones(3, 2)),
    "solve_triangular_shape": lambda L: L.linalg.solve_triangular(L.ones(3, 3), L.ones(2, 2), upper=True),
    "pinv_1d": lambda L: L.linalg.pinv(L.ones(3)),
    "pinv_int": lambda L: L.linalg.pinv(L.ones(3, 3, dtype=L.int64)),
    "matrix_power_nonsquare": lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    "matrix_power_singular": lambda L: L.linalg.matrix_power(L.zeros(3, 3), -1),
    "householder_rows": lambda L: L.linalg.householder_product(L.ones(2, 3), L.ones(2)),
    "householder_tau": lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(3)),
    "multi_dot_one": lambda L: L.linalg.multi_dot([L.ones(3)]),
    "cross_shape": lambda L: L.linalg.cross(L.ones(3), L.ones(2)),
    "cond_ord": lambda L: L.linalg.cond(L.eye(3), 3),
    "matrix_norm_ord": lambda L: L.linalg.matrix_norm(L.eye(3), "abc"),
    "matrix_exp_int": lambda L: L.linalg.matrix_exp(L.ones(3, 3, dtype=L.int64)),
    "ldl_int": lambda L: L.linalg.ldl_factor(L.ones(3, 3, dtype=L.int64)),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_lapack_errors(case):
    fn = ERROR_CASES[case]
    with pytest.raises(Exception) as want:  # noqa: PT011 - the type is PyTorch's, compared below
        fn(torch)
    with pytest.raises(Exception) as got:  # noqa: PT011
        fn(ember)
    assert type(got.value).__name__ == type(want.value).__name__
    assert isinstance(got.value, RuntimeError) == isinstance(want.value, RuntimeError)
    assert str(got.value) == str(want.value)


def test_linalg_error_type():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    assert ember.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))


def test_ex_variants_report_info():
    for lib in (torch, ember):
        assert lib.linalg.inv_ex(lib.zeros(2, 3, 3)).info.tolist() == [1, 1]
        assert lib.linalg.cholesky_ex(-lib.eye(3)).info.item() == 1
        assert lib.linalg.lu_factor_ex(lib.zeros(3, 3)).info.item() == 1
        assert lib.linalg.solve_ex(lib.eye(3), lib.ones(3)).info.item() == 0
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.cholesky_ex(-ember.eye(3), check_errors=True)


def test_lapack_printing():
    for fn in (
        lambda L: L.linalg.slogdet(L.eye(2) * 2),
        lambda L: L.linalg.qr(L.eye(2)),
        lambda L: L.linalg.inv_ex(L.eye(2)),
        lambda L: L.linalg.eigh(L.eye(2) * 3),
        lambda L: L.linalg.lu_factor(L.eye(2)),
    ):
        assert repr(fn(ember)) == repr(fn(torch))
    assert type(ember.linalg.svd(ember.eye(2))).__name__ == type(torch.linalg.svd(torch.eye(2))).__name__


OUT_CASES = {
    "solve": (lambda L, a, out: L.linalg.solve(a, a, out=out), 1),
    "inv": (lambda L, a, out: L.linalg.inv(a, out=out), 1),
    "det": (lambda L, a, out: L.linalg.det(a, out=out), 1),
    "cholesky": (lambda L, a, out: L.linalg.cholesky(_sym(L, a), out=out), 1),
    "eigvalsh": (lambda L, a, out: L.linalg.eigvalsh(_sym(L, a), out=out), 1),
    "svdvals": (lambda L, a, out: L.linalg.svdvals(a, out=out), 1),
    "pinv": (lambda L, a, out: L.linalg.pinv(a, out=out), 1),
    "qr": (lambda L, a, out: L.linalg.qr(a, out=out), 2),
    "slogdet": (lambda L, a, out: L.linalg.slogdet(a, out=out), 2),
    "lu_factor": (lambda L, a, out: L.linalg.lu_factor(a, out=(out[0], L.empty(0, dtype=L.int32))), 2),
}


@pytest.mark.parametrize("case", list(OUT_CASES))
def test_lapack_out(case):
    fn, n = OUT_CASES[case]
    ta, _ = _lapack_inputs((3, 3), None, (2,), "float64")
    ea = from_torch(ta)
    tout = [torch.empty(0, dtype=torch.float64) for _ in range(n)]
    eout = [ember.empty(0, dtype=ember.float64) for _ in range(n)]
    want = fn(torch, ta, tout[0] if n == 1 else tuple(tout))
    got = fn(ember, ea, eout[0] if n == 1 else tuple(eout))
    if n == 1:
        assert got is eout[0]
        _compare(got, want, "float64")
    else:
        assert got[0] is eout[0]
        _compare(tuple(got), tuple(want), "float64")


@pytest.mark.parametrize("fn", ["eig", "eigvals"])
def test_eig(fn):
    """Complex eigenvalues of real matrices (eigenvectors: test_linalg_complex.py)."""
    ta, _ = _lapack_inputs((3, 3), None, (2,), "float64")
    want = getattr(torch.linalg, fn)(ta)
    got = getattr(ember.linalg, fn)(from_torch(ta))
    assert_same(got[0] if fn == "eig" else got, want[0] if fn == "eig" else want, rtol=1e-12, atol=1e-12)


def test_eig_real_parts_from_lapack():
    """The LAPACK call behind eig: its real and imaginary parts match PyTorch's eigenvalues."""
    ta, _ = _lapack_inputs((4, 4), None, (2,), "float64")
    wr, wi, v, info = ember._C._VariableFunctions._linalg_lapack_geev(from_torch(ta), True)
    want = torch.linalg.eigvals(ta)
    got = torch.complex(to_torch(wr), to_torch(wi))
    key = lambda z: sorted(z.tolist(), key=lambda c: (round(c.real, 8), round(c.imag, 8)))  # noqa: E731
    for g, w in zip(got, want):
        assert all(abs(a - b) < 1e-10 for a, b in zip(key(g), key(w)))
    assert info.tolist() == [0, 0]


def test_top_level_aliases():
    names = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
             "lu", "lu_unpack", "lu_solve", "triangular_solve", "pinverse", "matrix_exp", "matrix_power", "geqrf",
             "orgqr", "ormqr", "chain_matmul"]  # fmt: skip
    for name in names:
        assert hasattr(torch, name) and hasattr(ember, name), name
    ta, _ = _lapack_inputs((3, 3), None, (2,), "float64")
    ea = from_torch(ta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _compare(ember.svd(ea)[1], torch.svd(ta)[1], "float64")
        _compare(ember.inverse(ea), torch.inverse(ta), "float64")
        _compare(tuple(ember.lu(ea)), tuple(torch.lu(ta)), "float64")
        _compare(
            ember.lu_solve(ea, *ember.linalg.lu_factor(ea)), torch.lu_solve(ta, *torch.linalg.lu_factor(ta)), "float64"
        )
        _compare(ember.orgqr(*ember.geqrf(ea)), torch.orgqr(*torch.geqrf(ta)), "float64")
        _compare(tuple(ember.slogdet(ea)), tuple(torch.slogdet(ta)), "float64")
    assert type(ember.slogdet(ea)).__name__ == type(torch.slogdet(ta)).__name__


def test_deprecation_warnings_match():
    a = ember.eye(3)
    for name, call in [
        ("qr", lambda L: L.qr(L.eye(3))),
        ("chain_matmul", lambda L: L.chain_matmul(L.eye(3), L.eye(3))),
    ]:
        with pytest.warns(UserWarning) as want:
            call(torch)
        ember._warnings._WARNED.discard(("linalg", name))
        with pytest.warns(UserWarning) as got:
            call(ember)
        assert str(want[0].message).startswith(str(got[0].message)), name
    del a


GRAD_FN_CASES = {
    "inv": lambda L, x: L.linalg.inv(x),
    "solve": lambda L, x: L.linalg.solve(x, x),
    "det": lambda L, x: L.linalg.det(x),
    "slogdet": lambda L, x: L.linalg.slogdet(x)[1],
    "cholesky": lambda L, x: L.linalg.cholesky(x),
    "qr": lambda L, x: L.linalg.qr(x)[0],
    "eigh": lambda L, x: L.linalg.eigh(x)[0],
    "eigvalsh": lambda L, x: L.linalg.eigvalsh(x),
    "svd": lambda L, x: L.linalg.svd(x)[0],
    "svdvals": lambda L, x: L.linalg.svdvals(x),
    "lu_factor": lambda L, x: L.linalg.lu_factor(x)[0],
    "solve_triangular": lambda L, x: L.linalg.solve_triangular(x, x, upper=True),
    # a right-hand side with an exact, zero-free solution: the zeros of lstsq(x, x) take
    # the sign of the LAPACK path PyTorch's MKL happens to run, which varies within a process
    "lstsq": lambda L, x: L.linalg.lstsq(x, x.sum(-1, keepdim=True))[0],
    "matrix_exp": lambda L, x: L.linalg.matrix_exp(x),
    "pinv": lambda L, x: L.linalg.pinv(x),
}


@pytest.mark.parametrize("case", list(GRAD_FN_CASES))
def test_lapack_grad_fn_names(case):
    fn = GRAD_FN_CASES[case]
    t = (2 * torch.eye(3, dtype=torch.float64)).requires_grad_(True)
    e = (2 * ember.eye(3, dtype=ember.float64)).requires_grad_(True)
    got, want = fn(ember, e), fn(torch, t)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    assert repr(got) == repr(want)


_STRIDE_CASES = {
    "qr.R": lambda m, a, t: m.linalg.qr(t)[1],
    "qr.R complete": lambda m, a, t: m.linalg.qr(t, mode="complete")[1],
    "qr.R wide": lambda m, a, t: m.linalg.qr(t.mT, mode="r")[1],
    "eig.V": lambda m, a, t: m.linalg.eig(a)[1],
    "eig.V complex": lambda m, a, t: m.linalg.eig(a.to(m.complex128))[1],
    "ldl_factor": lambda m, a, t: m.linalg.ldl_factor(a + a.mT)[0],
    "lu.U": lambda m, a, t: m.linalg.lu(a)[2],
    "lu_factor": lambda m, a, t: m.linalg.lu_factor(a)[0],
    "svd.Vh": lambda m, a, t: m.linalg.svd(t, full_matrices=False)[2],
    "eigh.V": lambda m, a, t: m.linalg.eigh(a + a.mT)[1],
    "inv": lambda m, a, t: m.linalg.inv(a),
    "pinv": lambda m, a, t: m.linalg.pinv(t),
    "lstsq": lambda m, a, t: m.linalg.lstsq(t, t[..., :2]).solution,
    "householder_product": lambda m, a, t: m.linalg.householder_product(t, t[:, 0, :3]),
}


@pytest.mark.parametrize("name", sorted(_STRIDE_CASES))
def test_linalg_results_have_pytorchs_strides(name):
    # LAPACK's results are column-major, and PyTorch returns them so (R of qr, the assembled
    # eigenvectors of a real eig and ldl_factor's triangle included).
    arr = np.random.default_rng(0).standard_normal((3, 5, 5))
    tall = np.random.default_rng(1).standard_normal((3, 6, 4))
    got = []
    for m in (ember, torch):
        r = _STRIDE_CASES[name](m, m.from_numpy(arr.copy()), m.from_numpy(tall.copy()))
        got.append((tuple(r.shape), r.stride()))
    assert got[0] == got[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_cross_bits_match_pytorch(dtype, dim):
    # PyTorch's kernel fuses a1 * b2 - a2 * b1 into one fma: parallel rows give tiny residues, not zeros
    g = torch.Generator().manual_seed(7)
    shape = {-1: (6, 4, 3), 0: (3, 4, 5), 1: (4, 3, 5)}[dim]
    a = torch.randn(shape, generator=g, dtype=getattr(torch, dtype))
    b = torch.randn(shape, generator=g, dtype=getattr(torch, dtype))
    b[0] = a[0] * 3  # parallel vectors along every dim choice
    want = torch.linalg.cross(a, b, dim=dim)
    got = ember.linalg.cross(ember.tensor(a.numpy()), ember.tensor(b.numpy()), dim=dim)
    assert got.stride() == want.stride()
    assert np.array_equal(got.numpy().view(np.uint8), want.numpy().view(np.uint8))


def test_householder_and_ormqr_values_with_grad_are_lapacks():
    # with a gradient the node is composed, but the values stay LAPACK's (signed zeros included)
    A = torch.eye(5, 3, dtype=torch.float64)
    A[3, 0] = 0.25
    reflectors, tau = torch.geqrf(A)
    other = torch.arange(15.0, dtype=torch.float64).reshape(5, 3)
    want_q = torch.linalg.householder_product(reflectors, tau)
    want_o = torch.ormqr(reflectors, tau, other, left=True, transpose=True)
    r = ember.tensor(reflectors.numpy(), requires_grad=True)
    t = ember.tensor(tau.numpy())
    got_q = ember.linalg.householder_product(r, t)
    got_o = ember.ormqr(r, t, ember.tensor(other.numpy()), left=True, transpose=True)
    assert np.array_equal(got_q.detach().numpy().view(np.uint64), want_q.numpy().view(np.uint64))
    assert np.array_equal(got_o.detach().numpy().view(np.uint64), want_o.numpy().view(np.uint64))
    assert type(got_q.grad_fn).__name__ == "LinalgHouseholderProductBackward0"
