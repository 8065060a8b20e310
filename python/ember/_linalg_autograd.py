"""The differentiable building blocks of ember.linalg: each runs a LAPACK
kernel (``_C._VariableFunctions._linalg_lapack_*``) forward and PyTorch's
derivative formula backward. Backward formulas use differentiable operators
only, so they can be differentiated again. Inputs arrive checked, with equal
batch dims and a float32/float64/complex64/complex128 dtype (ember.linalg
does that). Complex gradients follow PyTorch's convention (the conjugate
Wirtinger derivative): its formulas, with conjugate transposes (mH) where the
real ones transpose."""

from __future__ import annotations

import ember
from ember import _C
from ember.autograd.function import Function, _composite_node, _CompositeNode

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
        gB = _tri_solve(A.mH, gX, not ctx.upper, True, ctx.unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -gB @ X.mH
            gA = gA.triu(1 if ctx.unit else 0) if ctx.upper else gA.tril(-1 if ctx.unit else 0)
        return gA, gB, None, None


class Solve(Function):
    """(X, LU, pivots, info) of A X = B (A^H X = B when transposed: getrs
    'C', which is 'T' for real A) through an LU factorization of A. As
    PyTorch's linalg_solve_ex, one node takes A and B as given: B may be a
    vector per matrix (vector), X A = B is solved as A^H X^H = B^H (left
    False), batch dims broadcast, and the gradients come back in the
    inputs' shapes."""

    @staticmethod
    def forward(ctx, A, B, transposed=False, left=True, vector=False):
        Bm = B.unsqueeze(-1) if vector else B
        A2, B2 = _broadcast_batch(A, Bm if left else Bm.mH)
        transposed = transposed or not left
        LU, piv, info = _F._linalg_lapack_getrf(A2)
        X = _F._linalg_lapack_getrs(LU, piv, B2, transposed, True)
        X = X if left else X.mH
        X = X.squeeze(-1) if vector else X
        ctx.transposed, ctx.left, ctx.vector = transposed, left, vector
        ctx.batch, ctx.b_shape = tuple(A2.shape[:-2]), tuple(Bm.shape)
        ctx.save_for_backward(A, X, LU, piv)
        ctx.mark_non_differentiable(LU, piv, info)
        return X, LU, piv, info

    @staticmethod
    def backward(ctx, gX, _gLU, _gpiv, _ginfo):
        A, X, LU, piv = ctx.saved_tensors
        left, vector = ctx.left, ctx.vector

        def as_solved(T):  # noqa: N802
            T = T.unsqueeze(-1) if vector else T
            return T if left else T.mH

        gX, X = as_solved(gX), as_solved(X)
        A2 = A if tuple(A.shape[:-2]) == ctx.batch else A.expand(*ctx.batch, *A.shape[-2:])
        # X = op(A)^-1 B: gB = op(A)^-H gX, g op(A) = -gB X^H. As PyTorch: through the forward's
        # factorization, unless a graph is recorded (then A^H is factored, differentiably).
        if not ember.is_grad_enabled():
            gB = _F._linalg_lapack_getrs(LU, piv, gX, not ctx.transposed, True)
        else:
            gB = Solve.apply(A2, gX)[0] if ctx.transposed else Solve.apply(A2.mH, gX)[0]
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -gB @ X.mH
            gA = _sum_to(gA.mH if ctx.transposed else gA, A.shape)
        gB = _sum_to(gB if left else gB.mH, ctx.b_shape)
        return gA, gB.squeeze(-1) if vector else gB, None, None, None


def _broadcast_batch(A, B):
    """A and B expanded to their broadcast batch dims."""
    if A.shape[:-2] == B.shape[:-2]:
        return A, B
    batch = ember.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    return A.expand(*batch, *A.shape[-2:]), B.expand(*batch, *B.shape[-2:])


def _sum_to(g, shape):
    """g summed over the dims that broadcasting added to (or expanded in) shape."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    if lead:
        g = g.sum(tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(dims, keepdim=True) if dims else g


def householder_composite(A, tau):  # noqa: N803
    """householder_product composed of rank-one updates, so autograd differentiates it."""
    m, n = A.shape[-2], A.shape[-1]
    Q = _eye_like(A, m)[:, :n].expand(*A.shape[:-2], m, n)
    mask_rows = ember.arange(m, device=A.device).unsqueeze(-1)
    for i in reversed(range(tau.shape[-1])):
        col = A[..., :, i : i + 1]
        v = ember.where(mask_rows > i, col, ember.where(mask_rows == i, ember.ones_like(col), ember.zeros_like(col)))
        t = tau[..., i : i + 1].unsqueeze(-1)
        Q = Q - (t * v) @ (v.mH @ Q)
    return Q


def cholesky_solve(B, L, upper):  # noqa: N803
    """(L L^H)^-1 B (or (U^H U)^-1 B), by two triangular solves (differentiable)."""
    L2, B2 = _broadcast_batch(L, B)
    if upper:
        return _tri_solve(L2, _tri_solve(L2.mH, B2, False), True)
    return _tri_solve(L2.mH, _tri_solve(L2, B2, False), True)


class CholeskySolve(Function):
    """X = cholesky_solve(B, L), with PyTorch's gradient: gB solved as X is,
    the factor's -(C L) (-(U C) when upper), C = gB X^H + X gB^H, for the
    whole matrix (batch dims broadcast, summed back)."""

    @staticmethod
    def forward(ctx, B, L, upper):  # noqa: N803
        X = cholesky_solve(B, L, upper)
        ctx.upper = upper
        ctx.save_for_backward(L, X)
        ctx.shapes = tuple(B.shape), tuple(L.shape)
        return X

    @staticmethod
    def backward(ctx, gX):
        L, X = ctx.saved_tensors
        gB = cholesky_solve(gX, L, ctx.upper)
        gL = None
        if ctx.needs_input_grad[1]:
            C = gB @ X.mH
            C = C + C.mH
            gL = _sum_to(-(L @ C) if ctx.upper else -(C @ L), ctx.shapes[1])
        return _sum_to(gB, ctx.shapes[0]), gL, None


CHOL = "CholeskySolveBackward0"


def pivots_to_permutation(pivots, m):
    """The row order perm with A[perm] = L U, per matrix of the batch."""
    batch = list(pivots.shape[:-1])
    rows = []
    for piv in pivots.reshape(-1, pivots.shape[-1]).tolist() if pivots.numel() else [[]] * _prod(batch):
        p = list(range(m))
        for i, v in enumerate(piv):
            p[i], p[v - 1] = p[v - 1], p[i]
        rows.append(p)
    return ember.tensor(rows, dtype=ember.int64, device=pivots.device).reshape(batch + [m])


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
        # U^-H from the right first, then L^-H from the left, as PyTorch's.
        phi = (L.mH @ gL).tril(-1) + (gU @ U.mH).triu()
        X = _tri_solve(U.mH, phi, False, False)
        return P @ _tri_solve(L.mH, X, True, True, True)
    if m < n:
        U1, U2, gU1, gU2 = U[..., :k], U[..., k:], gU[..., :k], gU[..., k:]
        phi = (L.mH @ gL).tril(-1) - (gU2 @ U2.mH).tril(-1) + (gU1 @ U1.mH).triu()
        X = _tri_solve(L.mH, phi, True, True, True)
        gA1 = _tri_solve(U1.mH, X, False, False)
        gA2 = _tri_solve(L.mH, gU2, True, True, True)
        return P @ ember.cat([gA1, gA2], -1)
    L1, L2, gL1, gL2 = L[..., :k, :], L[..., k:, :], gL[..., :k, :], gL[..., k:, :]
    phi = (L1.mH @ gL1).tril(-1) + (gU @ U.mH).triu() - (L2.mH @ gL2).triu()
    X = _tri_solve(L1.mH, phi, True, True, True)
    gA1 = _tri_solve(U.mH, X, False, False)
    gA2 = _tri_solve(U.mH, gL2, False, False)
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


class Slogdet(Function):
    """(sign, log |det A|) from `slogdet` (a function of A), with PyTorch's
    gradient: A^-H diag(g) solved with the LU factors of A (of A^T for a
    contiguous real A, as the forward factors), g the log-determinant's
    gradient (for complex A, its imaginary part from the sign's gradient).
    Singular matrices give the infinities of that solve, as PyTorch's."""

    @staticmethod
    def forward(ctx, A, slogdet):
        sign, logabs = slogdet(A)
        ctx.save_for_backward(A, sign)
        ctx.set_materialize_grads(False)  # the real sign's gradient alone gives none, as PyTorch's
        return sign, logabs

    @staticmethod
    def backward(ctx, gsign, glogabs):
        from ember import linalg

        A, sign = ctx.saved_tensors
        if glogabs is None and (gsign is None or not A.is_complex()):
            return None, None
        g = glogabs if glogabs is not None else ember.zeros_like(sign.real if A.is_complex() else sign)
        if A.is_complex():
            im = -(gsign.conj() * sign).imag if gsign is not None else ember.zeros_like(g)
            g = ember.complex(g, im)
        use_transpose = A.is_contiguous() and not A.is_complex()
        LU, piv, _ = linalg.lu_factor_ex(A.mT if use_transpose else A)
        d = ember.diag_embed(g.unsqueeze(-1).expand(*piv.shape).to(A.dtype))
        return linalg.lu_solve(LU, piv, d, adjoint=not use_transpose), None


class Pinv(Function):
    """The pseudo-inverse from `pinv` (a function of A), with PyTorch's
    gradient: its closed form in A and A^+, products ordered to keep the
    intermediate matrices smallest (m <= n or not)."""

    @staticmethod
    def forward(ctx, A, pinv):
        P = pinv(A)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, g):
        A, P = ctx.saved_tensors
        return pinv_backward(g, P, A), None


def pinv_backward(g, P, A):
    """PyTorch's gradient of P = pinv(A) from g, P's."""
    Ph, gh = P.mH, g.mH
    if A.shape[-2] <= A.shape[-1]:
        K = gh @ P
        KPh = K @ Ph
        return -(P @ K).mH + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    K = P @ gh
    PhK = Ph @ K
    return -(K @ P).mH + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A


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
        L, gL = (F.mH, gF.mH) if ctx.upper else (F, gF)
        # PyTorch's order: the Hermitian part of tril(L^H gL), then L^-H from
        # the left, then L^-1 from the right.
        gA = (L.mH @ gL).tril()
        gA = 0.5 * (gA + gA.tril(-1).mH)
        gA = _tri_solve(L.mH, gA, True)
        return _tri_solve(L, gA, False, False), None


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
        ctx.set_materialize_grads(False)  # an unused output's gradient stays None, as in PyTorch
        return w, V, info

    @staticmethod
    def backward(ctx, gw, gV, _ginfo):
        w, V = ctx.saved_tensors
        n = w.shape[-1]
        eye = _eye_like(w, n)
        if gV is None:
            # eigenvalues only: V diag(gw) V^H, as PyTorch
            return None if gw is None else (V * gw.unsqueeze(-2)) @ V.mH, None
        VtgV = V.mH @ gV
        if V.is_complex():
            _check_phase_invariant(VtgV.diagonal(0, -2, -1), "linalg_eigh_backward")
        VtgV = 0.5 * (VtgV - VtgV.mH)
        E = w.unsqueeze(-2) - w.unsqueeze(-1)
        E = E + eye
        inner = VtgV / E
        if gw is not None:
            # the diagonal replaced by gw
            inner = inner - inner * eye + gw.unsqueeze(-1) * eye
        return V @ (inner @ V.mH), None


class Svd(Function):
    """(U, S, Vh) of A, with PyTorch's svd_backward (its products, in its order)."""

    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh, info = _F._linalg_lapack_gesdd(A, full_matrices, True)
        ctx.save_for_backward(U, S, Vh)
        ctx.mark_non_differentiable(info)
        ctx.set_materialize_grads(False)  # an unused output's gradient stays None, as in PyTorch
        return U, S, Vh, info

    @staticmethod
    def backward(ctx, gU, gS, gVh, _ginfo):
        U, S, Vh = ctx.saved_tensors
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = gU[..., :k] if gU is not None else None
        gVh = gVh[..., :k, :] if gVh is not None else None
        if gU is None and gVh is None:
            if gS is None:
                return None, None
            return (U @ (gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)) @ Vh), None
        UhgU = VhgV = None
        if gU is not None:
            UhgU = U.mH @ gU
            UhgU = UhgU - UhgU.mH
        if gVh is not None:
            VhgV = Vh @ gVh.mH
            VhgV = VhgV - VhgV.mH
        complex_ = U.is_complex()
        if complex_:
            # the loss may not depend on the phases of the singular vectors
            phase = sum(X.diagonal(0, -2, -1) for X in (UhgU, VhgV) if X is not None)
            _check_phase_invariant(
                phase, "svd_backward", vectors="singular vectors", what="phase term, making it ill-defined"
            )
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye_like(S, k)
        if UhgU is not None and VhgV is not None:
            gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
        elif UhgU is not None:
            gA = (UhgU / E) * S.unsqueeze(-2)
        else:
            gA = S.unsqueeze(-1) * (VhgV / E)
        if gS is not None:
            gA = gA + ember.diag_embed(gS)
        if complex_ and UhgU is not None and VhgV is not None:
            # the imaginary part of diag(U^H gU) reaches A through the phases
            gA = gA + ember.diag_embed(UhgU.diagonal(0, -2, -1) / (2 * S))
        if m > n and gU is not None:
            gA = U @ gA
            gUSinv = gU / S.unsqueeze(-2)
            gA = gA + gUSinv - U @ (U.mH @ gUSinv)
            return gA @ Vh, None
        if m < n and gVh is not None:
            gA = gA @ Vh
            SinvgVh = gVh / S.unsqueeze(-1)
            gA = gA + SinvgVh - (SinvgVh @ Vh.mH) @ Vh
            return U @ gA, None
        return (U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh), None


class Qr(Function):
    """(Q, R) of A, reduced or complete."""

    @staticmethod
    def forward(ctx, A, mode):
        m, n = A.shape[-2], A.shape[-1]
        k = min(m, n)
        a, tau = _F._linalg_lapack_geqrf(A)
        complete = mode == "complete" and m > n
        if complete:
            a = ember.cat([a, A.new_zeros(*A.shape[:-1], m - n)], -1)
        if mode == "r":
            Q = ember.empty(0, dtype=A.dtype, device=A.device)  # not computed, as in PyTorch
        else:
            Q = _F._linalg_lapack_orgqr(a[..., :, : (m if complete else k)], tau)
        # R in column-major order, as PyTorch's: the lower triangle of R^T, row-major, transposed.
        R = a.mT[..., :n, : (m if complete else k)].tril().mT
        ctx.mode = mode
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        if ctx.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
            )
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(Q, R, gQ, gR), None
        if gQ is None:
            gQ = ember.zeros_like(Q)
        if gR is None:
            gR = ember.zeros_like(R)
        # A = [X Y], R = [U V]: X = Q U is square, Y = Q V
        U, gV = R[..., :m], gR[..., m:]
        Y = Q @ R[..., m:]
        gX = _qr_backward_tall(Q, U, gQ + Y @ gV.mH, gR[..., :m])
        return ember.cat([gX, Q @ gV], -1), None


class Geqrf(Function):
    """LAPACK's compact QR (a, tau), recorded without a derivative as PyTorch's."""

    @staticmethod
    def forward(ctx, A):
        return _F._linalg_lapack_geqrf(A)

    @staticmethod
    def backward(ctx, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _qr_backward_tall(Q, R, gQ, gR):
    """PyTorch's gradient of A = Q R for m >= n, in its order of operations:
    (Q sym(triu(gR R^H - Q^H gQ)) + gQ) R^-H, sym(X) = X + X^H with the
    real part of its diagonal halved (either gradient may be None)."""
    if gQ is None:
        gA = gR @ R.mH
    elif gR is None:
        gA = -(Q.mH @ gQ)
    else:
        gA = gR @ R.mH - Q.mH @ gQ
    sym = gA.triu()
    sym = sym + sym.mH
    n = sym.shape[-1]
    eye = _eye_like(R.real if R.is_complex() else R, n)
    sym = sym * ember.where(eye == 1, ember.full_like(eye, 0.5), ember.ones_like(eye))
    gA = Q @ sym
    if gQ is not None:
        gA = gA + gQ
    return _tri_solve(R.mH, gA, False, False)


def _check_phase_invariant(diag, name, vectors="eigenvectors", what="quantity, so it is ill-defined"):
    """PyTorch's refusal of a loss that depends on the free phases of complex
    eigen/singular vectors (the imaginary part of diag(V^H gV))."""
    im = diag.detach().imag
    if not bool(ember.allclose(im, ember.zeros_like(im), rtol=1e-2, atol=1e-2)):
        raise RuntimeError(
            f"{name}: The {vectors} in the complex case are specified up to multiplication by e^{{i phi}}. "
            f"The specified loss function depends on this {what}."
        )


def eig_from_geev(A, compute_v):
    """(eigenvalues, eigenvectors, info) of A as complex tensors: LAPACK's
    real results of a real A (conjugate pairs stored as two real columns)
    assembled into complex ones, as PyTorch assembles them."""
    wr, wi, V, info = _F._linalg_lapack_geev(A, compute_v)
    if A.is_complex():
        return wr, V, info
    w = ember.complex(wr, wi)
    if not compute_v:
        return w, V, info
    n = A.shape[-1]
    if n == 0:
        return w, V.to(w.dtype), info
    first = (wi > 0).unsqueeze(-2)  # the first column of a pair: v = V[j] + i V[j+1]
    second = (wi < 0).unsqueeze(-2)  # the second: v = V[j-1] - i V[j]
    zero = ember.zeros_like(V[..., :, :1])
    nxt = ember.cat([V[..., :, 1:], zero], -1)
    prv = ember.cat([zero, V[..., :, :-1]], -1)
    re = ember.where(second, prv, V)
    im = ember.where(first, nxt, ember.where(second, -V, ember.zeros_like(V)))
    return w, ember.complex(re, im).mT.contiguous().mT, info  # column-major, as LAPACK's and PyTorch's


class Eig(Function):
    """(eigenvalues, eigenvectors, info) of a general A, complex results."""

    @staticmethod
    def forward(ctx, A):
        w, V, info = eig_from_geev(A, True)
        ctx.real_input = not A.is_complex()
        ctx.save_for_backward(w, V)
        ctx.mark_non_differentiable(info)
        return w, V, info

    @staticmethod
    def backward(ctx, gw, gV, _ginfo):
        w, V = ctx.saved_tensors
        n = w.shape[-1]
        eye = _eye_like(w, n)
        Vh = V.mH
        if gV is None:
            inner = gw.unsqueeze(-1) * eye
        else:
            VhgV = Vh @ gV
            diag = VhgV.diagonal(0, -2, -1)
            _check_phase_invariant(diag, "linalg_eig_backward")
            VhgV = VhgV - Vh @ (V * diag.real.unsqueeze(-2))
            wc = w.conj()
            E = wc.unsqueeze(-2) - wc.unsqueeze(-1) + eye
            inner = VhgV / E
            if gw is not None:
                inner = inner - inner * eye + gw.unsqueeze(-1) * eye
        gA = Solve.apply(Vh, inner @ Vh)[0]
        return gA.real if ctx.real_input else gA


class Inv(Function):
    """(X, LU, pivots, info): the inverse of A, solved with the identity through
    an LU factorization, with PyTorch's gradient -X^H (g X^H), in that order
    of products. X is saved as an output, so double backward sees its graph."""

    @staticmethod
    def forward(ctx, A):
        LU, piv, info = _F._linalg_lapack_getrf(A)
        B = _eye_like(A, A.shape[-1]).expand(*A.shape)
        X = _F._linalg_lapack_getrs(LU, piv, B, False, True)
        ctx.save_for_backward(X)
        ctx.mark_non_differentiable(LU, piv, info)
        return X, LU, piv, info

    @staticmethod
    def backward(ctx, gX, _gLU, _gpiv, _ginfo):
        (X,) = ctx.saved_tensors
        Xh = X.mH
        return -(Xh @ (gX @ Xh))


def _node_name(fn_cls, name):
    """Gives fn_cls's backward node PyTorch's name (LinalgSolveExBackward0, ...)."""
    fn_cls._backward_cls.__name__ = fn_cls._backward_cls.__qualname__ = name
    fn_cls._backward_cls.__module__ = "builtins"  # printed as PyTorch's C++ nodes: <LinalgDetBackward0 object at ...>


for _cls, _name in (
    (Solve, "LinalgSolveExBackward0"),
    (Inv, "LinalgInvExBackward0"),
    (SolveTriangular, "LinalgSolveTriangularBackward0"),
    (LuFactor, "LinalgLuFactorExBackward0"),
    (Cholesky, "LinalgCholeskyExBackward0"),
    (Slogdet, "LinalgSlogdetBackward0"),
    (Pinv, "LinalgPinvBackward0"),
    (CholeskyInverse, "CholeskyInverseBackward0"),
    (Eigh, "LinalgEighBackward0"),
    (Svd, "LinalgSvdBackward0"),
    (Qr, "LinalgQrBackward0"),
    (Eig, "LinalgEigBackward0"),
    (Geqrf, "GeqrfBackward0"),
    (CholeskySolve, CHOL),
):
    _node_name(_cls, _name)
    # Forward-mode AD through these Functions differentiates their backward
    # (ember.autograd.forward_ad._jvp_from_backward).
    _cls._jvp_from_backward = True
del _cls, _name


def named(name, fn, *inputs, mask=None, exact=None):
    """fn(*inputs), recorded as one node named `name` when a gradient is needed;
    mask tells which outputs are differentiable (all float ones by default),
    exact computes the forward values when fn only composes them for autograd.
    Inside the ember.func transforms, fn is composed as it is."""
    return _composite_node(name, fn, *inputs, mask=mask, exact=exact)


def _composed(name, inputs):
    """Whether a named node is left out: inside the ember.func transforms."""
    from ember._functorch.batched import _GRAD_DEPTH, LEVELS

    return bool(LEVELS or _GRAD_DEPTH[0])


class _ViewNode(Function):
    """view(x) recorded as one node with PyTorch's name (UnsafeViewBackward0,
    SqueezeBackward4, ...), its gradient undo(g). The result is an alias that
    autograd does not track as a view, as the result of PyTorch's
    _unsafe_view or of an in-place view op on a fresh tensor."""

    @staticmethod
    def forward(ctx, x, view, undo):
        ctx.undo = undo
        return view(x).detach()

    @staticmethod
    def backward(ctx, g):
        return ctx.undo(g), None, None


_VIEW_NODES = {}


def view_node(name, x, view, undo):
    """view(x) as one node named `name` (plain view(x) where no gradient is
    recorded, where _composed says so, or with a forward-mode tangent)."""
    from ember.autograd.forward_ad import _is_dual

    if not (ember.is_grad_enabled() and x.requires_grad) or _composed(name, (x,)) or _is_dual(x):
        return view(x)
    cls = _VIEW_NODES.get(name)
    if cls is None:
        cls = type(name.removesuffix("Backward0"), (_ViewNode,), {})
        _node_name(cls, name)
        _VIEW_NODES[name] = cls
    return cls.apply(x, view, undo)


class Det(_CompositeNode):
    """det A (fn, run on A), recorded as PyTorch's LinalgDetBackward0. Its
    first-order gradient is PyTorch's: (g conj(det)) A^-H, solved with the
    forward's LU factors (of A^T for a contiguous real A; a zero pivot
    replaced by epsilon). With a graph to record, the composite is
    differentiated instead, so it can be differentiated again."""

    @staticmethod
    def backward(ctx, g):
        if ember.is_grad_enabled():
            return _CompositeNode.backward(ctx, g)
        (A,) = ctx.saved_tensors
        det = ctx.fn(A)
        use_A_T = A.is_contiguous() and not A.is_complex()  # noqa: N806
        LU, piv, _ = _F._linalg_lapack_getrf(A.mT if use_A_T else A)
        diag = LU.diagonal(0, -2, -1)
        eps = ember.finfo(diag.real.dtype if diag.is_complex() else diag.dtype).eps
        LU = LU + ember.diag_embed(ember.where(diag == 0, ember.full_like(diag, eps), ember.zeros_like(diag)))
        d = ember.diag_embed((g * det.conj()).unsqueeze(-1).expand(*piv.shape))
        return None, None, None, _F._linalg_lapack_getrs(LU, piv, d, not use_A_T, True)


_node_name(Det, "LinalgDetBackward0")


class LuSolve(Function):
    """X = A^-1 B (A^-H B when adjoint) from the LU factors of A (batch dims
    equal), by LAPACK's getrs as PyTorch's lu_solve, with its gradients: B's
    solved with the flipped adjoint, LU's by PyTorch's linalg_lu_solve_LU
    (its products and triangular solves, in its order)."""

    @staticmethod
    def forward(ctx, LU, pivots, B, adjoint):
        X = _F._linalg_lapack_getrs(LU, pivots.contiguous(), B, adjoint, True)
        ctx.adjoint = adjoint
        ctx.save_for_backward(LU, pivots, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        from ember import linalg

        LU, pivots, X = ctx.saved_tensors
        gB = linalg.lu_solve(LU, pivots, gX, adjoint=not ctx.adjoint) if ctx.needs_input_grad[2] else None
        gLU = None
        if ctx.needs_input_grad[0]:
            P, L, U = unpack_lu(LU, pivots, unpack_pivots=ctx.adjoint)
            if not ctx.adjoint:
                gR = _tri_solve(U.mH, -(gX @ X.mH), False)
                gL = _tri_solve(L.mH, gR @ U.mH, True, True, True).tril(-1)
                gLU = gL + gR.triu()
            else:
                gR = -(((P.mT @ X) @ gX.mH) @ P)
                gR = _tri_solve(L.mH, gR, True, False, True)
                gU = _tri_solve(U.mH, L.mH @ gR, False, False).triu()
                gLU = gR.tril(-1) + gU
        return gLU, None, gB, None


_node_name(LuSolve, "LinalgLuSolveBackward0")
LuSolve._jvp_from_backward = True
