"""Complex operators give PyTorch's bits: the quotient-based functions
(reciprocal, rsqrt, sigmoid, silu, a number over a tensor), addcmul and
addcdiv in PyTorch's vector and remainder forms (Note [Complex addcmul and
addcdiv]), and operators that only move or add complex numbers (lerp,
masked_select, index_add, scatter_add); PyTorch's error messages where it
refuses complex inputs."""

import numpy as np
import pytest
from conftest import run_under_capability, torch

import ember

DTYPES = ["complex64", "complex128"]
# Scalar tails, whole vectors of both widths and their remainders, a long row.
LENGTHS = [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 33, 100]
LAYOUTS = ["contiguous", "strided"]


def _values(dname, n, seed):
    real = "float32" if dname == "complex64" else "float64"
    rng = np.random.default_rng(seed)
    z = (rng.normal(0, 1, (2, n)) * np.exp(rng.uniform(-4, 4, (2, n)))).astype(real)
    return (z[0] + 1j * z[1]).astype(dname)


def _special(dname):
    """Zeros of both signs, infinities, nans, huge and tiny parts, mixed."""
    parts = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e30, 1e-30, 3e-39]
    if dname == "complex128":
        parts += [1e300, 1e-300, 5e-320]
    z = np.array([complex(r, i) for r in parts for i in parts])
    return z.astype(dname)


def _apart(a):
    """a copy in its own mapping, far from the heap that holds the outputs:
    PyTorch's complex remainders take another form when an input begins
    fewer than 64 bytes before the output (Note [Complex addcmul and
    addcdiv])."""
    buf = np.empty(a.nbytes + (1 << 20), np.uint8)
    v = buf[: a.nbytes].view(a.dtype)
    v[...] = a
    return v


def _laid_out(L, a, layout):
    t = L.from_numpy(_apart(a))
    if layout == "strided":
        t = L.from_numpy(_apart(np.repeat(a, 2))).view(-1)[::2]
    return t


def _bits(r, nan_signs):
    r = r.detach().resolve_conj() if r.is_complex() else r.detach()
    a = r.contiguous().numpy().copy()
    if not nan_signs:
        parts = a.view(a.real.dtype) if a.dtype.kind == "c" else a
        parts[np.isnan(parts)] = np.nan
    return a.tobytes()


def _same_bits(fn, arrays, layout, nan_signs=True):
    t = fn(torch, *[_laid_out(torch, a, layout) for a in arrays])
    e = fn(ember, *[_laid_out(ember, a, layout) for a in arrays])
    assert str(t.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
    assert tuple(t.shape) == tuple(e.shape)
    tb, eb = _bits(t, nan_signs), _bits(e, nan_signs)
    if tb != eb:
        word = np.uint32 if t.dtype in (torch.complex64, torch.float32) else np.uint64
        tv, ev = np.frombuffer(tb, word), np.frombuffer(eb, word)
        bad = np.nonzero(tv != ev)[0]
        tf, ef = np.frombuffer(tb, tv.dtype.str.replace("u", "f")), np.frombuffer(eb, tv.dtype.str.replace("u", "f"))
        raise AssertionError(f"{len(bad)} parts differ, first at {bad[:5]}: {tf[bad][:4]} vs {ef[bad][:4]}")


UNARY = {
    "reciprocal": lambda L, a: L.reciprocal(a),
    "rsqrt": lambda L, a: L.rsqrt(a),
    "sigmoid": lambda L, a: L.sigmoid(a),
    "number_over_tensor": lambda L, a: 2 / a,
    "complex_over_tensor": lambda L, a: (0.3 - 1.7j) / a,
    "silu": lambda L, a: L.nn.functional.silu(a),
    "log1p": lambda L, a: L.log1p(a),
    "log1p_small": lambda L, a: L.log1p(a * 1e-3),
    "sinc": lambda L, a: L.sinc(a),
    "sinc_small": lambda L, a: L.sinc(a * 0.01),
    "logaddexp": lambda L, a: L.logaddexp(a, a.flip(0) * 0.5),
    "logcumsumexp": lambda L, a: L.logcumsumexp(a * 0.1, 0),
    "logcumsumexp_rows": lambda L, a: L.logcumsumexp(a[: a.numel() // 2 * 2].reshape(2, -1), 1),
    "masked_select": lambda L, a: L.masked_select(a, a.real > 0),
    "index_add": lambda L, a: a.clone().index_add_(0, L.arange(a.numel()).flip(0) // 2, a),
    "index_add_alpha": lambda L, a: a.clone().index_add_(0, L.arange(a.numel()) // 3, a, alpha=0.5 - 2j),
    "scatter_add": lambda L, a: a.clone().scatter_add_(0, L.arange(a.numel()) % 3, a * 3),
}
# Cases whose nans may carry the other sign (the order of GCC's operands in
# PyTorch's scalar products and quotients).
NAN_SIGNS_UNCHECKED = {"silu", "index_add", "index_add_alpha", "log1p_small", "sinc", "sinc_small"}
# Known to differ: the remainder of a strided complex128 row of log1p (Note
# [Complex log1p and sinc]).
KNOWN_DIFFERENT = {("log1p", "complex128", "strided")}

TERNARY = {
    "addcmul": lambda L, a, b, c: L.addcmul(a, b, c, value=0.3 + 0.7j),
    "addcmul_real_value": lambda L, a, b, c: L.addcmul(a, b, c, value=1.5),
    "addcdiv": lambda L, a, b, c: L.addcdiv(a, b, c, value=0.3 + 0.7j),
    "addcdiv_one": lambda L, a, b, c: L.addcdiv(a, b, c),
    "lerp_small_weight": lambda L, a, b, c: L.lerp(a, b, 0.3 + 0.1j),
    "lerp_large_weight": lambda L, a, b, c: L.lerp(a, b, 0.7 - 0.4j),
    "lerp_real_weight": lambda L, a, b, c: L.lerp(a, b, 0.6),
    "lerp_tensor_weight": lambda L, a, b, c: L.lerp(a, b, c * 0.1 + 0.45),
    "lerp_one_weight": lambda L, a, b, c: L.lerp(a, b, (c[:1] * 0.1 + 0.45).reshape(())),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", sorted(UNARY))
@pytest.mark.parametrize("dname", DTYPES)
def test_unary_bits(case, dname, layout, nan_signs=True):
    if (case, dname, layout) in KNOWN_DIFFERENT:
        pytest.xfail("PyTorch's remainder of these rows is not reproduced yet")
    for n in LENGTHS:
        _same_bits(UNARY[case], [_values(dname, n, n)], layout)
    _same_bits(UNARY[case], [_special(dname)], layout, nan_signs and case not in NAN_SIGNS_UNCHECKED)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", sorted(TERNARY))
@pytest.mark.parametrize("dname", DTYPES)
def test_ternary_bits(case, dname, layout):
    for n in LENGTHS:
        _same_bits(TERNARY[case], [_values(dname, n, n + k) for k in range(3)], layout)


GRADIENTS = {
    "lerp": lambda L, a, b, c: L.lerp(a, b, c),
    "lerp_number": lambda L, a, b, c: L.lerp(a, b, 0.3 + 0.6j),
    "addcmul": lambda L, a, b, c: L.addcmul(a, b, c, value=0.5 - 1j),
    "addcdiv": lambda L, a, b, c: L.addcdiv(a, b, c, value=0.5 - 1j),
    "masked_select": lambda L, a, b, c: L.masked_select(a * b, a.real > 0),
    "index_add": lambda L, a, b, c: a.index_add(0, L.tensor([0, 2]), b[:2], alpha=1 - 2j),
    "scatter_add": lambda L, a, b, c: a.scatter_add(0, L.tensor([0, 2, 0]), b),
    "logaddexp": lambda L, a, b, c: L.logaddexp(a, b),
    "logcumsumexp": lambda L, a, b, c: L.logcumsumexp(a * b, 0),
}


@pytest.mark.parametrize("case", sorted(GRADIENTS))
def test_gradients(case):
    def grads(L):
        xs = [L.tensor(_values("complex128", 3, k), requires_grad=True) for k in range(3)]
        y = GRADIENTS[case](L, *xs)
        return L.autograd.grad(y.abs().sum(), xs, allow_unused=True)

    for t, e in zip(grads(torch), grads(ember)):
        assert (t is None) == (e is None)
        if t is not None:
            assert t.numpy().tobytes() == e.numpy().tobytes()


PROD_SHAPES = {
    "complex128": [(1,), (4,), (7,), (16,), (17,), (33,), (100,), (1000,), (3, 5), (40, 4), (2, 3, 37)],
    # Rows of up to one group of vectors (longer complex64 rows: see the decision record).
    "complex64": [(1,), (4,), (7,), (16,), (17,), (3, 5), (40, 4)],
}


@pytest.mark.parametrize("dname", DTYPES)
def test_prod_bits(dname):
    """Complex products in PyTorch's reduction order: vector accumulators
    rounded, its scalar steps fused (Note [Product order])."""
    for shape in PROD_SHAPES[dname]:
        n = int(np.prod(shape))
        z = _values(dname, n, n)
        a = (z / np.abs(z)).astype(dname)  # no overflow over long rows
        for dim in range(len(shape)):
            _same_bits(lambda L, x, d=dim, s=shape: L.prod(x.reshape(s), d), [a], "contiguous")
        if len(shape) == 1:
            _same_bits(lambda L, x: L.prod(x), [a], "contiguous")


CONVOLUTIONS = {
    "conv1d": lambda L, x, w, b: L.nn.functional.conv1d(x, w, b),
    "conv1d_strided_padded": lambda L, x, w, b: L.nn.functional.conv1d(x, w, None, padding=1, stride=2),
    "conv2d": lambda L, x, w, b: L.nn.functional.conv2d(x.reshape(2, 3, 4, -1), w.reshape(5, 3, 1, -1), b),
    "conv_transpose2d": lambda L, x, w, b: L.nn.functional.conv_transpose2d(
        x.reshape(2, 3, 4, -1), w.reshape(3, 5, 1, -1), b[:5]
    ),
}


@pytest.mark.parametrize("case", sorted(CONVOLUTIONS))
@pytest.mark.parametrize("dname", DTYPES)
def test_convolution_bits_and_gradients(case, dname):
    def run(L):
        x = L.tensor(_values(dname, 48, 1).reshape(2, 3, 8), requires_grad=True)
        w = L.tensor(_values(dname, 30, 2).reshape(5, 3, 2), requires_grad=True)
        b = L.tensor(_values(dname, 5, 3), requires_grad=True)
        y = CONVOLUTIONS[case](L, x, w, b)
        return [y, *L.autograd.grad(y.abs().sum(), (x, w, b), allow_unused=True)]

    for t, e in zip(run(torch), run(ember)):
        assert (t is None) == (e is None)
        if t is not None:
            assert t.detach().numpy().tobytes() == e.detach().numpy().tobytes()


def test_gradient_through_a_complex_number():
    """A real tensor times a Python complex number: the product's gradient
    conjugates the wrapped number in its own dtype."""

    def grad(L):
        t = L.tensor([1.5, -2.0], requires_grad=True)
        return L.autograd.grad((t * (0.5 + 2j)).imag.sum(), t)[0]

    assert grad(torch).numpy().tobytes() == grad(ember).numpy().tobytes()


REFUSED = {
    "softmax": lambda L, a: L.softmax(a, 0),
    "log_softmax": lambda L, a: L.log_softmax(a, -1),
    "softmax_dim0": lambda L, a: L.softmax(a.reshape(2, -1), 0),
    "log_softmax_dim0": lambda L, a: L.log_softmax(a.reshape(2, -1), 0),
    "silu_grad": lambda L, a: L.nn.functional.silu(a.requires_grad_()),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
@pytest.mark.parametrize("dname", DTYPES)
def test_same_error(case, dname):
    def outcome(L):
        try:
            REFUSED[case](L, L.from_numpy(_values(dname, 4, 0)))
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).split("\n")[0]
        return None

    t = outcome(torch)
    assert t is not None and outcome(ember) == t


def _check_all():
    for dname in DTYPES:
        for layout in LAYOUTS:
            for case in UNARY:
                if (case, dname, layout) in KNOWN_DIFFERENT:
                    continue
                # PyTorch's generic vectors give some nans of sigmoid and of
                # complex128 products the other sign.
                test_unary_bits(case, dname, layout, nan_signs=ember._C._cpu_capability() != "DEFAULT")
            for case in TERNARY:
                test_ternary_bits(case, dname, layout)
        test_prod_bits(dname)
    return ember._C._cpu_capability()


@pytest.mark.parametrize("cap", ["avx2", "default"])
def test_bits_other_capabilities(cap):
    run_under_capability(cap, "test_complex_ops_bits", "_check_all")
