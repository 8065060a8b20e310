"""linalg.matrix_exp gives PyTorch's bits, forward and backward: its Taylor
degree per 1-norm and precision, the scaled degree-18 path of batches, its
block-matrix gradient; on every CPU capability (Note [matrix_exp])."""

import numpy as np
import pytest
import torch
from conftest import run_under_capability

import ember

DTYPES = ["float32", "float64", "complex64", "complex128"]
SIZES = [1, 2, 3, 5, 8, 17, 32]
# the Taylor degree bounds of linalg.matrix_exp, in single and double precision
THETAS = {
    "single": [1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02, 5.800524627688768e-01,
               1.461661507209034e00],
    "double": [2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04, 4.991228871115323e-02,
               2.996158913811580e-01],
}  # fmt: skip
# entry scales that reach every degree and the scaled path in both precisions
SCALES = [1e-17, 1e-9, 1e-7, 1e-5, 1e-3, 1e-2, 0.1, 0.25, 1.0, 3.0, 50.0]


def _precision(dtype):
    return "single" if dtype in ("float32", "complex64") else "double"


def _bounds(dtype):
    """The degree bounds as PyTorch compares them: in float for float32/complex64."""
    bounds = THETAS[_precision(dtype)]
    return [float(np.float32(b)) for b in bounds] if _precision(dtype) == "single" else bounds


def _degree(t):
    """Which of T1, T2, T4, T8, T12, T18 (scaled) a single matrix takes."""
    norm = float(t.abs().sum(-2).amax())
    bounds = _bounds(str(t.dtype).split(".")[-1])
    return 5 if norm >= bounds[4] else next(i for i, b in enumerate(bounds) if norm <= b)


def _random(rng, shape, dtype, scale):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return (x * scale).astype(dtype)


def _pair(arr):
    return ember.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def _same(e, t):
    """Bit for bit; NaNs match NaNs whatever their payload."""
    a, b = np.asarray(e.detach().numpy()), t.detach().numpy()
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return False
    a, b = (np.ascontiguousarray(np.where(nan, 0, x)).view(np.uint8) for nan, x in ((nan_a, a), (nan_b, b)))
    return np.array_equal(a, b)


def _layouts(e, t):
    yield "contiguous", e, t
    yield "transposed", e.mT.contiguous().mT, t.mT.contiguous().mT


def forward_cases(sizes=SIZES, dtypes=DTYPES):
    bad, degrees = [], {d: set() for d in dtypes}
    rng = np.random.default_rng(0)
    for dt in dtypes:
        for n in sizes:
            for scale in SCALES:
                for batch in ((), (3,), (2, 2)):
                    arr = _random(rng, (*batch, n, n), dt, scale / n)
                    if batch:  # batch elements of different norms
                        arr.reshape(-1, n, n)[0] *= 40
                    e, t = _pair(arr)
                    if not batch:
                        degrees[dt].add(_degree(t))
                    for lay, ie, it in _layouts(e, t):
                        if not _same(ember.linalg.matrix_exp(ie), torch.linalg.matrix_exp(it)):
                            bad.append(f"{dt} {n} {scale} {batch} {lay}")
    for dt in dtypes:
        if len(sizes) > 1 and degrees[dt] != set(range(6)):
            bad.append(f"{dt}: degrees {sorted(degrees[dt])} reached, not all six")
    return bad


def gradient_cases(sizes=SIZES, dtypes=DTYPES):
    bad = []
    rng = np.random.default_rng(1)
    for dt in dtypes:
        for n in sizes:
            for scale in (1e-9, 1e-3, 0.1, 1.0, 5.0):
                for batch in ((), (3,)):
                    e, t = _pair(_random(rng, (*batch, n, n), dt, scale / n))
                    ge, gt = _pair(_random(rng, (*batch, n, n), dt, 1.0))
                    for lay, ie, it in _layouts(e, t):
                        ie, it = ie.detach().requires_grad_(), it.detach().requires_grad_()
                        ember.linalg.matrix_exp(ie).backward(ge)
                        torch.linalg.matrix_exp(it).backward(gt)
                        if not _same(ie.grad, it.grad):
                            bad.append(f"grad {dt} {n} {scale} {batch} {lay}")
    return bad


def all_cases():
    return forward_cases(sizes=[2, 5, 17]) + gradient_cases(sizes=[3, 8], dtypes=["float32", "complex128"])


def test_forward_bits():
    assert forward_cases() == []


def test_gradient_bits():
    assert gradient_cases() == []


def test_boundary_norms_pick_pytorchs_degree():
    """A norm equal to a bound takes the lower degree, one just above it the
    next; the last bound takes the scaled path."""
    bad = []
    for dt in DTYPES:
        real = np.float32 if _precision(dt) == "single" else np.float64
        for bound in _bounds(dt):
            for value in (real(bound), np.nextafter(real(bound), real(np.inf))):
                arr = np.zeros((4, 4), dtype=dt)
                arr[0, 0], arr[0, 1], arr[2, 3] = value, 0.75 * value, -0.5 * value
                e, t = _pair(arr)
                if not _same(ember.linalg.matrix_exp(e), torch.linalg.matrix_exp(t)):
                    bad.append(f"{dt} {value!r}")
    assert bad == []


@pytest.mark.parametrize("dt", DTYPES)
def test_batches_mix_squarings(dt):
    """Batch elements scaled and squared different numbers of times (and equal ones)."""
    rng = np.random.default_rng(2)
    arr = _random(rng, (7, 6, 6), dt, 1 / 6)
    for i, f in enumerate((1e-6, 100, 3, 100, 0.5, 3, 1e4)):
        arr[i] *= f
    e, t = _pair(arr)
    assert _same(ember.linalg.matrix_exp(e), torch.linalg.matrix_exp(t))
    one = _pair(arr[:1])  # a batch of one picks its own degree
    assert _same(ember.linalg.matrix_exp(one[0]), torch.linalg.matrix_exp(one[1]))


@pytest.mark.parametrize("dt", DTYPES)
def test_non_finite(dt):
    rng = np.random.default_rng(4)
    for batch in ((), (3,)):
        for bad_value in (np.nan, np.inf, -np.inf):
            arr = _random(rng, (*batch, 4, 4), dt, 0.3)
            arr.reshape(-1, 4, 4)[0, 1, 2] = bad_value
            e, t = _pair(arr)
            assert _same(ember.linalg.matrix_exp(e), torch.linalg.matrix_exp(t)), (batch, bad_value)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 4, 4), (1, 1), (3, 1, 1), (1, 2, 2)])
def test_small_and_empty(shape):
    rng = np.random.default_rng(5)
    e, t = _pair(_random(rng, shape, "float32", 2.0))
    assert _same(ember.linalg.matrix_exp(e), torch.linalg.matrix_exp(t))
    assert _same(ember.matrix_exp(e), torch.matrix_exp(t))
    assert _same(e.matrix_exp(), t.matrix_exp())


def test_one_by_one_gradient():
    rng = np.random.default_rng(6)
    e, t = _pair(_random(rng, (3, 1, 1), "float64", 2.0))
    e.requires_grad_()
    t.requires_grad_()
    ember.linalg.matrix_exp(e).sum().backward()
    torch.linalg.matrix_exp(t).sum().backward()
    assert _same(e.grad, t.grad)


@pytest.mark.parametrize("dt", ["float64", "complex128"])
def test_gradcheck(dt):
    rng = np.random.default_rng(7)
    for scale in (1e-3, 0.3, 4.0):
        for shape in ((3, 3), (2, 4, 4)):
            a = ember.from_numpy(_random(rng, shape, dt, scale)).requires_grad_()
            assert ember.autograd.gradcheck(ember.linalg.matrix_exp, (a,))
            assert ember.autograd.gradgradcheck(ember.linalg.matrix_exp, (a,))


@pytest.mark.parametrize("dt", DTYPES)
def test_double_backward_bits(dt):
    rng = np.random.default_rng(9)
    for shape in ((4, 4), (2, 4, 4)):
        (ae, at), (ge, gt), (ve, vt) = (_pair(_random(rng, shape, dt, s)) for s in (0.3, 1.0, 1.0))
        grads = []
        for lib, a, g, v in ((ember, ae, ge, ve), (torch, at, gt, vt)):
            a, g = a.requires_grad_(), g.requires_grad_()
            (first,) = lib.autograd.grad(lib.linalg.matrix_exp(a), a, g, create_graph=True)
            grads.append([first, *lib.autograd.grad(first, [a, g], v)])
        for e, t in zip(*grads):
            assert e.is_conj() == t.is_conj()
            assert _same(e.resolve_conj(), t.resolve_conj()), (dt, shape)


def test_forward_mode_bits():
    rng = np.random.default_rng(8)
    for dt in DTYPES:
        for shape in ((5, 5), (2, 5, 5)):
            (ae, at), (ve, vt) = _pair(_random(rng, shape, dt, 0.4)), _pair(_random(rng, shape, dt, 1.0))
            with ember.autograd.forward_ad.dual_level():
                te = ember.autograd.forward_ad.unpack_dual(
                    ember.linalg.matrix_exp(ember.autograd.forward_ad.make_dual(ae, ve))
                ).tangent
            with torch.autograd.forward_ad.dual_level():
                tt = torch.autograd.forward_ad.unpack_dual(
                    torch.linalg.matrix_exp(torch.autograd.forward_ad.make_dual(at, vt))
                ).tangent
            assert _same(te, tt), (dt, shape)


def test_grad_fn_name():
    a = ember.ones(2, 2, requires_grad=True)
    assert type(ember.linalg.matrix_exp(a).grad_fn).__name__ == "LinalgMatrixExpBackward0"


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.ones(3),
        lambda L: L.ones(2, 3),
        lambda L: L.ones(2, 3, 3)[:, :2],
        lambda L: L.ones(3, 3, dtype=L.int64),
        lambda L: L.ones(3, 3, dtype=L.int32),
        lambda L: L.ones(3, 2, 4, 4).transpose(0, 1),  # batch dims that do not flatten to a view
    ],
)
def test_errors(make):
    with pytest.raises(RuntimeError) as te:
        torch.linalg.matrix_exp(make(torch))
    with pytest.raises(RuntimeError) as ee:
        ember.linalg.matrix_exp(make(ember))
    assert str(ee.value) == str(te.value)


# One thread: the split of PyTorch's parallel loops is not reproduced here.
@pytest.mark.parametrize("cap", ["avx512", "avx2", "default"])
def test_matrix_exp_bits_per_capability(cap):
    run_under_capability(cap, "test_matrix_exp_bits", "all_cases_ok")


def all_cases_ok():
    bad = all_cases()
    assert bad == [], bad
    return "ok"
