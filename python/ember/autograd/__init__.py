"""ember.autograd: reverse-mode automatic differentiation."""

from __future__ import annotations

from ember import _C
from ember.autograd import (  # noqa: F401
    anomaly_mode,
    forward_ad,
    function,
    functional,
    graph,
    profiler,
    profiler_util,
)
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from ember.autograd.function import Function, NestedIOFunction
from ember.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401

__all__ = [
    "Function",
    "NestedIOFunction",
    "backward",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
]


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _run_engine(run, *args):
    """Runs the engine; in anomaly mode a failing node's forward trace is
    shown as PyTorch shows it (Note [Anomaly mode])."""
    try:
        return run(*args)
    except Exception:
        report = _C._take_anomaly_report()
        if report is not None and _C.is_anomaly_enabled():
            import warnings

            name, trace = report
            warnings.warn(f"Error detected in {name}. Traceback of forward call that caused the error:\n{trace}",
                          stacklevel=3)
        raise


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the leaves' .grad."""
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"grad_tensors has {len(grads)} elements but tensors has {len(tensors)}")
    _run_engine(_C._run_backward, tensors, grads, retain_graph, create_graph, _as_list(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of `outputs` with respect to `inputs`."""
    outputs = _as_list(outputs)
    single = not isinstance(inputs, (list, tuple))
    inputs = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    allow = bool(allow_unused) or materialize_grads
    result = _run_engine(_C._autograd_grad, outputs, inputs, grads, retain_graph, create_graph, allow)
    if materialize_grads:
        from ember import zeros_like

        result = tuple(r if r is not None else zeros_like(i) for r, i in zip(result, inputs))
    return tuple(result) if not single else tuple(result)
