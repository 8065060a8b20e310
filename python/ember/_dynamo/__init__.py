"""ember._dynamo: the parts of torch._dynamo that programs touch around
ember.compile (its config, reset, list_backends, OptimizedModule)."""

from ember._dynamo import config, eval_frame, exc
from ember._dynamo.eval_frame import OptimizedModule
from ember.compiler import allow_in_graph, assume_constant_result, disable, is_compiling, list_backends, reset

__all__ = [
    "OptimizedModule",
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "disallow_in_graph",
    "eval_frame",
    "exc",
    "graph_break",
    "is_compiling",
    "is_dynamo_supported",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
    "run",
]


def graph_break():
    """Marks where a compiled graph would end; eager code runs on."""


def disallow_in_graph(fn):
    return fn


def run(fn=None):
    return fn


def is_dynamo_supported() -> bool:
    return True


def _mark(attribute):
    def mark(t, index, *args, **kwargs):
        # What the compiler would read: the dimensions are recorded on the tensor.
        indices = index if isinstance(index, (list, tuple)) else [index]
        if not hasattr(t, attribute):
            setattr(t, attribute, set())
        getattr(t, attribute).update(indices)

    return mark


mark_dynamic = _mark("_dynamo_dynamic_indices")
mark_static = _mark("_dynamo_static_indices")
maybe_mark_dynamic = _mark("_dynamo_weak_dynamic_indices")


def optimize(
    backend="inductor",
    *,
    nopython=False,
    guard_export_fn=None,
    guard_fail_fn=None,
    disable=False,
    dynamic=None,
    **kwargs,
):
    """The older spelling of ember.compile as a decorator."""
    import ember

    def decorate(fn):
        return fn if disable else ember.compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic)

    return decorate
