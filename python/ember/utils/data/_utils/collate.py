"""default_collate and default_convert: samples -> batches, with PyTorch's
type rules (Python floats -> float64 tensors, ints -> int64, NumPy arrays and
scalars -> tensors of their dtype, containers collated element-wise)."""

from __future__ import annotations

import collections.abc
import copy
import re
import sys

import ember
from ember import _C

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_numpy_type(t):
    return t.__module__ == "numpy"


def default_convert(data):
    """NumPy arrays (also inside containers) to tensors; everything else as is.
    The collate function of a DataLoader without automatic batching."""
    elem_type = type(data)
    if isinstance(data, ember.Tensor):
        return data
    if _is_numpy_type(elem_type) and elem_type.__name__ not in ("str_", "string_"):
        if (
            elem_type.__name__ == "ndarray"
            and np_str_obj_array_pattern.search(data.dtype.str) is not None
        ):
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collates a list of samples: a function from collate_fn_map handles the
    element type (exact type first, then isinstance in insertion order);
    mappings, named tuples and sequences are collated field by field."""
    elem = batch[0]
    elem_type = type(elem)
    if not _numpy_entries_added and "numpy" in sys.modules:
        _add_numpy_entries()
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(
                    {
                        key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                        for key in elem
                    }
                )
                return clone
            return elem_type(
                {
                    key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem
                }
            )
        except TypeError:
            return {
                key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem
            }
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(
            *(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch))
        )
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type(
                [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
            )
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    out = None
    from .worker import get_worker_info

    if get_worker_info() is not None and elem.device.type == "cpu":
        # In a worker the batch is built straight into shared memory, so that
        # sending it to the main process copies nothing (see _utils/shared.py).
        shape = (len(batch), *elem.shape)
        numel = 1
        for s in shape:
            numel *= s
        base, _fd = _C._shm_new(numel * elem.dtype.itemsize)
        strides = []
        step = 1
        for s in reversed(shape):
            strides.append(step)
            step *= s
        out = _C._tensor_on_storage(base, elem.dtype, 0, shape, tuple(reversed(strides)))
        return ember.stack(batch, 0, out=out)
    return ember.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([ember.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return ember.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch, dtype=ember.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {ember.Tensor: collate_tensor_fn}
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn
_numpy_entries_added = False


def _add_numpy_entries():
    """The NumPy entries of default_collate_fn_map, right after Tensor's as in
    PyTorch (np.float64 is a float, so the order matters). Added on the first
    collate after NumPy is imported, so `import ember` does not import NumPy."""
    global _numpy_entries_added
    import numpy as np

    _numpy_entries_added = True
    rest = [(k, v) for k, v in default_collate_fn_map.items() if k is not ember.Tensor]
    for k, _ in rest:
        del default_collate_fn_map[k]
    default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
    default_collate_fn_map.update(rest)


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors along a new first
    dimension, numbers into tensors (float -> float64, int -> int64, bool ->
    bool), NumPy arrays and scalars into tensors, strings into lists, and
    dicts, named tuples, tuples and lists element-wise (tuples become lists)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
