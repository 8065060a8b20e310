"""Reproduces the polynomial coefficients and tables of the float math in
src/ember/cpu/kernels/VecMath.h and of the vector functions that kernel files
define for their own use (ExpLogKernel.cpp, HyperbolicKernel.cpp; Note
[Vectorised float math]).

Each fit is a weighted minimax (Remez) approximation in mpmath; the
coefficients are then rounded to float32 one at a time, lowest power first,
refitting the remaining ones (Lawson's iteratively reweighted least squares)
after each rounding, and finally nudged by an ulp or two where that lowers the
maximum error. Errors are printed in units of 2^-24 relative to the function.

    python tools/vecmath_fits.py            # all polynomials
    python tools/vecmath_fits.py tables     # also the erf / erfcx tables (slower)

Needs numpy and mpmath (both come with the test requirements).
"""

from __future__ import annotations

import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 60


def _solve(pows, T, w, pts):
    n = len(pows)
    A = mp.matrix(n + 1, n + 1)
    b = mp.matrix(n + 1, 1)
    for j, z in enumerate(pts):
        for i, p in enumerate(pows):
            A[j, i] = z**p
        A[j, n] = (-1) ** j / w(z)
        b[j] = T(z)
    sol = mp.lu_solve(A, b)
    return [sol[i] for i in range(n)], sol[n]


def _evalp(c, pows, z):
    return mp.fsum(ci * z**p for ci, p in zip(c, pows))


def remez(T, w, a, b, pows, iters=40, grid=2000):
    """Minimax coefficients of sum c_i z^pows[i] for T on [a, b] with weight w."""
    a, b = mp.mpf(a), mp.mpf(b)
    n = len(pows)
    pts = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * k / n) for k in range(n + 1)]
    zs = [a + (b - a) * (1 - mp.cos(mp.pi * k / grid)) / 2 for k in range(grid + 1)]
    Tz = [T(z) for z in zs]
    wz = [w(z) for z in zs]
    best = None
    for _ in range(iters):
        c, E = _solve(pows, T, w, pts)
        errs = [(_evalp(c, pows, z) - t) * ww for z, t, ww in zip(zs, Tz, wz)]
        ext, cur = [], 0
        for k in range(1, len(zs)):
            if mp.sign(errs[k]) != mp.sign(errs[cur]) and errs[k] != 0:
                ext.append(max(range(cur, k), key=lambda q: abs(errs[q])))
                cur = k
        ext.append(max(range(cur, len(zs)), key=lambda q: abs(errs[q])))
        refined = []
        for m in ext:
            lo, hi = zs[max(m - 1, 0)], zs[min(m + 1, len(zs) - 1)]
            f = lambda z: -abs((_evalp(c, pows, z) - T(z)) * w(z))  # noqa: B023
            for _ in range(30):
                m1, m2 = lo + (hi - lo) * mp.mpf(0.382), lo + (hi - lo) * mp.mpf(0.618)
                if f(m1) < f(m2):
                    hi = m2
                else:
                    lo = m1
            refined.append((lo + hi) / 2)
        vals = [abs((_evalp(c, pows, z) - T(z)) * w(z)) for z in refined]
        while len(refined) > n + 1:
            if vals[0] < vals[-1]:
                refined.pop(0), vals.pop(0)
            else:
                refined.pop(), vals.pop()
        maxe = max(vals)
        if best is None or maxe < best[1]:
            best = (c, maxe)
        if len(refined) < n + 1:
            break
        pts = refined
        if abs(maxe / abs(E) - 1) < mp.mpf(1e-4):
            break
    return best


def _lawson(V, t, wt, iters=300):
    m = len(t)
    u = np.ones(m) / m
    c = None
    for _ in range(iters):
        sw = np.sqrt(u) * wt
        c, *_ = np.linalg.lstsq(V * sw[:, None], t * sw, rcond=None)
        e = np.abs(wt * (V @ c - t))
        u = u * e
        if u.sum() == 0:
            break
        u /= u.sum()
    return c


def fit(T, w, a, b, pows, grid=3000, f32=True, fixed_first=None):
    """Float (or double) coefficients and their max weighted error."""
    c, _ = remez(T, w, a, b, pows)
    a_, b_ = mp.mpf(a), mp.mpf(b)
    zs = [a_ + (b_ - a_) * (1 - mp.cos(mp.pi * k / grid)) / 2 for k in range(grid + 1)]
    zs += [a_ + (b_ - a_) * k / grid for k in range(grid + 1)]
    z = np.array([float(q) for q in zs])
    t = np.array([float(T(q)) for q in zs])
    wt = np.array([float(w(q)) for q in zs])
    V = np.stack([z**p for p in pows], axis=1)
    cur = np.array([float(x) for x in c])
    rnd = (lambda v: float(np.float32(v))) if f32 else float
    fixed = []
    for k in range(len(pows)):
        fixed.append(fixed_first[k] if fixed_first is not None and k < len(fixed_first) else rnd(cur[k]))
        if k + 1 < len(pows):
            rest = _lawson(V[:, k + 1 :], t - V[:, : k + 1] @ np.array(fixed), wt)
            cur = np.concatenate([np.array(fixed), rest])
    cs = np.array(fixed)
    best = np.max(np.abs(wt * (V @ cs - t)))
    improved = f32
    while improved:
        improved = False
        for k in range(len(pows)):
            if fixed_first is not None and k < len(fixed_first):
                continue
            for d in (-2, -1, 1, 2):
                trial = cs.copy()
                for _ in range(abs(d)):
                    trial[k] = float(np.nextafter(np.float32(trial[k]), np.float32(d * np.inf)))
                err = np.max(np.abs(wt * (V @ trial - t)))
                if err < best * (1 - 1e-9):
                    best, cs, improved = err, trial, True
    return [float(x) for x in cs], best


def show(name, cs, err, f32=True):
    fmt = (lambda v: float.hex(float(v)).replace("0000000p", "p")) if f32 else repr
    print(f"{name}: max error {err * 2**24:.4f} (2^-24)")
    print("   ", ", ".join(fmt(c) for c in cs))


def odd_fit(f, X, deg, series0):
    """f(x) = x + x^3 P(x^2) on [0, X]: P's coefficients, relative weight."""

    def T(z):
        if z < mp.mpf(10) ** -12:
            return series0
        x = mp.sqrt(z)
        return (f(x) - x) / x**3

    def w(z):
        x = mp.sqrt(z)
        return abs(x**3 / f(x)) if x > mp.mpf(10) ** -12 else mp.mpf(10) ** -6

    return fit(T, w, 0, X**2, list(range(deg + 1)), grid=2500)


def polynomials():
    L = mp.log(2)
    show(
        "2^r = 1 + r P(r), |r| <= 1/2",
        *fit(lambda r: mp.expm1(r * L) / r if r != 0 else L, lambda r: 0.5 / mp.power(2, r), -0.5, 0.5, list(range(6))),
    )

    def em1(r):
        return (mp.expm1(r) - r) / r**2 if abs(r) > mp.mpf(10) ** -20 else mp.mpf(1) / 2 + r / 6

    show("expm1_reduced: e^r - 1 = r + r^2 P(r), |r| <= ln2/2",
         *fit(em1, lambda r: mp.mpf(0.35), -L / 2, L / 2, list(range(6))))
    show("expm1: e^r - 1 = r + r^2 P(r), |r| <= ln2",
         *fit(em1, lambda r: abs(r**2 / mp.expm1(r)) + mp.mpf(10) ** -3 if r != 0 else mp.mpf(10) ** -3,
              -L, L, list(range(7))))

    a, b = mp.sqrt(0.5) - 1, mp.sqrt(2) - 1

    def lt(f):
        return (mp.log1p(f) - f + f**2 / 2) / f**3 if abs(f) > mp.mpf(10) ** -15 else mp.mpf(1) / 3 - f / 4

    def lw(f):
        return abs(f**3 / mp.log1p(f)) + mp.mpf(10) ** -3 if f != 0 else mp.mpf(10) ** -3

    show("log1p_tail: log(1 + f) = f - f^2/2 + f^3 P(f)", *fit(lt, lw, a, b, list(range(8))))
    cs, err = fit(lt, lw, a, b, list(range(9)), f32=False)
    show("log_d (double)", cs, err, f32=False)

    show("atan: t + t^3 P(t^2), [0, 1]", *odd_fit(mp.atan, mp.mpf(1), 8, -mp.mpf(1) / 3))
    show("asin: s + s^3 P(s^2), [0, 1/2]", *odd_fit(mp.asin, mp.mpf(0.5), 4, mp.mpf(1) / 6))
    show("tan: r + r^3 P(r^2), [0, pi/4]", *odd_fit(mp.tan, mp.pi / 4, 6, mp.mpf(1) / 3))
    show("sinh: x + x^3 P(x^2), [0, 1]", *odd_fit(mp.sinh, mp.mpf(1), 3, mp.mpf(1) / 6))
    show("asinh: x + x^3 P(x^2), [0, 1/2]", *odd_fit(mp.asinh, mp.mpf(0.5), 4, -mp.mpf(1) / 6))

    def et(z):
        if z < mp.mpf(10) ** -12:
            return 2 / mp.sqrt(mp.pi) - 1
        x = mp.sqrt(z)
        return (mp.erf(x) - x) / x

    show("erf_accurate: x + x Q(x^2), [0, 1/2]",
         *fit(et, lambda z: mp.sqrt(z) / mp.erf(mp.sqrt(z)) if z > 0 else mp.sqrt(mp.pi) / 2, 0, 0.25,
              list(range(5)), grid=2000))


def _piece(T, wt, a, b, d, zero_c0=False):
    if zero_c0:
        cs, err = fit(T, wt, a, b, list(range(d)), grid=500)
        return 0.0, 0.0, cs, err
    cs, _ = fit(T, wt, a, b, list(range(d + 1)), grid=500, f32=False)
    hi = float(np.float32(cs[0]))
    lo = float(np.float32(cs[0] - hi))
    cs, err = fit(T, wt, a, b, list(range(d + 1)), grid=500, fixed_first=[hi + lo])
    return hi, lo, cs[1:], err


def _print_table(name, ints, d, f, pad, odd_first=False):
    rows = [[], [], []] + [[] for _ in range(d)]
    worst = 0
    for lo, hi in ints:
        lo, hi = mp.mpf(lo), mp.mpf(hi)
        c = 0 if lo == 0 else (lo + hi) / 2
        if lo == 0 and odd_first:  # f(x) = x + x Q(x): Q's coefficients, hi = lo = 0
            h, low, cs, err = _piece(lambda v: f(v) / v - 1 if v != 0 else 2 / mp.sqrt(mp.pi) - 1,
                                   lambda v: v / f(v) if v != 0 else mp.sqrt(mp.pi) / 2, 0, hi, d, zero_c0=True)
        else:
            h, low, cs, err = _piece(lambda v: f(c + v), lambda v: 1 / f(c + v), lo - c, hi - c, d)  # noqa: B023
        worst = max(worst, err)
        for r, v in zip(rows, [float(c), h, low] + cs):
            r.append(v)
    print(f"{name} ({len(ints)} intervals, degree {d}): max error {worst * 2**24:.4f} (2^-24)")
    for label, r in zip(["center", "hi", "lo"] + [f"c{j + 1}" for j in range(d)], rows):
        r = r + [r[-1]] * (pad - len(r))
        print(f"  {label}:", ", ".join(float.hex(v) for v in r))


def tables():
    _print_table("kErfTable (intervals 2..15 used)", [(k / 4, (k + 1) / 4) for k in range(16)], 6, mp.erf, 16,
                 odd_first=True)
    erfcx = lambda a: mp.erfc(a) * mp.exp(a * a)  # noqa: E731
    half = [(0, 0.25), (0.25, 0.375), (0.375, 0.5), (0.5, 0.75), (0.75, 1), (1, 1.5), (1.5, 2), (2, 3), (3, 4),
            (4, 6), (6, 8), (8, 12)]
    _print_table("kErfcxTable", half, 8, erfcx, 16)
    quarter, lo = [(0, 0.25)], 0.25
    while lo < 10.125:
        quarter += [(lo * (1 + j / 4), lo * (1 + (j + 1) / 4)) for j in range(4) if lo * (1 + j / 4) < 10.125]
        lo *= 2
    _print_table("kErfcxTable32", quarter, 6, erfcx, 32)


if __name__ == "__main__":
    polynomials()
    if "tables" in sys.argv[1:]:
        tables()
