"""Calling a module with some of its parameters and buffers replaced for one call."""

from __future__ import annotations

import contextlib
import warnings

from ember._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _tied_names(module, given):
    """given extended so that every name tied to a given tensor gets the same value."""
    names_of = {}
    for name, t in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        names_of.setdefault(id(t), set()).add(name)
    groups = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    out = dict(given)
    for name in [n for n in given if n in groups]:
        tied = groups[name]
        if len(tied & set(given)) > 1 and len({id(given[n]) for n in tied if n in given}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(tied)}, which are tied. "
                "Consider using tie_weights=False"
            )
        for other in tied:
            out[other] = given[name]
    return out


def _swap(module, path, value):
    """Puts value at path (a parameter, buffer or attribute of a submodule); returns what was there."""
    prefix, _, attr = path.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    for store in (owner._parameters, owner._buffers):
        if attr in store:
            old = store[attr]
            if value is _MISSING:
                del store[attr]
            else:
                store[attr] = value
            return old
    old = getattr(owner, attr) if hasattr(owner, attr) else _MISSING
    if old is not _MISSING and not isinstance(old, Tensor) and old is not None:
        raise TypeError(f"attribute `{attr}`: {old} is not an instance of torch.Tensor")
    if value is _MISSING:
        if old is not _MISSING:
            delattr(owner, attr)
    else:
        setattr(owner, attr, value)
    return old


def _check_keys(module, names):
    known = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    known |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    missing = sorted(known - set(names))
    unexpected = sorted(set(names) - known)
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(errors)))


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    values = _tied_names(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        _check_keys(module, values)
    originals = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, value in originals.items():
            current = _swap(module, name, value)
            if name in parameters_and_buffers:
                parameters_and_buffers[name] = current


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named parameters and buffers replaced by the given tensors."""
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
        "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
        "replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
