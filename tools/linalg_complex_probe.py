"""Runs every linalg function on complex inputs under PyTorch and Ember and
lists the ones that fail or differ: a survey of complex linear algebra, not a
test (tests/python/test_linalg_complex.py is the test).

    .venv/bin/python tools/linalg_complex_probe.py [--dtype complex64]

Each line: the case, then `ok`, `both raise <type>`, `differs (max error)`,
`raises <type> (torch does not)` or `torch raises <type>, ember returns`.
Eigen- and singular vectors are compared through invariants (A V = V diag(w),
U diag(S) Vh = A), as their phases are free."""

from __future__ import annotations

import argparse
import warnings

import torch

import ember


def to_ember(t):
    if isinstance(t, torch.Tensor):
        return ember.from_numpy(t.detach().numpy().copy())
    return t


def to_torch(e):
    if isinstance(e, ember.Tensor):
        return torch.from_numpy(e.detach().numpy().copy())
    return e


def flat(r):
    if isinstance(r, (tuple, list)):
        return [x for o in r for x in flat(o)]
    return [r]


def herm(L, a):
    return a @ a.mH + L.eye(a.shape[-1], dtype=a.dtype)


def eig_residual(L, a, b=None):
    w, v = L.linalg.eig(a)
    return (a @ v - v * w.unsqueeze(-2)).abs().amax()


def svd_residual(L, a, b=None):
    u, s, vh = L.linalg.svd(a, full_matrices=False)
    return ((u * s.unsqueeze(-2).to(u.dtype)) @ vh - a).abs().amax()


def eigh_residual(L, a, b=None):
    a = herm(L, a)
    w, v = L.linalg.eigh(a)
    return (a @ v - v * w.unsqueeze(-2).to(v.dtype)).abs().amax()


# name -> (function of (lib, A, B), shape of A, shape of B or None)
CASES = {
    "solve": (lambda L, a, b: L.linalg.solve(a, b), (2, 4, 4), (2, 4, 3)),
    "solve_left_false": (lambda L, a, b: L.linalg.solve(a, b.mT, left=False), (2, 4, 4), (2, 4, 3)),
    "solve_ex": (lambda L, a, b: tuple(L.linalg.solve_ex(a, b)), (4, 4), (4, 2)),
    "inv": (lambda L, a, b: L.linalg.inv(a), (2, 4, 4), None),
    "inv_ex": (lambda L, a, b: tuple(L.linalg.inv_ex(a)), (4, 4), None),
    "det": (lambda L, a, b: L.linalg.det(a), (2, 4, 4), None),
    "torch.det": (lambda L, a, b: L.det(a), (4, 4), None),
    "slogdet": (lambda L, a, b: tuple(L.linalg.slogdet(a)), (2, 4, 4), None),
    "logdet": (lambda L, a, b: L.logdet(a), (4, 4), None),
    "cholesky": (lambda L, a, b: L.linalg.cholesky(herm(L, a)), (2, 4, 4), None),
    "cholesky_upper": (lambda L, a, b: L.linalg.cholesky(herm(L, a), upper=True), (4, 4), None),
    "cholesky_ex": (lambda L, a, b: tuple(L.linalg.cholesky_ex(herm(L, a))), (4, 4), None),
    "cholesky_solve": (lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(herm(L, a))), (4, 4), (4, 2)),
    "cholesky_inverse": (lambda L, a, b: L.cholesky_inverse(L.linalg.cholesky(herm(L, a))), (4, 4), None),
    "qr": (lambda L, a, b: tuple(L.linalg.qr(a)), (2, 5, 3), None),
    "qr_complete": (lambda L, a, b: tuple(L.linalg.qr(a, mode="complete")), (5, 3), None),
    "geqrf": (lambda L, a, b: tuple(L.geqrf(a)), (5, 3), None),
    "householder_product": (lambda L, a, b: L.linalg.householder_product(*L.geqrf(a)), (5, 3), None),
    "ormqr": (lambda L, a, b: L.ormqr(*L.geqrf(a), b), (4, 4), (4, 2)),
    "ormqr_transpose": (lambda L, a, b: L.ormqr(*L.geqrf(a), b, transpose=True), (4, 4), (4, 2)),
    "eig (A V = V w)": (eig_residual, (2, 4, 4), None),
    "eigvals": (lambda L, a, b: L.linalg.eigvals(a), (4, 4), None),
    "eigh (A V = V w)": (eigh_residual, (2, 4, 4), None),
    "eigvalsh": (lambda L, a, b: L.linalg.eigvalsh(herm(L, a)), (2, 4, 4), None),
    "svd (U S Vh = A)": (svd_residual, (2, 5, 3), None),
    "svdvals": (lambda L, a, b: L.linalg.svdvals(a), (2, 5, 3), None),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, (5, 3), (5, 2)),
    "lstsq_gelsd": (lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelsd")), (5, 3), (5, 2)),
    "lstsq_gelss": (lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelss")), (5, 3), (5, 2)),
    "lstsq_gels": (lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gels")), (5, 3), (5, 2)),
    "lu": (lambda L, a, b: tuple(L.linalg.lu(a)), (2, 4, 4), None),
    "lu_factor": (lambda L, a, b: tuple(L.linalg.lu_factor(a)), (4, 4), None),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), (4, 4), (4, 2)),
    "lu_solve_adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), (4, 4), (4, 2)),
    "lu_solve_right": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b.mT, left=False), (4, 4), (4, 2)),
    "lu_unpack": (lambda L, a, b: tuple(L.lu_unpack(*L.linalg.lu_factor(a))), (4, 4), None),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a.triu(), b, upper=True), (4, 4), (4, 2)),
    "triangular_solve": (lambda L, a, b: tuple(L.triangular_solve(b, a.tril(), upper=False)), (4, 4), (4, 2)),
    "pinv": (lambda L, a, b: L.linalg.pinv(a), (5, 3), None),
    "pinv_hermitian": (lambda L, a, b: L.linalg.pinv(herm(L, a), hermitian=True), (4, 4), None),
    "matrix_rank": (lambda L, a, b: L.linalg.matrix_rank(a), (5, 3), None),
    "matrix_norm_fro": (lambda L, a, b: L.linalg.matrix_norm(a), (5, 3), None),
    "matrix_norm_nuc": (lambda L, a, b: L.linalg.matrix_norm(a, "nuc"), (5, 3), None),
    "matrix_norm_2": (lambda L, a, b: L.linalg.matrix_norm(a, 2), (5, 3), None),
    "matrix_norm_1": (lambda L, a, b: L.linalg.matrix_norm(a, 1), (5, 3), None),
    "norm": (lambda L, a, b: L.linalg.norm(a), (5, 3), None),
    "cond": (lambda L, a, b: L.linalg.cond(a), (4, 4), None),
    "cond_1": (lambda L, a, b: L.linalg.cond(a, 1), (4, 4), None),
    "matrix_exp": (lambda L, a, b: L.linalg.matrix_exp(a), (2, 4, 4), None),
    "matrix_power": (lambda L, a, b: L.linalg.matrix_power(a, 3), (4, 4), None),
    "matrix_power_neg": (lambda L, a, b: L.linalg.matrix_power(a, -2), (4, 4), None),
    "ldl_factor": (lambda L, a, b: tuple(L.linalg.ldl_factor(a + a.mT)), (4, 4), None),
    "ldl_factor_hermitian": (lambda L, a, b: tuple(L.linalg.ldl_factor(herm(L, a), hermitian=True)), (4, 4), None),
    "ldl_solve": (lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a + a.mT), b), (4, 4), (4, 2)),
    "ldl_solve_hermitian": (
        lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(herm(L, a), hermitian=True), b, hermitian=True),
        (4, 4),
        (4, 2),
    ),
    "tensorinv": (lambda L, a, b: L.linalg.tensorinv(a.reshape(4, 2, 2), ind=1), (4, 4), None),
    "tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a.reshape(2, 2, 4), b.reshape(2, 2)), (4, 4), (4, 1)),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), (4, 3), (4, 3)),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), (4, 3), (4, 3)),
    "multi_dot": (lambda L, a, b: L.linalg.multi_dot([a, b, b.mT]), (4, 4), (4, 2)),
    "vander": (lambda L, a, b: L.linalg.vander(a[0]), (4, 4), None),
    "svd_top": (lambda L, a, b: L.svd(a)[1], (5, 3), None),
    "inverse": (lambda L, a, b: L.inverse(a), (4, 4), None),
    "pinverse": (lambda L, a, b: L.pinverse(a), (5, 3), None),
}


def inputs(shape_a, shape_b, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*shape_a, dtype=dtype, generator=g)
    if shape_a[-1] == shape_a[-2]:
        a = a + 2 * torch.eye(shape_a[-1], dtype=dtype)
    b = None if shape_b is None else torch.randn(*shape_b, dtype=dtype, generator=g)
    return a, b


def max_error(got, want):
    got, want = flat(got), flat(want)
    if len(got) != len(want):
        return f"{len(got)} results, torch {len(want)}"
    worst = 0.0
    for g, w in zip(got, want):
        g = to_torch(g)
        if not isinstance(w, torch.Tensor):
            w, g = torch.tensor(w), torch.tensor(g)
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"{g.dtype}{tuple(g.shape)} against torch's {w.dtype}{tuple(w.shape)}"
        if w.numel():
            worst = max(worst, float((g.to(torch.complex128) - w.to(torch.complex128)).abs().max()))
    return worst


def probe(dtype, tol):
    rows = []
    for name, (fn, sa, sb) in CASES.items():
        a, b = inputs(sa, sb, dtype)
        try:
            want = fn(torch, a, b)
        except Exception as err:  # noqa: BLE001
            want = err
        try:
            got = fn(ember, to_ember(a), to_ember(b))
        except Exception as err:  # noqa: BLE001
            got = err
        if isinstance(want, Exception) and isinstance(got, Exception):
            same = type(got).__name__ == type(want).__name__
            rows.append((name, f"both raise {type(want).__name__}" + ("" if same else f" / {type(got).__name__}")))
        elif isinstance(got, Exception):
            rows.append((name, f"raises {type(got).__name__}: {str(got)[:80]}"))
        elif isinstance(want, Exception):
            rows.append((name, f"torch raises {type(want).__name__}, ember returns"))
        else:
            err = max_error(got, want)
            rows.append((name, "ok" if isinstance(err, float) and err <= tol else f"differs ({err})"))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="complex128", choices=["complex64", "complex128"])
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    tol = 1e-4 if dtype == torch.complex64 else 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = probe(dtype, tol)
    width = max(len(n) for n, _ in rows)
    for name, status in rows:
        print(f"{name:<{width}}  {status}")
    bad = sum(1 for _, s in rows if s != "ok" and not s.startswith("both raise"))
    print(f"\n{len(rows)} cases, {bad} failing or differing ({args.dtype})")


if __name__ == "__main__":
    main()
