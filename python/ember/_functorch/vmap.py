"""vmap: in_dims/out_dims over pytrees, chunking, randomness and nesting."""

from __future__ import annotations

import functools
import itertools

from ember import _C
from ember._functorch import dispatch
from ember._functorch.batched import LEVELS, BatchedTensor, _install_operators
from ember._functorch.pytree import broadcast_prefix, tree_flatten, tree_unflatten

_install_operators()
_LEVEL_COUNTER = itertools.count(1)


def _is_tensor(x):
    return isinstance(x, (_C.TensorBase, BatchedTensor))


def _name(func):
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def _flat_in_dims(func, in_dims, args):
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
            "to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
            f"structure {spec}."
        )
    for i, (arg, dim) in enumerate(zip(flat_args, flat_dims)):
        if dim is None:
            continue
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input but "
                "in_dim must be either an integer dimension or None."
            )
        if not _is_tensor(arg):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input but the "
                f"input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use None as "
                "the respective in_dim"
            )
        n = arg.dim()
        if not -n <= dim < n:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some input, but "
                f"that input is a Tensor of dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}."
            )
        flat_dims[i] = dim % n
    sizes = [arg.shape[d] for arg, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return flat_args, flat_dims, spec, sizes[0]


def _move_to_front(x, dim):
    return x if dim == 0 else x.movedim(dim, 0)


def _unwrap_output(func, out, level, size, out_dim):
    if out_dim is None:
        if isinstance(out, BatchedTensor) and out.level == level:
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when "
                             "out_dim is None")
        return out
    if not _is_tensor(out):
        raise ValueError(
            f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type {type(out)}. "
            "Did you mean to set out_dims= to None for output?"
        )
    if isinstance(out, BatchedTensor) and out.level == level:
        value = out.value
    else:
        value = out.unsqueeze(0).expand(size, *out.shape)
    n = value.dim()
    if not -n <= out_dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {out_dim})"
        )
    return value if out_dim % n == 0 else value.movedim(0, out_dim)


def _flat_out(func, outputs, out_dims, level, size):
    flat, spec = tree_flatten(outputs)

    def incompatible():
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
            f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has "
            f"structure {spec}."
        )

    if _is_tensor(outputs):
        if isinstance(out_dims, int) or out_dims is None:
            dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            dims = list(out_dims)
        else:
            incompatible()
    else:
        dims = broadcast_prefix(out_dims, spec)
        if dims is None:
            incompatible()
    for d in dims:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                "collection of ints representing where in the outputs the vmapped dimension should appear."
            )
    return [_unwrap_output(func, o, level, size, d) for o, d in zip(flat, dims)], spec


def _run(func, flat_args, flat_dims, spec, size, randomness, kwargs):
    level = next(_LEVEL_COUNTER)
    batched = [
        a if d is None else BatchedTensor(_move_to_front(a, d), level) for a, d in zip(flat_args, flat_dims)
    ]
    func = dispatch.resolve(func)
    LEVELS.append((level, size, randomness))
    dispatch.enter()
    try:
        outputs = func(*tree_unflatten(batched, spec), **kwargs)
    finally:
        dispatch.exit_()
        LEVELS.pop()
    return outputs, level


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a dimension of its inputs (torch.func.vmap)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, flat_dims, spec, size = _flat_in_dims(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            outputs, level = _run(func, flat_args, flat_dims, spec, size, randomness, kwargs)
            flat_out, out_spec = _flat_out(func, outputs, out_dims, level, size)
            return tree_unflatten(flat_out, out_spec)
        return _chunked(func, flat_args, flat_dims, spec, size, randomness, kwargs, out_dims, chunk_size)

    return wrapped


def _chunked(func, flat_args, flat_dims, spec, size, randomness, kwargs, out_dims, chunk_size):
    import ember

    pieces, out_spec, dims = [], None, None
    for start in range(0, size, chunk_size):
        length = min(chunk_size, size - start)
        args = [a if d is None else a.narrow(d, start, length) for a, d in zip(flat_args, flat_dims)]
        outputs, level = _run(func, args, flat_dims, spec, length, randomness, kwargs)
        flat_out, out_spec = _flat_out(func, outputs, out_dims, level, length)
        if dims is None:
            dims = broadcast_prefix(out_dims, out_spec) if not _is_tensor(outputs) else (
                [out_dims] if not isinstance(out_dims, tuple) else list(out_dims))
        pieces.append(flat_out)
    joined = [
        column[0] if d is None else ember.cat(column, d)
        for column, d in zip(zip(*pieces), dims)
    ]
    return tree_unflatten(joined, out_spec)
