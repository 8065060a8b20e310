"""The LKJCholesky distribution."""

from __future__ import annotations

import math

import ember
from ember.distributions import _linalg, constraints
from ember.distributions._common import _EMPTY_SHAPE, check, finish_expand
from ember.distributions.beta import Beta
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over Cholesky factors of correlation matrices."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        # Beta parameters of the onion method, one per row
        offset = ember.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), ember.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        return finish_expand(self, new, LKJCholesky, batch_shape, self.event_shape)

    def sample(self, sample_shape=_EMPTY_SHAPE):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u = u / u.norm(dim=-1, keepdim=True)
        u[..., 0, :].fill_(0.0)  # the first row is all zeros
        w = ember.sqrt(y) * u
        eps = ember.finfo(w.dtype).tiny
        diag = ember.clamp(1 - ember.sum(w**2, dim=-1), min=eps).sqrt()
        w += _linalg.diag_embed(diag)
        return w

    def log_prob(self, value):
        check(self, value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = ember.sum(order * diag.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + ember.mvlgamma(alpha - 0.5, dm1) - ember.lgamma(alpha) * dm1
        return unnormalized - normalize
