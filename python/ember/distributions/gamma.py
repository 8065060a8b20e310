"""The Gamma distribution."""

from __future__ import annotations

import ember
from ember.distributions import _linalg, constraints
from ember.distributions._common import (
    _EMPTY_SHAPE,
    batch_shape_of,
    check,
    expand_params,
    finish_expand,
)
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all

__all__ = ["Gamma"]


def _standard_gamma(concentration):
    return ember._standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and rate ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(batch_shape_of((concentration, rate), self.concentration), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = expand_params(self, Gamma, batch_shape, _instance, ("concentration", "rate"))
        return finish_expand(self, new, Gamma, batch_shape)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=ember.finfo(value.dtype).tiny)  # outside the graph
        return value

    def log_prob(self, value):
        value = ember.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        check(self, value)
        return (
            ember.xlogy(self.concentration, self.rate)
            + ember.xlogy(self.concentration - 1, value)
            - self.rate * value
            - ember.lgamma(self.concentration)
        )

    def entropy(self):
        c = self.concentration
        return c - ember.log(self.rate) + ember.lgamma(c) + (1.0 - c) * ember.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x + 1) + (x + 1) * ember.log(-y.reciprocal())

    def cdf(self, value):
        check(self, value)
        return _linalg.gammainc(self.concentration, self.rate * value)
