"""ember.linalg on complex64/complex128 against PyTorch: every case of
test_linalg's table on complex inputs (values, dtypes, shapes; eigen- and
singular vectors after fixing their free phases), the invariants of eig,
PyTorch's complex gradients (the conjugate Wirtinger convention) with
gradcheck, gradgradcheck and the gradient values, PyTorch's errors and
grad_fn names. Bits against MKL are in test_mkl_fft_lapack.py."""

from __future__ import annotations

import warnings

import pytest
from conftest import assert_same, to_torch, torch
from test_linalg import LAPACK_CASES, _compare, _fix_sign, _phase, from_torch

import ember

CTOL = {"complex64": 2e-4, "complex128": 1e-10}


def _inputs(shape_a, shape_b, batch, dname, seed=0):
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dname)
    ta = torch.randn(*batch, *shape_a, generator=g, dtype=torch.complex128).to(dt)
    if shape_a[-1] == shape_a[-2]:
        ta = ta + 2 * torch.eye(shape_a[-1], dtype=dt)  # well conditioned
    tb = None if shape_b is None else torch.randn(*batch, *shape_b, generator=g, dtype=torch.complex128).to(dt)
    return ta, tb


def _compare_complex(got, want, dname):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare_complex(g, w, dname)
        return
    if isinstance(want, int):
        assert got == want
        return
    tol = CTOL[dname] if (want.dtype.is_floating_point or want.dtype.is_complex) else None
    assert_same(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("batch", [(), (2,)], ids=["single", "batch"])
@pytest.mark.parametrize("dname", ["complex64", "complex128"])
@pytest.mark.parametrize("case", sorted(LAPACK_CASES))
def test_complex_values(case, dname, batch):
    fn, sa, sb = LAPACK_CASES[case]
    if case == "tensorinv" and batch:
        pytest.skip("tensorinv takes one tensor, not a batch")
    ta, tb = _inputs(sa, sb, batch, dname)
    ea = from_torch(ta)
    eb = None if tb is None else from_torch(tb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = fn(torch, ta, tb)
        got = fn(ember, ea, eb)
    _compare_complex(got, want, dname)


@pytest.mark.parametrize("dname", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 5)])
def test_eig_and_eigvals(dname, shape):
    """Complex results for real and complex A: the eigenvalues as PyTorch's
    (LAPACK returns them in the same order), eigenvectors up to a phase."""
    g = torch.Generator().manual_seed(3)
    dt = getattr(torch, dname)
    ta = torch.randn(*shape, generator=g, dtype=torch.complex128 if dt.is_complex else torch.float64).to(dt)
    ea = from_torch(ta)
    w_t, v_t = torch.linalg.eig(ta)
    w_e, v_e = ember.linalg.eig(ea)
    tol = 2e-4 if dname in ("float32", "complex64") else 1e-10
    assert_same(w_e, w_t, rtol=tol, atol=tol)
    assert_same(_fix_sign(v_e), _fix_sign(v_t), rtol=tol, atol=tol)
    assert_same(ember.linalg.eigvals(ea), torch.linalg.eigvals(ta), rtol=tol, atol=tol)
    # the invariant itself: A V = V diag(w)
    ac = ea.to(w_e.dtype)
    assert float((ac @ v_e - v_e * w_e.unsqueeze(-2)).abs().amax()) < 100 * tol


def test_eig_conjugate_pairs_of_real_input():
    a = torch.tensor([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]], dtype=torch.float64)
    w_t, v_t = torch.linalg.eig(a)
    w_e, v_e = ember.linalg.eig(from_torch(a))
    assert_same(w_e, w_t, rtol=1e-12, atol=1e-12)
    assert_same(v_e, v_t, rtol=1e-12, atol=1e-12)


# name -> (function, shapes of the differentiable inputs); complex128
GRAD_CASES = {
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [(2, 3, 3), (2, 3, 2)]),
    "solve_left_false": (lambda L, a, b: L.linalg.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "inv": (lambda L, a: L.linalg.inv(a), [(2, 3, 3)]),
    "det": (lambda L, a: L.linalg.det(a), [(2, 3, 3)]),
    "slogdet": (lambda L, a: tuple(L.linalg.slogdet(a)), [(2, 3, 3)]),
    "logdet": (lambda L, a: L.logdet(a), [(3, 3)]),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a)[0], [(2, 3, 3)]),
    "lu_tall": (lambda L, a: L.linalg.lu(a)[1:], [(4, 3)]),
    "lu_wide": (lambda L, a: L.linalg.lu(a)[1:], [(3, 4)]),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), [(3, 3), (3, 2)]),
    "lu_solve_adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), [(3, 3), (3, 2)]),
    "cholesky": (lambda L, a: L.linalg.cholesky(a @ a.mH + L.eye(3, dtype=a.dtype)), [(2, 3, 3)]),
    "cholesky_upper": (lambda L, a: L.linalg.cholesky(a @ a.mH + L.eye(3, dtype=a.dtype), upper=True), [(3, 3)]),
    "qr": (lambda L, a: tuple(L.linalg.qr(a)), [(2, 3, 3)]),
    "qr_tall": (lambda L, a: tuple(L.linalg.qr(a)), [(4, 3)]),
    "qr_wide": (lambda L, a: tuple(L.linalg.qr(a)), [(3, 4)]),
    "eigh": (lambda L, a: (lambda r: (r[0], r[1].abs()))(L.linalg.eigh(a @ a.mH)), [(2, 3, 3)]),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a + a.mH), [(3, 3)]),
    "eig": (lambda L, a: (lambda r: (r[0], r[1].abs()))(L.linalg.eig(a)), [(3, 3)]),
    "eigvals": (lambda L, a: L.linalg.eigvals(a), [(2, 3, 3)]),
    "svd_tall": (lambda L, a: (lambda r: (r[0] @ r[2], r[1]))(L.linalg.svd(a, full_matrices=False)), [(2, 4, 3)]),
    "svd_wide": (lambda L, a: (lambda r: (r[0] @ r[2], r[1]))(L.linalg.svd(a, full_matrices=False)), [(3, 4)]),
    "svd_abs": (lambda L, a: (lambda r: (r[0].abs(), r[2].abs()))(L.linalg.svd(a, full_matrices=False)), [(3, 3)]),
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
    "matrix_norm_fro": (lambda L, a: L.linalg.matrix_norm(a), [(3, 4)]),
    "cholesky_solve": (
        lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(a @ a.mH + L.eye(3, dtype=a.dtype))),
        [(3, 3), (3, 2)],
    ),
    "cholesky_inverse": (
        lambda L, a: L.cholesky_inverse(L.linalg.cholesky(a @ a.mH + L.eye(3, dtype=a.dtype))),
        [(3, 3)],
    ),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4,)]),
    "tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a, b), [(2, 3, 6), (2, 3)]),
    "tensorinv": (lambda L, a: L.linalg.tensorinv(a, ind=1), [(4, 2, 2)]),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), [(3, 4), (3, 4)]),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), [(2, 3), (2, 3)]),
}


def _grad_inputs(shapes, seed=1):
    g = torch.Generator().manual_seed(seed)
    out = []
    for s in shapes:
        t = torch.randn(*s, generator=g, dtype=torch.complex128)
        if len(s) >= 2 and s[-1] == s[-2]:
            t = t + 2 * torch.eye(s[-1], dtype=torch.complex128)
        out.append(t.requires_grad_(True))
    return out


def _loss(lib, outs):
    """A real loss of complex and real outputs, weighting every part differently."""
    total = 0
    for o in outs:
        w = lib.linspace(0.5, 1.5, o.numel(), dtype=lib.float64).reshape(o.shape)
        if o.is_complex():
            total = total + (o.real * w).sum() + (o.imag * w.flip(list(range(w.dim())))).sum()
        else:
            total = total + (o * w).sum()
    return total


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_complex_gradients(case):
    fn, shapes = GRAD_CASES[case]
    targs = _grad_inputs(shapes)
    eargs = [from_torch(a).requires_grad_(True) for a in targs]

    def as_tuple(r):
        return r if isinstance(r, tuple) else (r,)

    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), eargs)
    # the gradient itself equals PyTorch's (conjugate Wirtinger convention)
    tgrads = torch.autograd.grad(_loss(torch, as_tuple(fn(torch, *targs))), targs)
    egrads = ember.autograd.grad(_loss(ember, as_tuple(fn(ember, *eargs))), eargs)
    for eg, tg in zip(egrads, tgrads):
        assert_same(eg, tg, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("case", ["solve", "inv", "det", "cholesky", "qr", "svd_tall", "eigh", "lu_factor"])
def test_complex_second_derivatives(case):
    fn, shapes = GRAD_CASES[case]
    eargs = [from_torch(a).requires_grad_(True) for a in _grad_inputs(shapes)]
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, *a), eargs)


def test_real_input_eig_gradient_is_real():
    t = torch.randn(3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(5)).requires_grad_(True)
    e = from_torch(t.detach()).requires_grad_(True)
    gt = torch.autograd.grad(_loss(torch, (torch.linalg.eigvals(t),)), t)[0]
    ge = ember.autograd.grad(_loss(ember, (ember.linalg.eigvals(e),)), e)[0]
    assert_same(ge, gt, rtol=1e-8, atol=1e-8)
    assert ember.autograd.gradcheck(lambda a: ember.linalg.eigvals(a), [e])


ERROR_CASES = {
    "solve_dtype": lambda L: L.linalg.solve(L.eye(3, dtype=L.complex128), L.ones(3, dtype=L.complex64)),
    "solve_real_complex": lambda L: L.linalg.solve(L.eye(3, dtype=L.complex64), L.ones(3)),
    "solve_singular": lambda L: L.linalg.solve(L.zeros(3, 3, dtype=L.complex64), L.ones(3, dtype=L.complex64)),
    "inv_singular": lambda L: L.linalg.inv(L.zeros(2, 3, 3, dtype=L.complex128)),
    "cholesky_not_pd": lambda L: L.linalg.cholesky(-L.eye(3, dtype=L.complex64)),
    "lu_factor_singular": lambda L: L.linalg.lu_factor(L.zeros(3, 3, dtype=L.complex64)),
    "eig_nan": lambda L: L.linalg.eig(L.full((2, 2), complex("nan+1j"), dtype=L.complex64)),
    "svd_nan": lambda L: L.linalg.svd(L.full((3, 3), complex("nan"), dtype=L.complex128)),
    "lstsq_dtype": lambda L: L.linalg.lstsq(L.ones(3, 2, dtype=L.complex128), L.ones(3, 2, dtype=L.complex64)),
    "cholesky_solve_dtype": lambda L: L.cholesky_solve(L.ones(3, 2), L.eye(3, dtype=L.complex64)),
    "eigh_phase_dependent_loss": lambda L: (
        L.linalg.eigh(L.tensor([[2.0, 1j], [-1j, 3.0]], dtype=L.complex128).requires_grad_())
        .eigenvectors.sum()
        .real.backward()
    ),
    "svd_phase_dependent_loss": lambda L: (
        L.linalg.svd(L.tensor([[1.0 + 1j, 2.0], [0.5j, 3.0]], dtype=L.complex128).requires_grad_())
        .U.sum()
        .real.backward()
    ),
    "eig_phase_dependent_loss": lambda L: (
        L.linalg.eig(L.tensor([[1.0 + 1j, 2.0], [0.5j, 3.0]], dtype=L.complex128).requires_grad_())
        .eigenvectors.sum()
        .real.backward()
    ),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_complex_errors(case):
    fn = ERROR_CASES[case]
    with pytest.raises(Exception) as want:  # noqa: PT011 - the type is PyTorch's, compared below
        fn(torch)
    with pytest.raises(Exception) as got:  # noqa: PT011
        fn(ember)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)


def test_eigvals_of_non_finite_input():
    # torch 2.13's eigvals hands an infinite matrix to MKL's gebal, which
    # rejects it and the process crashes; Ember refuses it as torch's eig does.
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        ember.linalg.eigvals(ember.full((2, 2), float("inf")))


@pytest.mark.parametrize("dname", ["complex64", "float64"])
def test_solve_triangular_takes_the_dtype_of_a(dname):
    """PyTorch casts B to A's dtype (it does not refuse mixed dtypes)."""
    ta = 2 * torch.eye(3, dtype=getattr(torch, dname)) + torch.ones(3, 3, dtype=getattr(torch, dname)).triu(1)
    tb = torch.arange(6.0).reshape(3, 2)
    want = torch.linalg.solve_triangular(ta, tb, upper=True)
    got = ember.linalg.solve_triangular(from_torch(ta), from_torch(tb), upper=True)
    assert_same(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("det", lambda L, a: L.linalg.det(a)),
        ("slogdet", lambda L, a: L.linalg.slogdet(a).sign),
        ("eig", lambda L, a: L.linalg.eig(a).eigenvalues),
        ("eigvals", lambda L, a: L.linalg.eigvals(a)),
        ("eigh", lambda L, a: L.linalg.eigh(a).eigenvalues),
        ("svd", lambda L, a: L.linalg.svd(a).S),
        ("inv", lambda L, a: L.linalg.inv(a)),
        ("cholesky", lambda L, a: L.linalg.cholesky(a)),
        ("qr", lambda L, a: L.linalg.qr(a).R),
    ],
)
def test_complex_grad_fn_names(name, fn):
    t = (4 * torch.eye(3, dtype=torch.complex128)).requires_grad_(True)
    e = from_torch(t.detach()).requires_grad_(True)
    assert type(fn(ember, e).grad_fn).__name__ == type(fn(torch, t).grad_fn).__name__


def test_real_dtypes_of_complex_results():
    t, _ = _inputs((4, 3), None, (), "complex64")
    e = from_torch(t)
    for name, fn in {
        "svdvals": lambda L, a: L.linalg.svdvals(a),
        "eigvalsh": lambda L, a: L.linalg.eigvalsh(a.mH @ a),
        "slogdet": lambda L, a: L.linalg.slogdet(a.mH @ a).logabsdet,
        "matrix_norm": lambda L, a: L.linalg.matrix_norm(a, 2),
        "cond": lambda L, a: L.linalg.cond(a),
        "lstsq sv": lambda L, a: L.linalg.lstsq(a, a, driver="gelsd").singular_values,
        "matrix_rank": lambda L, a: L.linalg.matrix_rank(a),
    }.items():
        got, want = fn(ember, e), fn(torch, t)
        assert str(got.dtype) == str(want.dtype), name
        assert_same(got, want, rtol=2e-4, atol=2e-4)


def test_complex_printing():
    a = ember.tensor([[2.0 + 1j, 0.5], [0.25j, 1.0]], dtype=ember.complex128)
    t = to_torch(a)
    assert repr(ember.linalg.slogdet(a)) == repr(torch.linalg.slogdet(t))
    assert repr(ember.linalg.eigvalsh(a @ a.mH)) == repr(torch.linalg.eigvalsh(t @ t.mH))
    assert repr(ember.linalg.det(a)) == repr(torch.linalg.det(t))


def test_phase_helpers():
    # the helpers the comparisons rely on: a unit phase for complex, the sign for real
    # (PyTorch's complex quotient: 3 / 5 rounds to 0.6000000000000001)
    want = _phase(torch.tensor([3 + 4j], dtype=torch.complex128)).tolist()
    assert _phase(ember.tensor([3 + 4j], dtype=ember.complex128)).tolist() == want
    assert _phase(ember.tensor([-2.0])).tolist() == [-1.0]
    _compare(ember.tensor([1.0]), torch.tensor([1.0]), "float64")


FORWARD_CASES = {
    "solve": lambda L, a, b: L.linalg.solve(a, b),
    "inv": lambda L, a, b: L.linalg.inv(a),
    "det": lambda L, a, b: L.linalg.det(a),
    "slogdet": lambda L, a, b: L.linalg.slogdet(a).logabsdet,
    "eigvalsh": lambda L, a, b: L.linalg.eigvalsh(a + a.mH),
    "svdvals": lambda L, a, b: L.linalg.svdvals(a),
    "cholesky": lambda L, a, b: L.linalg.cholesky(a @ a.mH + L.eye(3, dtype=a.dtype)),
    "qr": lambda L, a, b: L.linalg.qr(a).R,
    "eigvals": lambda L, a, b: L.linalg.eigvals(a),
    "lu_factor": lambda L, a, b: L.linalg.lu_factor(a).LU,
    "lstsq": lambda L, a, b: L.linalg.lstsq(a, b).solution,
    "solve_triangular": lambda L, a, b: L.linalg.solve_triangular(a.triu(), b, upper=True),
    "pinv": lambda L, a, b: L.linalg.pinv(a),
    "matrix_exp": lambda L, a, b: L.linalg.matrix_exp(a),
}


@pytest.mark.parametrize("case", list(FORWARD_CASES))
def test_complex_forward_ad(case):
    """Tangents of complex inputs (forward-mode AD through the backward
    formulas: J v is the gradient in u of Re <vjp(u), v>) equal PyTorch's."""
    import torch.autograd.forward_ad as tfa

    import ember.autograd.forward_ad as efa

    fn = FORWARD_CASES[case]
    ta, ta_t, tb, tb_t = (
        _grad_inputs([shape], seed)[0].detach() for shape, seed in [((3, 3), 7), ((3, 3), 8), ((3, 2), 9), ((3, 2), 10)]
    )
    tangents = []
    for L, fa in ((torch, tfa), (ember, efa)):
        conv = (lambda t: t) if L is torch else from_torch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            with fa.dual_level():
                a = fa.make_dual(conv(ta), conv(ta_t))
                b = fa.make_dual(conv(tb), conv(tb_t))
                tangents.append(fa.unpack_dual(fn(L, a, b)).tangent)
    assert_same(tangents[1], tangents[0], rtol=1e-8, atol=1e-8)
