"""torch.linalg.matrix_exp as PyTorch computes it, forward and backward
(Note [matrix_exp]); ember.linalg checks the input."""

from __future__ import annotations

import builtins
import itertools
import math

import ember
from ember._linalg_autograd import _node_name
from ember.autograd.function import Function

# Note [matrix_exp]
# PyTorch's algorithm, step for step, so the rounding is the same: Taylor
# polynomials of degree 1, 2, 4, 8, 12 or 18 evaluated with the few-product
# schemes of Bader, Blanes and Casas ("Computing the Matrix Exponential with
# an Optimized Taylor Polynomial Approximation", 2019), the degree picked by
# the 1-norm against per-precision bounds; past the last bound the matrix is
# scaled by 2^-s, exponentiated with degree 18 and squared s times. Only a
# single matrix gets a degree of its own: a batch of more than one always
# takes the scaled degree-18 path. The linear combinations of powers
# accumulate from zero, one term at a time, in PyTorch's order (a zero
# coefficient still adds its term), each product rounded before the sum.
# Complex matrices scale their real and imaginary parts by the (real)
# coefficients. Float32 and complex64 keep their constants in single
# precision. The gradient is PyTorch's: the top-right block of the
# exponential of [[A^H, G], [0, A^H]] (of [[A, T], [0, A]] for forward mode).

# norm bounds of degrees 1, 2, 4, 8, 12 and 18
_MEXP_THETAS_SINGLE = (
    1.192092800768788e-07,
    5.978858893805233e-04,
    5.116619363445086e-02,
    5.800524627688768e-01,
    1.461661507209034e00,
    3.010066362817634e00,
)
_MEXP_THETAS_DOUBLE = (
    2.220446049250313e-16,
    2.580956802971767e-08,
    3.397168839976962e-04,
    4.991228871115323e-02,
    2.996158913811580e-01,
    1.090863719290036e00,
)
# degree 12: rows give B0..B3 as combinations of I, A, A^2, A^3
_T12_COEFFS = (
    (9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
    (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989),
    (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230),
    (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359),
)
# degree 18: rows give B0..B4 as combinations of I, A, A^2, A^3, A^6
_T18_COEFFS = (
    (0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.0),
    (
        0.0,
        3.97849749499645077844e-01,
        1.36783778460411720168e00,
        4.98289622525382669416e-01,
        -6.37898194594723280150e-04,
    ),
    (
        -1.09676396052962061844e01,
        1.68015813878906206114e00,
        5.71779846478865511061e-02,
        -6.98210122488052056106e-03,
        3.34975017086070470649e-05,
    ),
    (
        -9.04316832390810593223e-02,
        -6.76404519071381882256e-02,
        6.75961301770459654925e-02,
        2.95552570429315521194e-02,
        -1.39180257516060693404e-05,
    ),
    (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05),
)


def _single(A):  # noqa: N803
    return A.dtype in (ember.float32, ember.complex64)


def _as_single(x):
    """x rounded to float32, as a Python float."""
    return float(ember.tensor(x, dtype=ember.float32))


def _coeffs(A, values):  # noqa: N803
    """The constants in A's precision (PyTorch keeps them in float for float32/complex64)."""
    return [_as_single(v) for v in values] if _single(A) else list(values)


def _lincomb(A, terms, coeffs):  # noqa: N803
    """sum_j coeffs[j] * terms[j], from zero, term by term in order (see Note [matrix_exp])."""
    parts = [ember.view_as_real(t) if t.is_complex() else t for t in terms]
    out = ember.zeros_like(parts[0])
    for c, t in zip(_coeffs(A, coeffs), parts):
        out = out + t * c
    return ember.view_as_complex(out) if A.is_complex() else out


def _eye_batch(A):  # noqa: N803
    n = A.shape[-1]
    return ember.eye(n, dtype=A.dtype, device=A.device).expand(A.shape).contiguous()


def _taylor1(A):  # noqa: N803
    return _eye_batch(A) + A


def _taylor2(A):  # noqa: N803
    return (_eye_batch(A) + A) + ember.bmm(A, A) / 2.0


def _taylor4(A):  # noqa: N803
    eye, A2 = _eye_batch(A), ember.bmm(A, A)
    P = ember.bmm(A2, _lincomb(A, [eye, A, A2], (1 / 2.0, 1 / 6.0, 1 / 24.0)))
    return _lincomb(A, [eye, A, A2, P], (1.0, 1.0, 0.0, 1.0))


def _t8_constants(single):
    """x1..x7 and y2 of the degree-8 scheme, computed as PyTorch's constexprs are."""
    r = _as_single if single else float
    sqrt_177, x3 = r(0.1330413469565007072504e2), r(2.0 / 3.0)
    x1 = r(x3 * ((1.0 + sqrt_177) / 88.0))
    x2 = r(x3 * ((1.0 + sqrt_177) / 352.0))
    x4 = r((-271.0 + 29.0 * sqrt_177) / (315.0 * x3))
    x5 = r((-11.0 + 11.0 * sqrt_177) / (1260.0 * x3))
    x6 = r((-99.0 + 11.0 * sqrt_177) / (5040.0 * x3))
    x7 = r((89.0 - sqrt_177) / (5040.0 * x3))
    y2 = r((857.0 - 58.0 * sqrt_177) / 630.0)
    return x1, x2, x3, x4, x5, x6, x7, y2


def _taylor8(A):  # noqa: N803
    x1, x2, x3, x4, x5, x6, x7, y2 = _t8_constants(_single(A))
    eye, A2 = _eye_batch(A), ember.bmm(A, A)
    A4 = ember.bmm(A2, _lincomb(A, [A, A2], (x1, x2)))
    A8 = ember.bmm(_lincomb(A, [A2, A4], (x3, 1.0)), _lincomb(A, [eye, A, A2, A4], (x4, x5, x6, x7)))
    return _lincomb(A, [eye, A, A2, A4, A8], (1.0, 1.0, y2, 0.0, 1.0))


def _powers(A, count):  # noqa: N803
    """The first `count` of I, A, A^2, A^3, A^6."""
    out = [_eye_batch(A), A, ember.bmm(A, A)]
    out.append(ember.bmm(A, out[2]))
    out.append(ember.bmm(out[3], out[3]))
    return out[:count]


def _taylor12(A):  # noqa: N803
    P = _powers(A, 4)
    B = [_lincomb(A, P, row) for row in _T12_COEFFS]
    B2 = B[2] + ember.bmm(B[3], B[3])
    return B[0] + ember.bmm(B[1] + B2, B2)


def _taylor18(A):  # noqa: N803
    P = _powers(A, 5)
    B = [_lincomb(A, P, row) for row in _T18_COEFFS]
    B3 = B[3] + ember.bmm(B[0], B[4])
    return B[1] + ember.bmm(B[2] + B3, B3)


def _taylor18_scaled(A, norm, theta):  # noqa: N803
    """Degree 18 of A / 2^s, squared s times, s = max(0, ceil(log2(norm / theta))) per
    matrix. As PyTorch does, the matrices are sorted by s and squared together, each
    group of equal s left behind once it has had its squarings."""
    s = ember.ceil(ember.log2(norm / theta)).clamp(min=0)
    T = _taylor18((A * ember.pow(2, -s).view(-1, 1, 1)).contiguous())
    # a non-finite s (an infinite or NaN norm) sorts last and is not squared
    counts = [int(v) if math.isfinite(v) else None for v in s.tolist()]
    order = sorted(builtins.range(len(counts)), key=lambda i: (counts[i] is None, counts[i] or 0))
    acc = T.index_select(0, _indices(order, A))
    pieces, done = [], 0
    for count, group in itertools.groupby(order, key=lambda i: counts[i]):
        for _ in builtins.range((count or 0) - done):
            acc = ember.bmm(acc, acc)
        done, size = count or 0, len(list(group))
        pieces.append(acc[:size])
        acc = acc[size:]
    position = {i: p for p, i in enumerate(order)}
    return ember.cat(pieces).index_select(0, _indices([position[i] for i in builtins.range(len(order))], A))


def _indices(values, A):  # noqa: N803
    return ember.tensor(values, dtype=ember.int64, device=A.device)


_TAYLOR = (_taylor1, _taylor2, _taylor4, _taylor8, _taylor12)


def _mexp(A):  # noqa: N803
    n = A.shape[-1]
    if n == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    a = A.view(-1, n, n)
    if a.shape[0] == 0:
        return ember.empty(A.shape, dtype=A.dtype, device=A.device)
    thetas = _coeffs(A, _MEXP_THETAS_SINGLE if _single(A) else _MEXP_THETAS_DOUBLE)
    norm = a.abs().sum(-2).amax(-1)
    if a.shape[0] > 1:
        return _taylor18_scaled(a, norm, thetas[5]).view(A.shape)
    value = float(norm)
    if value >= thetas[4]:
        out = _taylor18_scaled(a, norm, thetas[5])
    else:
        degree = next((i for i, t in enumerate(thetas[:5]) if value <= t), None)
        if degree is None:  # NaN norm
            return ember.full(A.shape, math.nan, dtype=A.dtype, device=A.device)
        out = _TAYLOR[degree](a.contiguous())
    return out.view(A.shape)


def _mexp_differential(A, G, adjoint):  # noqa: N803
    """The Frechet derivative of exp at A in direction G (its adjoint when
    `adjoint`): the top-right block of exp([[A', G], [0, A']]), A' = A or A^H."""
    n = A.shape[-1]
    X = A.mH if adjoint else A
    M = ember.cat([ember.cat([X, G], -1), ember.cat([ember.zeros_like(X), X], -1)], -2)
    return matrix_exp(M)[..., :n, n:]


class MatrixExp(Function):
    """e^A, recorded as PyTorch's LinalgMatrixExpBackward0; its derivatives are
    exponentials too, so it can be differentiated again."""

    @staticmethod
    def forward(ctx, A):  # noqa: N803
        ctx.save_for_backward(A)
        ctx.save_for_forward(A)
        return _mexp(A)

    @staticmethod
    def backward(ctx, g):
        (A,) = ctx.saved_tensors
        return _mexp_differential(A, g, adjoint=True)

    @staticmethod
    def jvp(ctx, t):
        (A,) = ctx.saved_tensors
        return _mexp_differential(A, t, adjoint=False)


_node_name(MatrixExp, "LinalgMatrixExpBackward0")


def matrix_exp(A):  # noqa: N803
    """e^A of a float32/float64/complex64/complex128 batch of square matrices."""
    if (ember.is_grad_enabled() and A.requires_grad) or ember.autograd.forward_ad._is_dual(A):
        return MatrixExp.apply(A)
    return _mexp(A)
