"""ember.cuda.nccl: NCCL collectives between the CUDA devices of one
process. Ember has no NCCL binding in this module: each collective fails as
in a build without NCCL."""

from __future__ import annotations

import collections
import warnings
from collections.abc import Sequence

import ember
from ember import _C

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"]

SUM = 0  # ncclRedOp_t


def is_available(tensors) -> bool:
    if not hasattr(_C, "_nccl_all_reduce"):
        warnings.warn("PyTorch is not compiled with NCCL support", stacklevel=2)
        return False
    devices = set()
    for tensor in tensors:
        if tensor.is_sparse or not tensor.is_contiguous() or not tensor.is_cuda:
            return False
        if tensor.get_device() in devices:
            return False
        devices.add(tensor.get_device())
    return True


def version():
    packed = _C._nccl_version()
    numbers = (packed >> 32, (packed >> 16) & 65535, packed & 65535)
    suffix = _C._nccl_version_suffix().decode("utf-8")
    return numbers if suffix == "" else (*numbers, suffix)


def unique_id():
    return _C._nccl_unique_id()


def init_rank(num_ranks, uid, rank):
    return _C._nccl_init_rank(num_ranks, uid, rank)


def _check_sequence_type(inputs) -> None:
    if not isinstance(inputs, collections.abc.Container) or isinstance(inputs, ember.Tensor):
        raise TypeError("Inputs should be a collection of tensors")


def all_reduce(inputs, outputs=None, op=SUM, streams=None, comms=None):
    _check_sequence_type(inputs)
    if outputs is None:
        outputs = inputs
    _check_sequence_type(outputs)
    _C._nccl_all_reduce(inputs, outputs, op, streams, comms)


def reduce(inputs: Sequence, output=None, root: int = 0, op: int = SUM, streams=None, comms=None, *, outputs=None):
    _check_sequence_type(inputs)
    if outputs is not None:
        if output is not None:
            raise ValueError(
                "'output' and 'outputs' can not be both specified. 'outputs' is deprecated in "
                "favor of 'output', taking in a single output tensor. The signature of reduce is: "
                "reduce(inputs, output=None, root=0, op=SUM, streams=None, comms=None)."
            )
        warnings.warn(
            "`nccl.reduce` with an output tensor list is deprecated. "
            "Please specify a single output tensor with argument 'output' instead.",
            FutureWarning,
            stacklevel=2,
        )
        target = outputs[root]
    elif not isinstance(output, ember.Tensor) and isinstance(output, collections.abc.Sequence):
        warnings.warn(
            "nccl.reduce with an output tensor list is deprecated. Please specify a single output tensor.",
            FutureWarning,
            stacklevel=2,
        )
        target = output[root]
    else:
        target = inputs[root] if output is None else output
    _C._nccl_reduce(inputs, target, root, op, streams, comms)


def broadcast(inputs: Sequence, root: int = 0, streams=None, comms=None) -> None:
    _check_sequence_type(inputs)
    _C._nccl_broadcast(inputs, root, streams, comms)


def all_gather(inputs: Sequence, outputs: Sequence, streams=None, comms=None) -> None:
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    _C._nccl_all_gather(inputs, outputs, streams, comms)


def reduce_scatter(inputs: Sequence, outputs: Sequence, op: int = SUM, streams=None, comms=None) -> None:
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    _C._nccl_reduce_scatter(inputs, outputs, op, streams, comms)
