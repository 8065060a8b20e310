"""Small pieces most distributions share."""

from __future__ import annotations

from numbers import Number

import ember

_EMPTY_SHAPE = ember.Size()


def batch_shape_of(params, tensor):
    """The batch shape: () when every parameter was a plain number."""
    return ember.Size() if all(isinstance(p, Number) for p in params) else tensor.size()


def expand_params(self, cls, batch_shape, _instance, names, event_shape=_EMPTY_SHAPE):
    """A copy of ``self`` with the parameters ``names`` expanded to
    batch_shape (+ event_shape), without validating again."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = ember.Size(batch_shape)
    for name in names:
        if name in self.__dict__:
            setattr(new, name, getattr(self, name).expand(batch_shape + event_shape))
    return new, batch_shape


def finish_expand(self, new, cls, batch_shape, event_shape=_EMPTY_SHAPE):
    super(cls, new).__init__(batch_shape, event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def check(self, value):
    if self._validate_args:
        self._validate_sample(value)


def _empty_like_param(param, shape):
    """An uninitialized tensor of ``shape`` with param's dtype and device."""
    return ember.empty(shape, dtype=param.dtype, device=param.device)


def _new(param, *args, **kwargs):
    """Tensor.new: from a shape, or from data."""
    if args and not isinstance(args[0], int) and not isinstance(args[0], (tuple, ember.Size)):
        return ember.tensor(args[0], dtype=param.dtype, device=param.device)
    shape = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    return ember.empty(shape, dtype=param.dtype, device=param.device, **kwargs)


_ONE_OF = "Either `probs` or `logits` must be specified, but not both."


def _expand_probs_or_logits(self, cls, batch_shape, _instance, extra=(), param_shape=None):
    """expand() for distributions parameterized by probs or logits (``_param``
    follows whichever was given)."""
    new, batch_shape = expand_params(self, cls, batch_shape, _instance, extra)
    shape = batch_shape if param_shape is None else param_shape(batch_shape)
    for name in ("probs", "logits"):
        if name in self.__dict__:
            setattr(new, name, getattr(self, name).expand(shape))
            new._param = getattr(new, name)
    return new, batch_shape


def _enumerate_values(values, batch_shape, expand):
    values = values.view((-1,) + (1,) * len(batch_shape))
    return values.expand((-1,) + batch_shape) if expand else values
