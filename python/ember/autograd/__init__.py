"""ember.autograd: reverse-mode automatic differentiation."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import cast, overload

from ember import _C
from ember.autograd import (  # noqa: F401
    anomaly_mode,
    forward_ad,
    function,
    functional,
    graph,
    profiler,
    profiler_legacy,
    profiler_util,
)
from ember.autograd._profiler_event import ProfilerEvent, _legacy_records
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from ember.autograd.function import Function, NestedIOFunction
from ember.autograd.grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from ember.autograd.profiler import DeviceType, ProfilerConfig, ProfilerState, kineto_available  # noqa: F401
from ember.autograd.variable import Variable
from ember.overrides import handle_torch_function, has_torch_function, is_tensor_like
from ember.profiler import ProfilerActivity  # noqa: F401

__all__ = [
    "Variable",
    "Function",
    "backward",
    "grad_mode",
    "NestedIOFunction",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
    "set_multithreading_enabled",
    "enforce_grad_layout_policy",
    "variable",
]


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _inputs_tuple(inputs, caller) -> Sequence:
    """inputs= as a tuple: one tensor, a sequence, or a dict (its values)."""
    if is_tensor_like(inputs):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{caller}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    return tuple(cast(Sequence, inputs))


def _run_engine(run, *args):
    """Runs the engine; in anomaly mode a failing node's forward trace is
    shown as PyTorch shows it (Note [Anomaly mode])."""
    try:
        return run(*args)
    except Exception:
        report = _C._take_anomaly_report()
        if report is not None and _C.is_anomaly_enabled():
            name, trace = report
            warnings.warn(anomaly_mode._report(name, trace), stacklevel=3)
        raise


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates gradients of `tensors` into the leaves' .grad (only into
    those of `inputs` when given)."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to `backward()`. "
                "Please only use `grad_tensors`."
            )
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = [tensors] if is_tensor_like(tensors) else list(tensors)
    overridable = [t for t in (*tensors, *inputs_tuple) if is_tensor_like(t)]
    if has_torch_function(overridable):
        return handle_torch_function(
            backward,
            overridable,
            tuple(tensors),
            grad_tensors=grad_tensors,
            retain_graph=retain_graph,
            create_graph=create_graph,
            inputs=inputs_tuple if inputs is not None else None,
        )
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"grad_tensors has {len(grads)} elements but tensors has {len(tensors)}")
    _run_engine(_C._run_backward, tensors, grads, retain_graph, create_graph, list(inputs_tuple))


def _check_batched_grads(outputs, grads):
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            raise RuntimeError(
                f"If `is_grads_batched=True`, every grad_output must be a tensor, got None for grad_output[{i}]"
            )
        first = g[0]  # (torch shows this sample's shape without its first dim)
        if tuple(first.shape) != tuple(out.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {first.shape[1:]} and "
                f"output[{i}] has a shape of {out.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap."
            )
    sizes = {g.shape[0] for g in grads}
    if len(sizes) != 1:
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{[g.shape[0] for g in grads]} for the mapped dimension"
        )
    return sizes.pop()


@overload
def grad(
    outputs,
    inputs: dict,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> dict: ...


@overload
def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple: ...


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple,
    or a dict when inputs is a dict). With is_grads_batched, the first dim of
    each grad_output indexes independent vector-Jacobian products."""
    import ember

    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = [outputs] if is_tensor_like(outputs) else list(outputs)
    inputs_tuple = _inputs_tuple(inputs, "grad")
    if len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    overridable = [t for t in (*outputs, *inputs_tuple) if is_tensor_like(t)]
    if has_torch_function(overridable):
        result = handle_torch_function(
            grad,
            overridable,
            tuple(outputs),
            inputs_tuple,
            grad_outputs=grad_outputs,
            retain_graph=retain_graph,
            create_graph=create_graph,
            only_inputs=only_inputs,
            allow_unused=allow_unused,
            is_grads_batched=is_grads_batched,
            materialize_grads=materialize_grads,
        )
        return dict(zip(inputs.keys(), result)) if type(inputs) is dict else result
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate gradient for "
            "other parts of the graph, please use torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    run_args = (list(inputs_tuple),)
    if is_grads_batched:
        batch = _check_batched_grads(outputs, grads)
        per_sample = []
        for b in range(batch):
            keep = retain_graph or b < batch - 1
            per_sample.append(
                _run_engine(
                    _C._autograd_grad, outputs, *run_args, [g[b] for g in grads], keep, create_graph, bool(allow_unused)
                )
            )
        result = tuple(
            None if any(r[k] is None for r in per_sample) else ember.stack([r[k] for r in per_sample])
            for k in range(len(inputs_tuple))
        )
    else:
        result = tuple(
            _run_engine(_C._autograd_grad, outputs, *run_args, grads, retain_graph, create_graph, bool(allow_unused))
        )
    if materialize_grads:
        result = tuple(
            r if r is not None else ember.zeros_like(i, requires_grad=create_graph)
            for r, i in zip(result, inputs_tuple)
        )
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result))
    return result


def variable(*args, **kwargs):
    """Removed: raises as PyTorch does (use ember.tensor)."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


def is_view_replay_enabled() -> bool:
    """Whether views modified in place are recreated by replaying their view
    operators: Ember recreates them with as_strided (Note [Views] of 0007)."""
    return False


# grad_fn._raw_saved_<name>: one saved tensor of a node, to register pack/unpack hooks on.
SavedTensor = _C.SavedTensor


def _enable_profiler_legacy(config) -> None:
    """Starts the legacy profiler with a ProfilerConfig (its input shapes setting)."""
    _C._profiler_start(bool(config.report_input_shapes))


def _disable_profiler_legacy():
    """Stops the legacy profiler: its records per thread, lists of ProfilerEvent."""
    return _legacy_records(_C._profiler_stop())
