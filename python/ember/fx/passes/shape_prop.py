"""ShapeProp: run a GraphModule and record each node's tensor metadata."""

from __future__ import annotations

from typing import Any, NamedTuple

import ember

from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: ember.Size
    dtype: ember.dtype
    requires_grad: bool
    stride: tuple
    memory_format: ember.memory_format | None
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result: ember.Tensor, include_contiguity: bool = True) -> TensorMetadata:
    memory_format = None
    if include_contiguity:
        for fmt in (ember.contiguous_format, ember.channels_last, ember.channels_last_3d):
            if result.is_contiguous(memory_format=fmt):
                memory_format = fmt
                break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format, False, {})


class ShapeProp(Interpreter):
    """Executes the graph on example inputs; each node gets ``meta['tensor_meta']``
    (shape, dtype, stride, ...) and ``meta['type']``."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = [False]

        def extract(obj):
            if isinstance(obj, ember.Tensor):
                found[0] = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return super().run(*args)
