"""The GeneralizedPareto distribution."""

from __future__ import annotations

import math
from numbers import Real

import ember
from ember.distributions import constraints
from ember.distributions._common import _EMPTY_SHAPE, batch_shape_of, check, expand_params, finish_expand
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(batch_shape_of((loc, scale, concentration), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = expand_params(
            self, GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration")
        )
        return finish_expand(self, new, GeneralizedPareto, batch_shape)

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        return self.icdf(ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe_concentration(self):
        eq_zero = ember.isclose(self.concentration, ember.tensor(0.0))
        return eq_zero, ember.where(eq_zero, ember.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        check(self, value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + ember.ones_like(z)
        nonzero = ember.where(y == 0, y, y * ember.log1p(safe * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - ember.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        check(self, value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration()
        return ember.where(eq_zero, -z, -ember.log1p(safe * z) / safe)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        c = self.concentration
        eq_zero = ember.isclose(c, ember.zeros_like(c))
        safe = ember.where(eq_zero, ember.ones_like(c), c)
        logu = ember.log1p(-value)
        nonzero = self.loc + self.scale / safe * ember.expm1(-safe * logu)
        return ember.where(eq_zero, self.loc - self.scale * logu, nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = ember.where(valid, self.concentration, 0.5)
        return ember.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = ember.where(valid, self.concentration, 0.25)
        return ember.where(valid, self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self):
        return ember.broadcast_to(ember.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ember.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
