"""The LogisticNormal distribution."""

from __future__ import annotations

from ember.distributions import constraints
from ember.distributions.normal import Normal
from ember.distributions.transformed_distribution import TransformedDistribution, _subclass_expand
from ember.distributions.transforms import (
    StickBreakingTransform,
)

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """Stick-breaking of a Normal: a distribution over the simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _subclass_expand(self, LogisticNormal, batch_shape, _instance)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
