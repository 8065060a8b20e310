"""The few linear-algebra routines the distributions need, on small matrices.

Each uses ember.linalg's routine when the build has one; otherwise it is
written with elementwise operators (so autograd flows through it), which is
fast enough for the event sizes distributions have.
"""

from __future__ import annotations

import ember


def _native(name):
    return getattr(ember.linalg, name, None)


def diag_embed(v):
    """Square matrices with v on the diagonal."""
    fn = getattr(ember, "diag_embed", None)
    if fn is not None:
        return fn(v)
    n = v.shape[-1]
    out = v.new_zeros(v.shape + (n,))
    out.diagonal(dim1=-2, dim2=-1).copy_(v)
    return out


def _cholesky_entries(a):
    # Both triangles take part, so the gradient comes out symmetric.
    a = (a + a.mT) / 2
    n = a.shape[-1]
    entries = [[None] * n for _ in range(n)]
    pivots = []
    for j in range(n):
        s = a[..., j, j]
        for k in range(j):
            s = s - entries[j][k] * entries[j][k]
        pivots.append(s)
        entries[j][j] = s.sqrt()
        for i in range(j + 1, n):
            t = a[..., i, j]
            for k in range(j):
                t = t - entries[i][k] * entries[j][k]
            entries[i][j] = t / entries[j][j]
    zero = ember.zeros_like(a[..., 0, 0])
    rows = [ember.stack([entries[i][j] if j <= i else zero for j in range(n)], -1) for i in range(n)]
    return ember.stack(rows, -2), pivots


def cholesky(a):
    fn = _native("cholesky")
    if fn is not None:
        return fn(a)
    return _cholesky_entries(a)[0]


def cholesky_ex(a):
    """(L, info): info is 0, or the 1-based order of the first minor that is
    not positive definite."""
    fn = _native("cholesky_ex")
    if fn is not None:
        return tuple(fn(a))
    with ember.no_grad():
        lower, pivots = _cholesky_entries(a)
        info = ember.zeros(a.shape[:-2], dtype=ember.int32)
        for j in reversed(range(len(pivots))):
            bad = ~(pivots[j] > 0)
            info = ember.where(bad, ember.full_like(info, j + 1), info)
    return lower, info


def solve_triangular(a, b, *, upper, left=True):
    """X with a @ X = b for triangular a (left=True only in the fallback)."""
    fn = _native("solve_triangular")
    if fn is not None:
        return fn(a, b, upper=upper, left=left)
    if not left:
        return solve_triangular(a.mT, b.mT, upper=not upper).mT
    n = a.shape[-1]
    xs = [None] * n
    for i in reversed(range(n)) if upper else range(n):
        s = b[..., i, :]
        for k in range(i + 1, n) if upper else range(i):
            s = s - a[..., i, k : k + 1] * xs[k]
        xs[i] = s / a[..., i, i : i + 1]
    return ember.stack(xs, -2)


def cholesky_inverse(lower):
    """(L L^T)^-1 from the lower Cholesky factor L."""
    fn = getattr(ember, "cholesky_inverse", None)
    if fn is not None:
        return fn(lower)
    eye = ember.eye(lower.shape[-1], dtype=lower.dtype, device=lower.device)
    inv = solve_triangular(lower, eye.expand(lower.shape), upper=False)
    return inv.mT @ inv


def eigvalsh(a):
    fn = _native("eigvalsh")
    if fn is not None:
        return fn(a)
    import numpy

    values = numpy.linalg.eigvalsh(a.detach().numpy())
    return ember.from_numpy(values.copy())


def cholesky_solve(b, lower):
    """X with (L L^T) X = b."""
    fn = getattr(ember, "cholesky_solve", None)
    if fn is not None:
        return fn(b, lower)
    y = solve_triangular(lower, b, upper=False)
    return solve_triangular(lower.mT, y, upper=True)


def logabsdet_pd(a):
    """log|det a| for symmetric positive definite a."""
    fn = _native("slogdet")
    if fn is not None:
        return fn(a).logabsdet
    return 2 * cholesky(a).diagonal(dim1=-2, dim2=-1).log().sum(-1)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x): ember.special's
    when the build has it, else a series (x < a + 1) and a continued fraction
    (Lentz) evaluated in float64."""
    fn = getattr(ember.special, "gammainc", None)
    if fn is not None:
        return fn(a, x)
    a, x = ember.broadcast_tensors(a, x)
    dtype = ember.promote_types(a.dtype, x.dtype)
    a64, x64 = a.to(ember.float64), x.to(ember.float64)
    safe_x = x64.clamp(min=1e-300)
    log_prefix = -x64 + a64 * safe_x.log() - ember.lgamma(a64)
    # series for P
    term = 1.0 / a64
    total = term
    for n in range(1, 300):
        term = term * x64 / (a64 + n)
        total = total + term
    series = total * log_prefix.exp()
    # continued fraction for Q = 1 - P
    tiny = 1e-300
    b = x64 + 1.0 - a64
    c = ember.full_like(x64, 1.0 / tiny)
    d = 1.0 / ember.where(b.abs() < tiny, ember.full_like(b, tiny), b)
    h = d
    for i in range(1, 300):
        an = -i * (i - a64)
        b = b + 2.0
        d = an * d + b
        d = ember.where(d.abs() < tiny, ember.full_like(d, tiny), d)
        c = b + an / c
        c = ember.where(c.abs() < tiny, ember.full_like(c, tiny), c)
        d = 1.0 / d
        h = h * d * c
    fraction = 1.0 - log_prefix.exp() * h
    result = ember.where(x64 < a64 + 1.0, series, fraction)
    result = ember.where(x64 <= 0, ember.zeros_like(result), result)
    return result.to(dtype)
