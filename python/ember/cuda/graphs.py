"""ember.cuda.graphs: CUDA graph capture and replay. Ember's CUDA backend
captures no graphs yet: without CUDA these raise as PyTorch's CPU build does,
and a CUDA build initialises CUDA first (raising without a device)."""

from __future__ import annotations

import gc  # noqa: F401 - part of the namespace, as in PyTorch
from collections.abc import Callable  # noqa: F401

import ember
from ember import Tensor
from ember.cuda._utils import _cuda, _is_compiled

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph", "make_graphed_callables"]


def _dummy_instantiation(name: str):
    raise RuntimeError(f"Tried to instantiate dummy base class {name}")


def is_current_stream_capturing() -> bool:
    """True while a graph capture runs on the current stream; False, without
    initialising CUDA, where no device is in use."""
    if not _is_compiled():
        _dummy_instantiation("_cuda_isCurrentStreamCapturing")
    if not ember.cuda.is_initialized():
        return False
    return _cuda._cuda_isCurrentStreamCapturing()


def graph_pool_handle():
    if not _is_compiled():
        _dummy_instantiation("_graph_pool_handle")
    return _cuda._graph_pool_handle()


class CUDAGraph:
    """A captured sequence of CUDA work that can be replayed."""

    def __new__(cls, keep_graph: bool = False):
        if not _is_compiled():
            _dummy_instantiation(cls.__name__)
        return _cuda._CUDAGraph(keep_graph)


class graph:
    """Context manager that captures the CUDA work inside it into `cuda_graph`."""

    default_capture_stream: ember.cuda.Stream | None = None

    def __init__(
        self,
        cuda_graph: CUDAGraph,
        pool=None,
        stream: ember.cuda.Stream | None = None,
        capture_error_mode: str = "global",
        enable_annotations: bool = False,
        check_input_liveness: bool = False,
    ):
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = ember.cuda.Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else self.__class__.default_capture_stream
        if self.capture_stream is None:
            raise AssertionError("capture_stream must not be None")
        self.stream_ctx = ember.cuda.stream(self.capture_stream)
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode
        self._enable_annotations = enable_annotations
        self.check_input_liveness = check_input_liveness

    def __enter__(self) -> None:
        ember.cuda.synchronize()
        ember.cuda.empty_cache()
        self.stream_ctx.__enter__()
        self.cuda_graph.capture_begin(
            *self.pool, capture_error_mode=self.capture_error_mode, check_input_liveness=self.check_input_liveness
        )

    def __exit__(self, *args: object) -> None:
        self.cuda_graph.capture_end()
        self.stream_ctx.__exit__(*args)


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3, allow_unused_input: bool = False,
                           pool=None):  # fmt: skip
    """Graphed versions of modules or functions: forward and backward each
    captured once and replayed on later calls."""
    if ember.is_autocast_enabled() and ember.is_autocast_cache_enabled():
        raise RuntimeError(
            "make_graphed_callables does not support the autocast caching. Please set `cache_enabled=False`."
        )
    if not isinstance(callables, tuple):
        callables = (callables,)
        sample_args = (sample_args,)
    for function, args in zip(callables, sample_args):
        if isinstance(function, ember.nn.Module):
            if function._backward_hooks or function._forward_hooks or function._forward_pre_hooks:
                raise AssertionError(
                    "Modules must not have hooks registered at the time they are passed. However, registering "
                    "hooks on modules after passing them through make_graphed_callables is allowed."
                )
            if not all(buffer.requires_grad is False for buffer in function.buffers()):
                raise AssertionError(
                    "In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`, only parameters "
                    "may be trainable. All buffers must have ``requires_grad=False``."
                )
        if not all(isinstance(arg, Tensor) for arg in _leaves(args)):
            raise AssertionError(
                "In the beta API, sample_args for each callable must contain only Tensors. Other types are not allowed."
            )
    forward_graphs = [CUDAGraph() for _ in callables]
    backward_graphs = [CUDAGraph() for _ in callables]
    del forward_graphs, backward_graphs
    raise RuntimeError("ember's CUDA backend does not capture graphs yet")
