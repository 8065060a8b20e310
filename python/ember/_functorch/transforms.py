"""grad, vjp, jacrev, jvp, jacfwd, hessian, linearize over Ember's reverse-mode autograd.

A transform makes each differentiated input a fresh node of the autograd
graph, batched at every vmap level active when it is called (Note [grad under
vmap] in docs/decisions/0030-func-transforms-vmap.md): one sample's output
then depends only on its own copy, so the gradient of the sum of all samples'
outputs holds each sample's gradient.
"""

from __future__ import annotations

import functools
import importlib

import ember
from ember import _C
from ember._functorch import dispatch
from ember._functorch.batched import _GRAD_DEPTH, LEVELS, BatchedTensor  # noqa: F401 - _GRAD_DEPTH read as T._GRAD_DEPTH
from ember._functorch.pytree import tree_flatten, tree_map, tree_unflatten

# Counts inputs made differentiable by grad/vjp/jacrev: jvp reruns by the
# double vjp when reverse mode ran inside it (forward over reverse).
_REVERSE_INPUTS = [0]


# ---- inputs and outputs as physical tensors ----
def _chain(x):
    """(physical tensor, levels x is batched at, outermost first)."""
    levels = []
    while isinstance(x, BatchedTensor):
        levels.append(x.level)
        x = x.value
    return x, levels[::-1]


def _rewrap(physical, levels):
    for level in levels:
        physical = BatchedTensor(physical, level)
    return physical


def _fresh_input(x):
    """x as a new differentiable node batched at every active vmap level: (wrapped, physical leaf)."""
    if not isinstance(x, (_C.TensorBase, BatchedTensor)):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    _REVERSE_INPUTS[0] += 1
    p, present = _chain(x)
    active = [(lvl, size) for lvl, size, _ in LEVELS]
    for i, (lvl, size) in enumerate(active):
        if lvl not in present:
            p = p.unsqueeze(i)
            p = p.expand(*p.shape[:i], size, *p.shape[i + 1:])
    if p.requires_grad:
        p = p.view_as(p)
    else:
        p = _differentiable_keeping_tangent(p)
    return _rewrap(p, [lvl for lvl, _ in active]), p


def _differentiable_keeping_tangent(p):
    """A new differentiable node for p; a forward-AD tangent p carries is kept,
    so reverse mode inside jvp/jacfwd (hessian) differentiates it forward too."""
    forward_ad = importlib.import_module("ember.autograd.forward_ad")
    primal, tangent = forward_ad.unpack_dual(p)
    leaf = primal.detach().requires_grad_()
    return leaf if tangent is None else forward_ad.make_dual(leaf, tangent)


def _physical(x):
    return _chain(x)[0]


def _create_graph(inputs):
    return _GRAD_DEPTH[0] > 0 or ember.is_grad_enabled() and any(
        _physical(x).requires_grad for x in inputs if isinstance(x, (_C.TensorBase, BatchedTensor)))


def _autograd(outputs, leaves, grad_outputs=None, create_graph=False):
    outs, grads_out, used = [], [], []
    for i, o in enumerate(outputs):
        if o.requires_grad:
            outs.append(o)
            used.append(i)
            if grad_outputs is not None:
                grads_out.append(grad_outputs[i])
    if not outs:
        return [ember.zeros_like(p) for p in leaves]
    grads = ember.autograd.grad(outs, leaves, grads_out or None, retain_graph=True, create_graph=create_graph,
                                allow_unused=True)
    return [ember.zeros_like(p) if g is None else g for g, p in zip(grads, leaves)]


# ---- argnums ----
def _check_argnums(argnums, num_args):
    def one(a):
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if 0 <= a < num_args:
            return a
        if -num_args <= a < 0:
            return a + num_args
        raise RuntimeError(f"Got argnum={a}, but only {num_args} positional inputs")

    if isinstance(argnums, int):
        return one(argnums)
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(one(a) for a in argnums)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _prepare(args, argnums):
    """args with the differentiated ones replaced by fresh inputs; (args, diff tree, leaves)."""
    argnums = _check_argnums(argnums, len(args))
    chosen = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    flat, spec = tree_flatten(chosen)
    fresh = [_fresh_input(x) for x in flat]
    wrapped = tree_unflatten([w for w, _ in fresh], spec)
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = wrapped
    else:
        for i, w in zip(argnums, wrapped):
            args[i] = w
    return args, spec, [p for _, p in fresh], [w for w, _ in fresh]


def _grad_of(leaf, like):
    """A gradient of a physical leaf, wrapped as the leaf's input was."""
    return _rewrap(leaf, [lvl for lvl, _, _ in LEVELS]) if like is None else like


def _detach_out(x):
    """An output handed back to a caller outside every transform loses its graph."""
    if _GRAD_DEPTH[0] > 0 or not isinstance(x, (_C.TensorBase, BatchedTensor)):
        return x
    p, levels = _chain(x)
    return _rewrap(p.detach(), levels) if p.requires_grad else x


# ---- grad ----
def grad_and_value(func, argnums=0, has_aux=False):
    """func's gradient with respect to the argnums arguments, and its value."""

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        create = _create_graph(args)
        with ember.enable_grad():
            new_args, spec, leaves, _ = _prepare(args, argnums)
            _GRAD_DEPTH[0] += 1
            try:
                output = dispatch.call(func, *new_args, **kwargs)
            finally:
                _GRAD_DEPTH[0] -= 1
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                        "if has_aux is True"
                    )
                output, aux = output
            if not isinstance(output, (_C.TensorBase, BatchedTensor)):
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            physical = _physical(output)
            total = physical.sum() if physical.dim() else physical
            grads = _autograd([total], leaves, create_graph=create or _GRAD_DEPTH[0] > 0)
        levels = [lvl for lvl, _, _ in LEVELS]
        grads = tree_unflatten([_rewrap(g, levels) for g in grads], spec)
        if not create and _GRAD_DEPTH[0] == 0:
            output = _detach_out(output)
            aux = tree_map(_detach_out, aux)
        return (grads, (output, aux)) if has_aux else (grads, output)

    return wrapped


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function with respect to the argnums arguments."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapped


# ---- vjp ----
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the vector-Jacobian products."""
    return _vjp(func, primals, None, has_aux, "vjp")


def _vjp(func, primals, argnums, has_aux, api):
    create = _create_graph(primals)
    with ember.enable_grad():
        if argnums is None:
            args, spec, leaves, _ = _prepare((primals,), 0)
            args = args[0]
        else:
            args, spec, leaves, _ = _prepare(primals, argnums)
        _GRAD_DEPTH[0] += 1
        try:
            output = dispatch.call(func, *args)
        finally:
            _GRAD_DEPTH[0] -= 1
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(
                f"{api}(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True")
        output, aux = output
    flat_out, out_spec = tree_flatten(output)
    for o in flat_out:
        if not isinstance(o, (_C.TensorBase, BatchedTensor)):
            raise RuntimeError(f"{api}(f, ...): expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(o)}")
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError(
                f"{api}(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with "
                f"dtype {o.dtype}")
    forward_levels = {lvl for lvl, _, _ in LEVELS}
    keep_graph = create or _GRAD_DEPTH[0] > 0

    def vjp_fn(cotangents, *extra):
        if extra:
            cotangents = (cotangents, *extra)
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec and not (len(flat_out) == 1 and len(flat_ct) == 1):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to the "
                f"function. cotangents: {ct_spec}, primal output: {out_spec}")
        newer = [c.level for c in flat_ct if isinstance(c, BatchedTensor) and c.level not in forward_levels]
        if newer:
            return _vjp_over_new_level(vjp_fn, cotangents, max(newer))
        for c, o in zip(flat_ct, flat_out):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has a shape "
                    f"of {o.shape}.")
        with ember.enable_grad():
            # <output, cotangent> summed over every sample: its gradient holds each sample's product
            outs, cts = [], []
            for c, o in zip(flat_ct, flat_out):
                (po, lo), (pc, lc) = _chain(o), _chain(c)
                if lo == lc and tuple(po.shape) == tuple(pc.shape) and pc.dtype == po.dtype:
                    outs.append(po)  # the cotangent is laid out as the output: pass it as it is
                    cts.append(pc)
                else:
                    outs.append(_physical(o * c).sum())
                    cts.append(ember.ones((), dtype=outs[-1].dtype))
            grads = _autograd(outs, leaves, cts, create_graph=keep_graph or _GRAD_DEPTH[0] > 0)
        levels = [lvl for lvl, _, _ in LEVELS if lvl in forward_levels]
        result = tree_unflatten([_rewrap(g, levels) for g in grads], spec)
        return result

    output_back = tree_map(_detach_out, output) if not keep_graph else output
    if has_aux:
        return output_back, vjp_fn, tree_map(_detach_out, aux) if not keep_graph else aux
    return output_back, vjp_fn


def _vjp_over_new_level(vjp_fn, cotangents, level):
    """vjp_fn under a vmap begun after the forward: one backward per sample of that vmap."""
    from ember._functorch.rules import batch_size

    size = batch_size(level)
    flat, spec = tree_flatten(cotangents)
    results = []
    for b in range(size):
        sample = [c.value[b] if isinstance(c, BatchedTensor) and c.level == level else c for c in flat]
        results.append(tree_flatten(vjp_fn(tree_unflatten(sample, spec))))
    out_spec = results[0][1]
    stacked = [BatchedTensor(ember.stack(list(column)), level) for column in zip(*(r[0] for r in results))]
    return tree_unflatten(stacked, out_spec)
