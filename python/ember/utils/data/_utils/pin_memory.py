"""Copies a batch into page-locked host memory (DataLoader(pin_memory=True)),
through tensors nested in mappings, sequences and named tuples, or any
object with a pin_memory() method."""

from __future__ import annotations

import collections.abc

import ember


def _rebuild(original, items):
    """The container's own type around the pinned items, where it can be built from them."""
    try:
        return type(original)(items)
    except TypeError:
        return items


def pin_memory(data, device=None):
    if isinstance(data, ember.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v, device) for k, v in data.items()}
        return pinned if type(data) is dict else _rebuild(data, pinned)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(pin_memory(sample, device) for sample in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(sample, device) for sample in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [pin_memory(sample, device) for sample in data]
        return pinned if type(data) is list else _rebuild(data, pinned)
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
