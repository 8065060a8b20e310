"""Ready-made parametrizations: weight_norm and spectral_norm, as torch.nn.utils.parametrizations."""

from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize
from ember.nn.utils.spectral_norm import _as_matrix, _transposed_conv_classes
from ember.nn.utils.weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """module.<name> = g * v / ||v||, with g and v stored as parametrizations.<name>.original0 / original1."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = _as_matrix(weight, self.dim)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat, n_power_iterations):
        with ember.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ember.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ember.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = _as_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = ember.vdot(u, ember.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """module.<name> divided by its largest singular value, estimated by power iteration while training."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _transposed_conv_classes()) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal ---------------------------------------------------------------------------------

_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _q_with_nonnegative_r(A):
    """The Q of A = QR (A tall, maybe complex) normalized so that diag(R) is real and >= 0."""
    reflectors, tau = ember.geqrf(A)
    Q = ember.linalg.householder_product(reflectors, tau)
    return Q * reflectors.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """Maps an unconstrained matrix (batch) to an orthogonal or unitary one.

    matrix_exp and cayley map the skew-Hermitian part of the lower triangle
    (padded to square) through exp(A) or (I - A/2)^-1 (I + A/2); householder
    reads the strictly lower triangle as reflectors. With the trivialization a
    fixed orthogonal `base` multiplies the map's result on the left, so
    assigning a matrix Q stores Q (made orthogonal) as the base."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        wide = n < k
        if wide:
            X, n, k = X.mT, k, n
        if self.orthogonal_map == "householder":
            reflectors = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (reflectors * reflectors).sum(dim=-2))
            Q = ember.linalg.householder_product(reflectors, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            low = X.tril()
            if n != k:
                low = ember.cat([low, low.new_zeros(n, n - k).expand(*low.shape[:-2], -1, -1)], dim=-1)
            A = low - low.mH
            if self.orthogonal_map == "matrix_exp":
                Q = ember.matrix_exp(A)
            else:
                eye = ember.eye(n, dtype=A.dtype, device=A.device)
                Q = ember.linalg.solve(ember.add(eye, A, alpha=-0.5), ember.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if wide else Q

    def right_inverse(self, Q):
        with ember.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape {Q.shape}."
            )
        given = Q
        n, k = Q.size(-2), Q.size(-1)
        wide = n < k
        if wide:
            Q, n, k = Q.mT, k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley parametrizations when "
                    "use_trivialization=False."
                )
            A, tau = ember.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if wide else A
        if n == k:
            eps = 10.0 * n * ember.finfo(Q.dtype).eps
            eye = ember.eye(k, dtype=Q.dtype, device=Q.device)
            Q = Q.clone() if ember.allclose(Q.mH @ Q, eye, atol=eps) else _q_with_nonnegative_r(Q)
        else:
            fill = ember.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _q_with_nonnegative_r(ember.cat([Q, fill], dim=-1))
        self.base = Q
        # the map sends this to the identity, so the weight starts as base
        minus_eye = ember.zeros_like(given)
        minus_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return minus_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Makes module.<name> (a matrix or a batch of matrices) orthogonal, or unitary when complex,
    through the map "matrix_exp", "cayley" or "householder" (by default matrix_exp for square or
    complex matrices, householder otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(
            f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: {orthogonal_map}'
        )
    layer = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, layer, unsafe=True)
    return module
