"""The Kumaraswamy distribution."""

from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions.transformed_distribution import TransformedDistribution, _subclass_expand
from ember.distributions.transforms import (
    AffineTransform,
    PowerTransform,
)
from ember.distributions.uniform import Uniform
from ember.distributions.utils import (
    broadcast_all,
    euler_constant,
)

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    # E[X^n] of Kumaraswamy(a, b)
    arg1 = 1 + n / a
    return b * ember.exp(ember.lgamma(arg1) + ember.lgamma(b) - ember.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on the unit interval."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(
            ember.full_like(self.concentration0, 0),
            ember.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _subclass_expand(
            self, Kumaraswamy, ember.Size(batch_shape), _instance, ("concentration1", "concentration0")
        )

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode[(b < 1) | (a < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - ember.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = ember.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - ember.log(self.concentration1) - ember.log(self.concentration0)
