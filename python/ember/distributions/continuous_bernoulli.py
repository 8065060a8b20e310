"""The ContinuousBernoulli distribution."""

from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions._common import _EMPTY_SHAPE, _new, batch_shape_of, check, expand_params, finish_expand
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits
from ember.nn.functional import binary_cross_entropy_with_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1]."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        given = probs if probs is not None else logits
        self._lims = lims
        super().__init__(batch_shape_of((given,), self._param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = expand_params(self, ContinuousBernoulli, batch_shape, _instance, ())
        new._lims = self._lims
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
                new._param = getattr(new, name)
        return finish_expand(self, new, ContinuousBernoulli, batch_shape)

    def _new(self, *args, **kwargs):
        return _new(self._param, *args, **kwargs)

    def _outside_unstable_region(self):
        return ember.le(self.probs, self._lims[0]) | ember.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        return ember.where(self._outside_unstable_region(), self.probs, self._lims[0] * ember.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        # log of the normalizing constant, with a Taylor expansion near 1/2
        cut = self._cut_probs()
        below = ember.where(ember.le(cut, 0.5), cut, ember.zeros_like(cut))
        above = ember.where(ember.ge(cut, 0.5), cut, ember.ones_like(cut))
        log_norm = ember.log(ember.abs(ember.log1p(-cut) - ember.log(cut))) - ember.where(
            ember.le(cut, 0.5), ember.log1p(-2.0 * below), ember.log(2.0 * above - 1.0)
        )
        x = ember.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (ember.log1p(-cut) - ember.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * ember.pow(x, 2)) * x
        return ember.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return ember.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / ember.pow(1.0 - 2.0 * cut, 2) + 1.0 / ember.pow(
            ember.log1p(-cut) - ember.log(cut), 2
        )
        x = ember.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with ember.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        check(self, value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        check(self, value)
        cut = self._cut_probs()
        cdfs = (ember.pow(cut, value) * ember.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = ember.where(self._outside_unstable_region(), cdfs, value)
        return ember.where(
            ember.le(value, 0.0),
            ember.zeros_like(value),
            ember.where(ember.ge(value, 1.0), ember.ones_like(value), unbounded),
        )

    def icdf(self, value):
        cut = self._cut_probs()
        return ember.where(
            self._outside_unstable_region(),
            (ember.log1p(-cut + value * (2.0 * cut - 1.0)) - ember.log1p(-cut)) / (ember.log(cut) - ember.log1p(-cut)),
            value,
        )

    def entropy(self):
        log_probs0 = ember.log1p(-self.probs)
        log_probs1 = ember.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = ember.le(x, self._lims[0] - 0.5) | ember.gt(x, self._lims[1] - 0.5)
        cut = ember.where(outside, x, (self._lims[0] - 0.5) * ember.ones_like(x))
        log_norm = ember.log(ember.abs(ember.expm1(cut))) - ember.log(ember.abs(cut))
        taylor = 0.5 * x + ember.pow(x, 2) / 24.0 - ember.pow(x, 4) / 2880.0
        return ember.where(outside, log_norm, taylor)
