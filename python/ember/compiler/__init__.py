"""ember.compile and ember.compiler (decision 0021): the arguments are checked
as PyTorch checks them, and the compiled callable runs eagerly, so it gives
the eager numbers."""

import functools

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "get_default_backend",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "list_backends",
    "reset",
    "set_default_backend",
    "set_stance",
    "substitute_in_graph",
]

# PyTorch's registered backends; the first list is what list_backends() shows.
_LISTED_BACKENDS = ["cudagraphs", "inductor", "openxla", "tvm"]
_DEBUG_BACKENDS = ["aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner", "aot_ts", "eager",
                   "eager_debug", "eager_noexcept", "openxla_eval", "pre_dispatch_eager", "ts"]
_MODES = ["default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune"]
_default_backend = "inductor"


def list_backends(exclude_tags=("debug", "experimental")):
    return sorted(_LISTED_BACKENDS if exclude_tags else _LISTED_BACKENDS + _DEBUG_BACKENDS)


def get_default_backend():
    return _default_backend


def set_default_backend(backend):
    global _default_backend
    _check_backend(backend)
    _default_backend = backend


def _check_backend(backend):
    if isinstance(backend, str) and backend not in _LISTED_BACKENDS + _DEBUG_BACKENDS:
        from ember._dynamo.exc import InvalidBackend

        raise InvalidBackend(backend)


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, name=None,
            disable=False, recompile_limit=None, isolate_recompiles=False, shapes_spec=None):
    """Checks the arguments as PyTorch does and returns `model` ready to run
    eagerly: an OptimizedModule for an nn.Module, a wrapper for a function."""
    if backend is None:
        backend = _default_backend
    settings = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options, name=name,
                    disable=disable, recompile_limit=recompile_limit, isolate_recompiles=isolate_recompiles,
                    shapes_spec=shapes_spec)
    if model is None:

        def decorate(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, **settings)

        return decorate
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if backend == "inductor" and mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    _check_backend(backend)
    if disable:
        return model
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    from ember.nn.modules.module import Module

    if isinstance(model, Module):
        from ember._dynamo.eval_frame import OptimizedModule

        return OptimizedModule(model, backend)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)

    return compiled


def is_compiling():
    """False: Ember runs compiled code eagerly, never while tracing it."""
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def reset():
    """Nothing is cached by the eager backend."""


def disable(fn=None, recursive=True, *, reason=None):
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    return fn


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    def decorate(fn):
        return fn

    return decorate


def cudagraph_mark_step_begin():
    """No CUDA graphs are captured by the eager backend."""


class set_stance:  # noqa: N801  (PyTorch's name)
    """Context manager and decorator; the eager backend has one stance."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        self.stance = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapped
