"""torch.lobpcg: a few extreme eigenpairs of a symmetric (generalized)
eigenproblem A x = lambda B x by the locally optimal block preconditioned
conjugate gradient method (Knyazev 2001).

Each step takes the Rayleigh-Ritz pairs of A on the span of the current
block X, the preconditioned residuals W = iK (A X - B X diag(E)) and the
previous search directions P. ``method="basic"`` B-orthonormalizes that
basis with one Cholesky factorization (cheap, fails on a nearly dependent
basis); ``method="ortho"`` (the default) orthogonalizes W and P against X
and against each other, repeating until the B-orthogonality error is below
``ortho_tol`` and dropping directions that vanish (Stathopoulos and Wu
2002). Converged pairs are locked: only the residuals of unconverged pairs
extend the basis.

Gradients (A symmetric, B absent) are those of the computed eigenpairs:
d lambda_i = x_i^T dA x_i and, for the eigenvectors, the first-order
perturbation over the rest of A's spectrum.
"""

from __future__ import annotations

import ember

__all__ = ["lobpcg"]


class _State:
    """What a tracker sees at each step (PyTorch's names)."""

    def __init__(self, A, B, iK, X, iparams, fparams, bparams):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.ivars = {"istep": 0, "converged_count": 0, "converged_end": 0, "iterations_left": 0}
        self.ivars.update({"ortho_i": 0, "ortho_j": 0})
        self.fvars = {"A_norm": 0.0, "B_norm": 0.0, "X_norm": 0.0, "_": 0.0}
        self.bvars = {"_": False, "force_stop": False}
        self.tvars = {}
        self.X, self.E, self.S, self.R = X, None, None, None

    def __str__(self):
        lines = [f"LOBPCG: step {self.ivars['istep']}, converged {self.ivars['converged_count']}"]
        lines.append(f"  E = {self.E}")
        return "\n".join(lines)


def _matmul(M, X):
    return X if M is None else ember.matmul(M, X)


def _b_inner(B, U, V):
    return ember.matmul(U.mT, _matmul(B, V))


def _b_normalize_columns(B, U):
    return U / ember.sqrt(ember.clamp((U * _matmul(B, U)).sum(0), min=ember.finfo(U.dtype).tiny))


def _svqb(B, U, tol_drop, drop):
    """An orthonormal basis (in B's inner product) of U's columns from the
    eigenvectors of its Gram matrix; columns whose eigenvalue is below
    tol_drop times the largest are dropped, or kept bounded if not drop."""
    U = _b_normalize_columns(B, U)
    G = _b_inner(B, U, U)
    G = (G + G.mT) / 2
    d, Z = ember.linalg.eigh(G)
    threshold = tol_drop * d.abs().max()
    if drop:
        keep = d > threshold
        d, Z = d[keep], Z[:, keep]
    else:
        d = ember.clamp(d, min=threshold)
    return ember.matmul(U, Z / ember.sqrt(d))


def _orthogonalize_against(state, B, U, X):
    """U made B-orthonormal and B-orthogonal to the B-orthonormal X, by
    repeated projection and SVQB until the error is below ortho_tol."""
    ip, fp, bp = state.iparams, state.fparams, state.bparams
    tol, tol_drop, drop = fp["ortho_tol"], fp["ortho_tol_drop"], bp["ortho_use_drop"]
    for i in range(ip["ortho_i_max"]):
        state.ivars["ortho_i"] = i
        for j in range(ip["ortho_j_max"]):
            state.ivars["ortho_j"] = j
            U = U - ember.matmul(X, _b_inner(B, X, U))
            U = _svqb(B, U, tol_drop, drop)
            if U.shape[-1] == 0:
                return U
            eye = ember.eye(U.shape[-1], dtype=U.dtype, device=U.device)
            ubu_err = (_b_inner(B, U, U) - eye).norm() / max(1.0, float(eye.norm()))
            state.fvars["ortho_UBUmI_rerr[0, 0]"] = float(ubu_err)
            if ubu_err < tol:
                break
        xbu_err = _b_inner(B, X, U).norm() / max(1.0, float(U.norm()))
        state.fvars["ortho_VBU_rerr[0]"] = float(xbu_err)
        if xbu_err < tol:
            break
    return U


def _rayleigh_ritz(A, S, n, largest):
    """The n extreme Ritz values of A on span(S) (S B-orthonormal) and their
    coefficient vectors, best first."""
    H = ember.matmul(S.mT, ember.matmul(A, S))
    d, Z = ember.linalg.eigh((H + H.mT) / 2)
    if largest:
        d, Z = d.flip(0), Z.flip(-1)
    return d[:n], Z[:, :n]


def _lobpcg_2d(A, k, B, X, iK, niter, tol, largest, method, tracker, ortho):
    m, n = X.shape
    iparams = {"m": m, "n": n, "k": k, "niter": niter, "ortho_i_max": 3, "ortho_j_max": 3}
    fparams = {"tol": tol, "ortho_tol": tol, "ortho_tol_drop": tol, "ortho_tol_replace": tol}
    bparams = {"largest": largest, "ortho_use_drop": False}
    iparams.update(ortho[0] or {})
    fparams.update(ortho[1] or {})
    bparams.update(ortho[2] or {})
    state = _State(A, B, iK, X, iparams, fparams, bparams)
    A_norm = float(ember.linalg.matrix_norm(A))
    B_norm = 1.0 if B is None else float(ember.linalg.matrix_norm(B))
    state.fvars.update({"A_norm": A_norm, "B_norm": B_norm})

    if method == "basic":
        L = ember.linalg.cholesky(_b_inner(B, X, X))
        X = ember.linalg.solve_triangular(L, X.mT, upper=False).mT
    else:
        X = _svqb(B, X, fparams["ortho_tol_drop"], False)
    E, Z = _rayleigh_ritz(A, X, n, largest)
    X = ember.matmul(X, Z)
    P = None
    iterations = niter
    while True:
        R = _matmul(A, X) - _matmul(B, X) * E
        x_norm = ember.linalg.vector_norm(X, dim=0)
        rerr = ember.linalg.vector_norm(R, dim=0) / ((A_norm + E.abs() * B_norm) * x_norm)
        converged = rerr < tol
        count = 0
        while count < n and bool(converged[count]):
            count += 1
        state.X, state.E, state.R = X, E, R
        state.tvars["rerr"] = rerr
        state.fvars["X_norm"] = float(x_norm.max())
        state.ivars.update({"converged_count": count, "converged_end": count, "iterations_left": iterations})
        if tracker is not None:
            tracker(state)
        if count >= k or iterations == 0 or state.bvars["force_stop"]:
            break
        active = ~converged
        W = _matmul(iK, R[:, active])
        basis = [X, W] if P is None else [X, W, P[:, active]]
        if method == "basic":
            S = ember.cat(basis, 1)
            L = ember.linalg.cholesky(_b_inner(B, S, S))
            S = ember.linalg.solve_triangular(L, S.mT, upper=False).mT
        else:
            extra = _orthogonalize_against(state, B, ember.cat(basis[1:], 1), X)
            S = ember.cat([X, extra], 1)
        state.S = S
        E, Z = _rayleigh_ritz(A, S, n, largest)
        X_new = ember.matmul(S, Z)
        P = X_new - ember.matmul(X, _b_inner(B, X, X_new))  # the step taken outside span(X)
        X = X_new
        iterations -= 1
        state.ivars["istep"] += 1
    return E[:k], X[:, :k]


def _check_shapes(A, B):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and B.shape != A.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")


class _LobpcgEigenpairs(ember.autograd.Function):
    """The eigenpairs of a symmetric A with the gradient of the computed pairs."""

    @staticmethod
    def forward(ctx, A, E, X):
        ctx.save_for_backward(A, E, X)
        return E.clone(), X.clone()

    @staticmethod
    def backward(ctx, gE, gX):
        A, E, X = ctx.saved_tensors
        grad = ember.zeros_like(A)
        if gE is not None:
            grad = grad + ember.matmul(X * gE.unsqueeze(-2), X.mT)
        if gX is not None:
            # x_i' = sum over A's other eigenvectors u_j of u_j u_j^T dA x_i / (lambda_i - mu_j)
            mu, U = ember.linalg.eigh(A)
            gap = E.unsqueeze(-2) - mu.unsqueeze(-1)  # (m, k)
            near = gap.abs() <= ember.finfo(A.dtype).eps ** 0.5 * mu.abs().max().clamp(min=1)
            inv_gap = ember.where(near, ember.zeros_like(gap), 1 / gap)
            C = ember.matmul(U.mT, gX) * inv_gap  # coefficients of gX over U, scaled
            grad = grad + ember.matmul(ember.matmul(U, C), X.mT)
        return (grad + grad.mT) / 2, None, None


def lobpcg(
    A,
    k=None,
    B=None,
    X=None,
    n=None,
    iK=None,
    niter=None,
    tol=None,
    largest=None,
    method=None,
    tracker=None,
    ortho_iparams=None,
    ortho_fparams=None,
    ortho_bparams=None,
):
    """The k largest (or smallest) eigenpairs of A x = lambda B x, A and B
    symmetric positive definite, by LOBPCG; returns (E, X)."""
    _check_shapes(A, B)
    m = A.shape[-1]
    if X is not None:
        if X.shape[-2:] != (m, X.shape[-1]) or X.shape[:-2] != A.shape[:-2]:
            raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(*A.shape[:-2], m, X.shape[-1])}")
        n = X.shape[-1]
        k = n if k is None else k
    else:
        k = 1 if k is None else k
        n = k if n is None else max(n, k)
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x the number "
            f"of requested eigenpairs (={n})"
        )
    dtype = A.dtype if A.dtype in (ember.float32, ember.float64) else ember.float32
    tol = ember.finfo(dtype).eps ** 0.5 if tol is None else tol
    niter = 1000 if niter is None else niter
    niter = -1 if niter < 0 else niter
    largest = True if largest is None else largest
    method = "ortho" if method is None else method
    if A.layout == ember.sparse_coo:
        A = A.to_dense()
    if B is not None and B.layout == ember.sparse_coo:
        B = B.to_dense()
    if X is None:
        X = ember.randn(*A.shape[:-1], n, dtype=dtype, device=A.device)
    differentiable = A.requires_grad and ember.is_grad_enabled()
    if differentiable:
        A = (A + A.mT) / 2
    ortho = (ortho_iparams, ortho_fparams, ortho_bparams)
    with ember.no_grad():
        Ad = A.detach()
        if A.dim() == 2:
            E, V = _lobpcg_2d(Ad, k, B, X, iK, niter, tol, largest, method, tracker, ortho)
        else:
            batch = A.shape[:-2]
            flat = [
                _lobpcg_2d(
                    Ad.reshape(-1, m, m)[i],
                    k,
                    None if B is None else B.reshape(-1, m, m)[i],
                    X.reshape(-1, m, n)[i],
                    None if iK is None else iK.reshape(-1, m, m)[i],
                    niter,
                    tol,
                    largest,
                    method,
                    tracker,
                    ortho,
                )
                for i in range(Ad.reshape(-1, m, m).shape[0])
            ]
            E = ember.stack([e for e, _ in flat]).reshape(*batch, -1)
            V = ember.stack([v for _, v in flat]).reshape(*batch, m, -1)
    if differentiable and B is None:
        if A.dim() != 2:
            raise NotImplementedError("lobpcg: gradients of batched inputs are not supported")
        return _LobpcgEigenpairs.apply(A, E, V)
    return E, V
