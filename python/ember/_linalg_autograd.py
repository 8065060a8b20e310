"""The differentiable building blocks of ember.linalg: each runs a LAPACK
kernel (``_C._VariableFunctions._linalg_lapack_*``) forward and PyTorch's
derivative formula backward. Backward formulas use differentiable operators
only, so they can be differentiated again. Inputs arrive checked, with equal
batch dims and a float32/float64 dtype (ember.linalg does that)."""

from __future__ import annotations

import ember
from ember import _C
from ember.autograd.function import Function

_F = _C._VariableFunctions


def _tri_solve(A, B, upper, left=True, unitriangular=False):
    """op(A)^-1 B (left) or B A^-1 (right) for triangular A, differentiable."""
    if not left:
        return _tri_solve(A.mT, B.mT, not upper, True, unitriangular).mT
    return SolveTriangular.apply(A, B, upper, unitriangular)


def _eye_like(A, n):
    return ember.eye(n, dtype=A.dtype, device=A.device)


class SolveTriangular(Function):
    """X = A^-1 B for triangular A (B with A's batch dims)."""

    @staticmethod
    def forward(ctx, A, B, upper, unitriangular):
        X = _F._linalg_lapack_trsm(A, B, upper, True, unitriangular)
        ctx.upper, ctx.unit = upper, unitriangular
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        A, X = ctx.saved_tensors
        gB = _tri_solve(A.mT, gX, not ctx.upper, True, ctx.unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -gB @ X.mT
            gA = gA.triu(1 if ctx.unit else 0) if ctx.upper else gA.tril(-1 if ctx.unit else 0)
        return gA, gB, None, None


class Solve(Function):
    """(X, LU, pivots, info) of A X = B (A^T X = B when transposed) through an
    LU factorization of A."""

    @staticmethod
    def forward(ctx, A, B, transposed=False):
        LU, piv, info = _F._linalg_lapack_getrf(A)
        X = _F._linalg_lapack_getrs(LU, piv, B, transposed)
        ctx.transposed = transposed
        ctx.save_for_backward(A, X)
        ctx.mark_non_differentiable(LU, piv, info)
        return X, LU, piv, info

    @staticmethod
    def backward(ctx, gX, _gLU, _gpiv, _ginfo):
        A, X = ctx.saved_tensors
        gB = Solve.apply(A, gX)[0] if ctx.transposed else Solve.apply(A.mT, gX)[0]
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -gB @ X.mT
            gA = gA.mT if ctx.transposed else gA
        return gA, gB, None


def pivots_to_permutation(pivots, m):
    """The row order perm with A[perm] = L U, per matrix of the batch."""
    batch = list(pivots.shape[:-1])
    rows = []
    for piv in pivots.reshape(-1, pivots.shape[-1]).tolist() if pivots.numel() else [[]] * _prod(batch):
        p = list(range(m))
        for i, v in enumerate(piv):
            p[i], p[v - 1] = p[v - 1], p[i]
        rows.append(p)
    return ember.tensor(rows, dtype=ember.int64).reshape(batch + [m])


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def permutation_matrix(pivots, m, like):
    """P with A = P L U."""
    perm = pivots_to_permutation(pivots, m)
    eye = _eye_like(like, m)
    return eye[perm].mT.contiguous() if perm.dim() > 1 else eye[perm].mT


def lu_backward(gL, gU, P, L, U):
    """The gradient of A = P L U from those of L (m x k) and U (k x n)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if gL is None:
        gL = ember.zeros_like(L)
    if gU is None:
        gU = ember.zeros_like(U)
    if m == n:
        phi = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
        X = _tri_solve(L.mT, phi, True, True, True)
        return P @ _tri_solve(U.mT, X, False, False)
    if m < n:
        U1, U2, gU1, gU2 = U[..., :k], U[..., k:], gU[..., :k], gU[..., k:]
        phi = (L.mT @ gL).tril(-1) - (gU2 @ U2.mT).tril(-1) + (gU1 @ U1.mT).triu()
        X = _tri_solve(L.mT, phi, True, True, True)
        gA1 = _tri_solve(U1.mT, X, False, False)
        gA2 = _tri_solve(L.mT, gU2, True, True, True)
        return P @ ember.cat([gA1, gA2], -1)
    L1, L2, gL1, gL2 = L[..., :k, :], L[..., k:, :], gL[..., :k, :], gL[..., k:, :]
    phi = (L1.mT @ gL1).tril(-1) + (gU @ U.mT).triu() - (L2.mT @ gL2).triu()
    X = _tri_solve(L1.mT, phi, True, True, True)
    gA1 = _tri_solve(U.mT, X, False, False)
    gA2 = _tri_solve(U.mT, gL2, False, False)
    return P @ ember.cat([gA1, gA2], -2)


def unpack_lu(LU, pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) of a compact LU factorization (differentiable in LU)."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    if unpack_data:
        L = LU[..., :, :k].tril(-1) + _eye_like(LU, max(m, 1))[:m, :k]
        U = LU[..., :k, :].triu()
    else:
        L = ember.empty(0, dtype=LU.dtype)
        U = ember.empty(0, dtype=LU.dtype)
    if unpack_pivots:
        P = permutation_matrix(pivots, m, LU).expand(*LU.shape[:-2], m, m)
    else:
        P = ember.empty(0, dtype=LU.dtype)
    return P, L, U


class LuFactor(Function):
    """(LU, pivots, info) of A, partial pivoting."""

    @staticmethod
    def forward(ctx, A):
        LU, piv, info = _F._linalg_lapack_getrf(A)
        ctx.save_for_backward(LU, piv)
        ctx.mark_non_differentiable(piv, info)
        return LU, piv, info

    @staticmethod
    def backward(ctx, gLU, _gpiv, _ginfo):
        LU, piv = ctx.saved_tensors
        m, n = LU.shape[-2], LU.shape[-1]
        k = min(m, n)
        P, L, U = unpack_lu(LU, piv)
        return lu_backward(gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu(), P, L, U)


class Cholesky(Function):
    """(L, info) with A = L L^T, L lower; (U, info) with A = U^T U when upper
    (LAPACK factors the requested triangle, as PyTorch does)."""

    @staticmethod
    def forward(ctx, A, upper=False):
        F, info = _F._linalg_lapack_potrf(A, upper)
        ctx.upper = upper
        ctx.save_for_backward(F)  # the output itself, so double backward sees its graph
        ctx.mark_non_differentiable(info)
        return F, info

    @staticmethod
    def backward(ctx, gF, _ginfo):
        (F,) = ctx.saved_tensors
        L, gL = (F.mT, gF.mT) if ctx.upper else (F, gF)
        phi = (L.mT @ gL).tril()
        phi = phi - 0.5 * phi * _eye_like(L, L.shape[-1])
        gA = _tri_solve(L, _tri_solve(L.mT, phi, True), False, False)
        return 0.5 * (gA + gA.mT), None


class CholeskyInverse(Function):
    """(L L^H)^-1 (or (U^H U)^-1) from a Cholesky factor. The gradient reaches
    the whole factor, not only its triangle, as PyTorch's formula does."""

    @staticmethod
    def forward(ctx, L, upper, solve):
        inverse = solve(L, upper)
        ctx.upper = upper
        ctx.save_for_backward(L, inverse)
        return inverse

    @staticmethod
    def backward(ctx, g):
        L, inverse = ctx.saved_tensors
        common = inverse @ ((g + g.mH) @ inverse)
        return (-(L @ common) if ctx.upper else -(common @ L)), None, None


class Eigh(Function):
    """(eigenvalues, eigenvectors) of a symmetric A (one triangle read)."""

    @staticmethod
    def forward(ctx, A, upper):
        w, V, info = _F._linalg_lapack_syevd(A, upper, True)
        ctx.save_for_backward(w, V)
        ctx.mark_non_differentiable(info)
        return w, V, info

    @staticmethod
    def backward(ctx, gw, gV, _ginfo):
        w, V = ctx.saved_tensors
        n = w.shape[-1]
        if gV is None:
            inner = ember.zeros_like(V)
        else:
            VtgV = V.mT @ gV
            VtgV = 0.5 * (VtgV - VtgV.mT)
            E = w.unsqueeze(-2) - w.unsqueeze(-1)
            E = E + _eye_like(w, n)
            inner = VtgV / E
            inner = inner - inner * _eye_like(w, n)
        if gw is not None:
            inner = inner + gw.unsqueeze(-1) * _eye_like(w, n)
        return V @ inner @ V.mT, None


class Svd(Function):
    """(U, S, Vh) of A."""

    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh, info = _F._linalg_lapack_gesdd(A, full_matrices, True)
        ctx.save_for_backward(U, S, Vh)
        ctx.mark_non_differentiable(info)
        return U, S, Vh, info

    @staticmethod
    def backward(ctx, gU, gS, gVh, _ginfo):
        U, S, Vh = ctx.saved_tensors
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        if gU is not None:
            gU = gU[..., :k]
        if gVh is not None:
            gVh = gVh[..., :k, :]
        eye = _eye_like(S, k)
        if gU is None and gVh is None:
            return (U * gS.unsqueeze(-2)) @ Vh if gS is not None else None, None
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
        V = Vh.mT
        inner = ember.zeros_like(E)
        if gU is not None:
            UtgU = U.mT @ gU
            inner = inner + (UtgU - UtgU.mT) * S.unsqueeze(-2)
        if gVh is not None:
            gV = gVh.mT
            VtgV = V.mT @ gV
            inner = inner + S.unsqueeze(-1) * (VtgV - VtgV.mT)
        inner = inner / E
        inner = inner - inner * eye
        if gS is not None:
            inner = inner + gS.unsqueeze(-1) * eye
        if m > k and gU is not None:
            gA = U @ inner + (gU - U @ UtgU) / S.unsqueeze(-2)
            return gA @ Vh, None
        if n > k and gVh is not None:
            gA = inner @ Vh + ((gV - V @ VtgV) / S.unsqueeze(-2)).mT
            return U @ gA, None
        return U @ inner @ Vh, None


class Qr(Function):
    """(Q, R) of A, reduced or complete."""

    @staticmethod
    def forward(ctx, A, mode):
        m, n = A.shape[-2], A.shape[-1]
        k = min(m, n)
        a, tau = _F._linalg_lapack_geqrf(A)
        complete = mode == "complete" and m > n
        if complete:
            a = ember.cat([a, ember.zeros(*A.shape[:-1], m - n, dtype=A.dtype)], -1)
        Q = _F._linalg_lapack_orgqr(a[..., :, : (m if complete else k)], tau)
        R = a[..., : (m if complete else k), :n].triu()
        ctx.mode = mode
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if gQ is None:
            gQ = ember.zeros_like(Q)
        if gR is None:
            gR = ember.zeros_like(R)
        if m >= n:
            return _qr_backward_tall(Q, R, gQ, gR), None
        # A = [X Y], R = [U V]: X = Q U is square, Y = Q V
        U, gV = R[..., :m], gR[..., m:]
        Y = Q @ R[..., m:]
        gX = _qr_backward_tall(Q, U, gQ + Y @ gV.mT, gR[..., :m])
        return ember.cat([gX, Q @ gV], -1), None


def _qr_backward_tall(Q, R, gQ, gR):
    QtgQ = Q.mT @ gQ
    RgRt = R @ gR.mT
    low = (QtgQ - QtgQ.mT + RgRt - RgRt.mT).tril()
    part_a = Q @ (gR + _tri_solve(R, low.mT, True).mT)
    part_b = _tri_solve(R, (gQ - Q @ QtgQ).mT, True).mT
    return part_a + part_b


class Inv(Solve):
    """Solve with the identity: the inverse, recorded as PyTorch records it."""


def _node_name(fn_cls, name):
    """Gives fn_cls's backward node PyTorch's name (LinalgSolveExBackward0, ...)."""
    fn_cls._backward_cls.__name__ = fn_cls._backward_cls.__qualname__ = name


for _cls, _name in (
    (Solve, "LinalgSolveExBackward0"),
    (Inv, "LinalgInvExBackward0"),
    (SolveTriangular, "LinalgSolveTriangularBackward0"),
    (LuFactor, "LinalgLuFactorExBackward0"),
    (Cholesky, "LinalgCholeskyExBackward0"),
    (CholeskyInverse, "CholeskyInverseBackward0"),
    (Eigh, "LinalgEighBackward0"),
    (Svd, "LinalgSvdBackward0"),
    (Qr, "LinalgQrBackward0"),
):
    _node_name(_cls, _name)
    # Forward-mode AD through these Functions differentiates their backward
    # (ember.autograd.forward_ad._jvp_from_backward).
    _cls._jvp_from_backward = True
del _cls, _name


class _Named(Function):
    """A composite recorded as one node with PyTorch's name: forward runs
    fn without a graph; backward runs it again with one and differentiates
    that (so it can be differentiated again)."""

    @staticmethod
    def forward(ctx, fn, mask, *inputs):
        ctx.fn = fn
        ctx.save_for_backward(*inputs)
        out = fn(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        ctx.differentiable = [o.dtype.is_floating_point and (mask is None or m) for o, m in zip(outs, mask or outs)]
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, ctx.differentiable) if not d])
        return out

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensors
        wanted = [x for x, need in zip(inputs, ctx.needs_input_grad[2:]) if need]
        with ember.enable_grad():
            out = ctx.fn(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g, d in zip(outs, grads, ctx.differentiable) if d and g is not None and o.requires_grad]
        found = iter(
            ember.autograd.grad(
                [o for o, _ in pairs],
                wanted,
                [g for _, g in pairs],
                create_graph=ember.is_grad_enabled(),
                allow_unused=True,
            )
            if pairs and wanted
            else [None] * len(wanted)
        )
        result = [next(found) if need else None for need in ctx.needs_input_grad[2:]]
        return (None, None, *result)


_NAMED = {}


def named(name, fn, *inputs, mask=None):
    """fn(*inputs), recorded as one node named `name` when a gradient is needed;
    mask tells which outputs are differentiable (all float ones by default)."""
    if not (ember.is_grad_enabled() and any(x.requires_grad for x in inputs)):
        return fn(*inputs)
    cls = _NAMED.get(name)
    if cls is None:
        cls = type(name.removesuffix("Backward0"), (_Named,), {})
        _node_name(cls, name)
        _NAMED[name] = cls
    return cls.apply(fn, mask, *inputs)
