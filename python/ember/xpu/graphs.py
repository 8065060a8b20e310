"""XPU graphs: the names exist, capturing needs an XPU device."""

from __future__ import annotations

from typing import Any

from ember._absent_backend import dummy_function, dummy_type

__all__ = ["XPUGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"]

XPUGraph = dummy_type("XPUGraph")
graph_pool_handle = dummy_function("_xpu_graph_pool_handle")
is_current_stream_capturing = dummy_function("_xpu_isCurrentStreamCapturing")


class graph:
    """Context manager capturing XPU work into an XPUGraph."""

    def __init__(self, xpu_graph: Any, pool: Any = None, stream: Any = None, capture_error_mode: str = "global"):
        from ember.xpu.streams import Stream

        self.capture_stream = stream if stream is not None else Stream()


def make_graphed_callables(
    callables: Any, sample_args: Any, num_warmup_iters: int = 3, allow_unused_input: bool = False, pool: Any = None
):
    XPUGraph()
