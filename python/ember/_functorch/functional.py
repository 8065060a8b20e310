"""functional_call, stack_module_state and functionalize."""

from __future__ import annotations

import ember
from ember.nn.utils.stateless import _functional_call


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the given dict(s)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, dict(values), args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """(params, buffers): each model's parameters and buffers stacked along a new first dim."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(name, tensors):
        requires = {t.requires_grad for t in tensors}
        if len(requires) != 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        out = ember.stack([t.detach() for t in tensors])
        return out.requires_grad_() if requires.pop() else out

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: stacked(k, [p[k] for p in all_params]) for k in all_params[0]}
    buffers = {k: stacked(k, [b[k] for b in all_buffers]) for k in all_buffers[0]}
    return params, buffers


def functionalize(func, *, remove="mutations"):
    """func itself: Ember runs eagerly with no graph capture, where removing mutations and
    views changes no result, so the functionalized function is the function."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
            "Valid options are:\n     remove='mutations'\n     remove='mutations_and_views'")
    return func


def replace_all_batch_norm_modules_(root):
    """Batch norm modules of root stop tracking running statistics (in place), so vmap can run them."""
    from ember.nn.modules.batchnorm import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a BatchedTensor (all levels when recurse), for debugging."""
    from ember._functorch.batched import BatchedTensor

    while isinstance(tensor, BatchedTensor):
        tensor = tensor.value
        if not recurse:
            break
    return tensor
