"""jacrev, jvp, jacfwd, hessian and linearize.

jacrev runs vjp under a vmap over the standard basis of the output, so the
forward runs once, batched over the basis, and the backward once. jvp uses
ember.autograd.forward_ad when Ember has it, and otherwise the double vjp:
vjp_fn(u) is linear in u, so the gradient of <vjp_fn(u), t> with respect to
u is J t, exactly.
"""

from __future__ import annotations

import functools

import ember
from ember import _C
from ember._functorch import dispatch
from ember._functorch import transforms as T
from ember._functorch.batched import LEVELS, BatchedTensor
from ember._functorch.pytree import tree_flatten, tree_unflatten
from ember._functorch.vmap import vmap

JVP = "jvp(f, primals, tangents)"


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _basis(shapes, dtype, device):
    """The rows of eye(m) cut into pieces shaped like the given shapes (m = their total numel)."""
    sizes = [_numel(s) for s in shapes]
    eye = ember.eye(sum(sizes), dtype=dtype, device=device)
    pieces, start = [], 0
    for shape, size in zip(shapes, sizes):
        pieces.append(eye[:, start:start + size].reshape(sum(sizes), *shape))
        start += size
    return pieces


def _chosen(args, argnums):
    argnums = T._check_argnums(argnums, len(args))
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func with respect to the argnums arguments, by reverse mode."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapped(*args):
        # one plain forward for the output's structure (and aux)
        with ember.no_grad():
            first = dispatch.call(func, *args)
        aux = None
        if has_aux:
            if not (isinstance(first, tuple) and len(first) == 2):
                raise RuntimeError(
                    "jacrev(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True")
            first, aux = first
        flat_out, out_spec = tree_flatten(first)
        for o in flat_out:
            if not isinstance(o, (_C.TensorBase, BatchedTensor)):
                raise RuntimeError(f"jacrev(f, ...): expected f(*primals) to return only tensors, got unsupported "
                                   f"type {type(o)}")
        out_shapes = [tuple(o.shape) for o in flat_out]
        basis = _basis(out_shapes, flat_out[0].dtype, flat_out[0].device)
        _, in_spec = tree_flatten(_chosen(args, argnums))

        def row(*cotangents):
            out = T._vjp(func, args, argnums, has_aux, "jacrev")
            vjp_fn = out[1]
            return tree_flatten(vjp_fn(tree_unflatten(list(cotangents), out_spec)))[0]

        rows = vmap(row, chunk_size=chunk_size)(*basis)
        flat_in = tree_flatten(_chosen(args, argnums))[0]
        # rows[j]: (m, *in_shape_j); cut m back into the outputs
        per_out = []
        for i, shape in enumerate(out_shapes):
            start = sum(_numel(s) for s in out_shapes[:i])
            size = _numel(shape)
            per_in = [r.narrow(0, start, size).reshape(*shape, *x.shape) for r, x in zip(rows, flat_in)]
            per_out.append(tree_unflatten(per_in, in_spec))
        jac = tree_unflatten(per_out, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapped


def _check_tuple(value, name):
    if not isinstance(value, tuple):
        raise RuntimeError(f"{JVP}: Expected {name} to be a tuple. E.g. it should be valid to call f(*primals).")
    flat = tree_flatten(value)[0]
    if not flat:
        raise RuntimeError(f"{JVP}: Expected {name} to be a non-empty tuple of Tensors.")
    for x in flat:
        if not isinstance(x, (_C.TensorBase, BatchedTensor)):
            raise RuntimeError(f"{JVP}: Expected {name} to be a tuple of Tensors, got a tuple with an element of "
                               f"type {type(x)}")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with tangents)."""
    if strict:
        raise RuntimeError(f"{JVP}: strict=True is not implemented")
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    _check_tuple(primals, "primals")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if not isinstance(tangents, tuple) or p_spec != t_spec:
        raise RuntimeError(
            f"{JVP}: Expected primals and tangents to have the same python structure. For example, if primals is "
            f"a tuple of 3 tensors, tangents also must be. Got primals with structure {p_spec} and tangents with "
            f"structure {t_spec}")
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{JVP}: Expected primals and tangents to have the same shape, got "
                               f"{tuple(p.shape)} and {tuple(t.shape)}")
    forward_ad = getattr(ember.autograd, "forward_ad", None)
    if forward_ad is not None:
        reverse_before = T._REVERSE_INPUTS[0]
        try:
            result = _jvp_forward_ad(forward_ad, func, flat_p, p_spec, flat_t, has_aux)
            # reverse mode inside (hessian's jacfwd(jacrev)): its fresh inputs do not
            # carry every tangent, so the double vjp, which needs none, decides
            if T._REVERSE_INPUTS[0] == reverse_before:
                return result
        except NotImplementedError:
            pass  # an operator without a forward derivative: the double vjp needs none
    return _jvp_double_vjp(func, flat_p, p_spec, flat_t, has_aux)


def _split_aux(output, has_aux):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{JVP}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _check_outputs(flat_out):
    for o in flat_out:
        if not isinstance(o, (_C.TensorBase, BatchedTensor)):
            raise RuntimeError(f"{JVP}: expected f(*args) to return only tensors, got unsupported type {type(o)}")


def _all_levels(x):
    """x's physical tensor with a dim for every active vmap level."""
    p, present = T._chain(x)
    for i, (lvl, size, _) in enumerate(LEVELS):
        if lvl not in present:
            p = p.unsqueeze(i)
            p = p.expand(*p.shape[:i], size, *p.shape[i + 1:])
    return p


def _jvp_double_vjp(func, flat_p, p_spec, flat_t, has_aux):
    create = T._create_graph(flat_p + flat_t)
    levels = [lvl for lvl, _, _ in LEVELS]
    with ember.enable_grad():
        fresh = [T._fresh_input(x) for x in flat_p]
        T._GRAD_DEPTH[0] += 1
        try:
            output = dispatch.call(func, *tree_unflatten([w for w, _ in fresh], p_spec))
        finally:
            T._GRAD_DEPTH[0] -= 1
        output, aux = _split_aux(output, has_aux)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        chains = [T._chain(o) for o in flat_out]
        dummies = [ember.zeros_like(p).requires_grad_() for p, _ in chains]
        leaves = [p for _, p in fresh]
        # g(u) = J^T u, built differentiably; then d<g(u), t>/du = J t
        grads = T._autograd([p for p, _ in chains], leaves, dummies, create_graph=True)
        total = None
        for g, t in zip(grads, flat_t):
            term = (g * _all_levels(t)).sum()
            total = term if total is None else total + term
        if total is None or not total.requires_grad:
            tangents_out = [ember.zeros_like(p) for p, _ in chains]
        else:
            tangents_out = T._autograd([total], dummies, create_graph=create or T._GRAD_DEPTH[0] > 0)
    out_tangents = [T._rewrap(t, lv) for t, (_, lv) in zip(tangents_out, chains)]
    del levels
    keep = create or T._GRAD_DEPTH[0] > 0
    primal_out = [o if keep else T._detach_out(o) for o in flat_out]
    result = (tree_unflatten(primal_out, out_spec), tree_unflatten(out_tangents, out_spec))
    return (*result, aux) if has_aux else result


def _dense(primal):
    """An expanded primal (a stride-0 dimension, as vmap broadcasts an
    unbatched input) cannot hold a tangent of its own layout: copy it."""
    if any(stride == 0 and size > 1 for size, stride in zip(primal.shape, primal.stride())):
        return primal.contiguous()
    return primal


def _jvp_forward_ad(fwAD, func, flat_p, p_spec, flat_t, has_aux):
    levels = [lvl for lvl, _, _ in LEVELS]
    with fwAD.dual_level():
        duals = [
            T._rewrap(fwAD.make_dual(_dense(_all_levels(p)), _all_levels(t)), levels) for p, t in zip(flat_p, flat_t)
        ]
        output = dispatch.call(func, *tree_unflatten(duals, p_spec))
        output, aux = _split_aux(output, has_aux)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        primals_out, tangents_out = [], []
        for o in flat_out:
            p, lv = T._chain(o)
            primal, tangent = fwAD.unpack_dual(p)
            primals_out.append(T._rewrap(primal, lv))
            tangents_out.append(T._rewrap(ember.zeros_like(primal) if tangent is None else tangent, lv))
    result = (tree_unflatten(primals_out, out_spec), tree_unflatten(tangents_out, out_spec))
    return (*result, aux) if has_aux else result


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func with respect to the argnums arguments, by forward mode."""

    @functools.wraps(func)
    def wrapped(*args):
        chosen = _chosen(args, argnums)
        flat_in, in_spec = tree_flatten(chosen)
        argnum_tuple = T._check_argnums(argnums, len(args))
        positions = (argnum_tuple,) if isinstance(argnum_tuple, int) else argnum_tuple
        in_shapes = [tuple(x.shape) for x in flat_in]
        basis = _basis(in_shapes, flat_in[0].dtype, flat_in[0].device)

        def partial(*chosen_args):
            full = list(args)
            values = tree_unflatten(list(chosen_args), in_spec)
            if isinstance(argnum_tuple, int):
                full[argnum_tuple] = values
            else:
                for i, v in zip(positions, values):
                    full[i] = v
            return dispatch.call(func, *full)

        def column(*tangents):
            out = jvp(partial, tuple(flat_in), tuple(tangents), has_aux=has_aux)
            return out[1]

        result = vmap(column, randomness=randomness)(*basis)
        aux = None
        if has_aux:
            with ember.no_grad():
                aux = _split_aux(dispatch.call(func, *args), True)[1]
        flat_cols, out_spec = tree_flatten(result)
        per_out = []
        for col in flat_cols:  # (m, *out_shape)
            out_shape = tuple(col.shape[1:])
            per_in, start = [], 0
            for shape in in_shapes:
                size = _numel(shape)
                piece = col.narrow(0, start, size).movedim(0, -1) if col.dim() > 1 else col.narrow(0, start, size)
                per_in.append(piece.reshape(*out_shape, *shape))
                start += size
            per_out.append(tree_unflatten(per_in, in_spec))
        jac = tree_unflatten(per_out, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapped


def hessian(func, argnums=0):
    """The Hessian: jacfwd of jacrev, as PyTorch composes it."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at primals."""
    output = dispatch.call(func, *primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return T.tree_map(T._detach_out, output), jvp_fn
