"""Randomized low-rank SVD and PCA (torch.svd_lowrank, torch.pca_lowrank):
Halko, Martinsson and Tropp (2009), algorithms 4.4 (a range basis by subspace
iteration) and 5.1 (the SVD of the small projected matrix)."""

from __future__ import annotations

import ember

__all__ = ["pca_lowrank", "svd_lowrank"]


def _floating_dtype(A):
    return A.dtype if A.dtype in (ember.float16, ember.float32, ember.float64) else ember.float32


def _range_basis(A, q, niter, M):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M,
    without forming A - M."""
    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() else _floating_dtype(A)

    def project(X, R):  # (X - M) @ R
        out = ember.matmul(X, R)
        return out if M is None else out - ember.matmul(M if X is A else M.mH, R)

    Q = ember.linalg.qr(project(A, ember.randn(A.shape[-1], q, dtype=dtype, device=A.device))).Q
    for _ in range(niter):
        Q = ember.linalg.qr(project(A.mH, Q)).Q
        Q = ember.linalg.qr(project(A, Q)).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    wide = m < n
    if wide:  # work on the tall transpose
        A = A.mH
        M = None if M is None else M.mH
    Q = _range_basis(A, q, niter, M)
    B = ember.matmul(Q.mH, A)
    if M is not None:
        B = B - ember.matmul(Q.mH, M)
    U, S, Vh = ember.linalg.svd(B, full_matrices=False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M approximately U diag(S) V^H, of rank q."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """The principal components of the rows of A: (U, S, V) of the centred A."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter)
