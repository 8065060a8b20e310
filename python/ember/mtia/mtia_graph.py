"""MTIA graphs: capturing needs the backend."""

from __future__ import annotations

from typing import Any

import ember
from ember.mtia._common import no_backend

__all__ = ["MTIAGraph", "graph", "graph_pool_handle"]


def graph_pool_handle():
    no_backend("graphPoolHandle")


class MTIAGraph:
    """A captured sequence of MTIA work."""

    def __new__(cls, keep_graph: bool = False):
        no_backend("mtiagraphCreate")


class graph:
    """Context manager capturing MTIA work into an MTIAGraph."""

    default_capture_stream: Any = None

    def __init__(self, mtia_graph: MTIAGraph, pool: Any = None, stream: Any = None):
        if type(self).default_capture_stream is None:
            type(self).default_capture_stream = ember.mtia.current_stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else type(self).default_capture_stream
        self.stream_ctx = ember.mtia.stream(self.capture_stream)
        self.mtia_graph = mtia_graph
