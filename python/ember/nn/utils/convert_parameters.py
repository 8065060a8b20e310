"""Parameters as one flat vector and back."""

from __future__ import annotations

import ember
from ember._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    return ember.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        name = ember.typename(vec) if hasattr(ember, "typename") else type(vec).__name__
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
