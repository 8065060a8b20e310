"""Higher-level derivatives of Python functions, as torch.autograd.functional:
vjp, jvp, jacobian, hessian, vhp and hvp, built on autograd.grad (jvp and
hvp by the double-backward trick). Inputs and outputs may be a Tensor or a
tuple of Tensors; results mirror that structure."""

from __future__ import annotations

import ember

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---- argument handling -----------------------------------------------------------


def _as_tuple(x, arg_name, fn_name):
    """(tuple_of_tensors, was_tuple), with PyTorch's type errors."""
    was_tuple = isinstance(x, tuple)
    items = x if was_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, ember.Tensor):
            if was_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the"
                    f" value at index {i} has type {type(el)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the"
                f" given {arg_name} has type {type(el)}."
            )
    return items, was_tuple


def _unpack(res, was_tuple):
    """Undoes _as_tuple; was_tuple may be a pair for nested (jacobian/hessian) results."""
    if isinstance(was_tuple, tuple):
        if not was_tuple[1]:
            res = tuple(el[0] for el in res)
        if not was_tuple[0]:
            res = res[0]
        return res
    return res if was_tuple else res[0]


def _prepare_inputs(inputs, create_graph, need_graph):
    """Leaves that require grad, so the function's graph reaches them; with
    create_graph an input that already requires grad stays connected."""
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(res, create_graph):
    """Detached results unless the caller wants to differentiate them again."""
    if isinstance(res[0], ember.Tensor):
        return tuple(r if create_graph else r.detach() for r in res)
    return tuple(_finish(r, create_graph) for r in res)


def _check_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_o) in enumerate(zip(v, other)):
        if el_v.size() != el_o.size():
            prepend = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_o.size()} but got {el_v.size()}.")


def _check_outputs_require_grad(outputs, strict, what="outputs"):
    if not strict:
        return
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            if what == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i}"
                    " is independent of the input. This is not allowed in strict mode."
                    " You should ensure that your function is thrice differentiable and that"
                    " the hessian depends on the inputs."
                )
            if what == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided"
                    f" function with respect to input {i} is independent of the input. This is not"
                    " allowed in strict mode. You should ensure that your function is twice"
                    " differentiable and that the jacobian depends on the inputs (this would be"
                    " violated by a linear function for example)."
                )
            if what == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of the"
                    " user-provided function. This is not allowed in strict mode."
                )
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients."
                " The outputs must be computed in a differentiable manner from the input"
                " when running in strict mode."
            )


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """autograd.grad over the outputs that require grad; None for unused inputs."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, grads = zip(*pairs)
    return ember.autograd.grad(
        outs, inputs, grads, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True
    )


def _zeros_for_unused(grads, refs, strict, create_graph, stage):
    """Zeros where an input did not influence the result; strict mode refuses that."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        f"The output of the user-provided function is independent of input {i}."
                        " This is not allowed in strict mode."
                    )
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i}"
                        " in the grad_outputs when using the double backward trick to compute"
                        " forward mode gradients. This is not allowed in strict mode."
                    )
                if stage == "double_back":
                    raise RuntimeError(
                        f"The jacobian of the user-provided function is independent of input {i}."
                        " This is not allowed in strict mode."
                    )
                raise RuntimeError(
                    "The hessian of the user-provided function is independent of "
                    f"entry {i} in the grad_jacobian. This is not allowed in strict "
                    "mode as it prevents from using the double backward trick to "
                    "replace forward mode AD."
                )
            g = ember.zeros_like(ref)
        out.append(g)
    return tuple(out)


# ---- products ------------------------------------------------------------------


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    with ember.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare_inputs(inputs, create_graph, True)
        outputs, out_tuple = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_outputs_require_grad(outputs, strict)
        if v is not None:
            v, _ = _as_tuple(v, "v", "vjp")
            v = _prepare_inputs(v, create_graph, False)
            _check_v(v, outputs, out_tuple)
        else:
            if len(outputs) != 1 or outputs[0].nelement() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function returns a single Tensor with a"
                    " single element."
                )
            v = (None,)
        grads = _grad(outputs, inputs, v, create_graph)
        grads = _zeros_for_unused(grads, inputs, strict, create_graph, "back")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(grads, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by differentiating a
    vector-Jacobian product with respect to its vector."""
    with ember.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare_inputs(inputs, create_graph, True)
        if v is not None:
            v, _ = _as_tuple(v, "v", "jvp")
            v = _prepare_inputs(v, create_graph, False)
            _check_v(v, inputs, in_tuple)
        else:
            if len(inputs) != 1 or inputs[0].nelement() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided function is a single Tensor"
                    " with a single element."
                )
        outputs, out_tuple = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_outputs_require_grad(outputs, strict)
        # u is a dummy cotangent; d(u^T J)/du applied to v is J v.
        u = tuple(ember.zeros_like(o, requires_grad=True) for o in outputs)
        grad_u = _grad(outputs, inputs, u, create_graph=True)
        _zeros_for_unused(grad_u, inputs, strict, create_graph, "back")
        if create_graph:
            jv = _grad(grad_u, u, v if v is not None else (None,) * len(grad_u), create_graph=True)
            jv = _zeros_for_unused(jv, outputs, strict, create_graph, "back_trick")
        else:
            jv = _grad(grad_u, u, v if v is not None else (None,) * len(grad_u), create_graph=False)
            jv = _zeros_for_unused(jv, outputs, strict, create_graph, "back_trick")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(jv, create_graph), out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: per (output, input) pair a tensor of
    shape output.shape + input.shape."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together (yet). '
                "Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
    if vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` "
            "and `vectorized=True` are not supported together. "
            "Please either set `strict=False` or "
            "`vectorize=False`."
        )
    if strategy == "forward-mode":
        return _jacobian_forward_mode(func, inputs)
    with ember.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare_inputs(inputs, create_graph, True)
        outputs, out_tuple = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_outputs_require_grad(outputs, strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(flat.nelement()):
                vj = _grad((flat[j],), inputs, (None,), create_graph, retain_graph=True)
                for k, (g, x) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict and create_graph and not x.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is "
                                f"independent of input {i}. This is not allowed in "
                                "strict mode when create_graph=True."
                            )
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of input {k}."
                                " This is not allowed in strict mode."
                            )
                        g = ember.zeros_like(x)
                    rows[k].append(g)
            jac.append(
                tuple(
                    ember.stack(r).view(out.size() + x.size()) if r else x.new_zeros(out.size() + x.size())
                    for r, x in zip(rows, inputs)
                )
            )
        return _unpack(_finish(tuple(jac), create_graph), (out_tuple, in_tuple))


def _jacobian_forward_mode(func, inputs):
    """jacobian(strategy="forward-mode"): one forward-AD pass per input
    element, every input dual, the tangents together one basis vector; the
    outputs' tangents are the Jacobian's columns. As in PyTorch, the nesting
    for tuple inputs is a list."""
    from ember.autograd import forward_ad

    inputs, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
    columns = None  # [output][input] -> list of columns
    outputs = None
    out_tuple = True
    for k, x in enumerate(inputs):
        for j in range(x.numel()):
            with forward_ad.dual_level():
                duals = []
                for i, x_ in enumerate(inputs):
                    tangent = ember.zeros_like(x_)
                    if i == k:
                        tangent.view(-1)[j] = 1
                    duals.append(forward_ad.make_dual(x_, tangent))
                result, out_tuple = _as_tuple(func(*duals), "outputs of the user-provided function", "jacobian")
                unpacked = [forward_ad.unpack_dual(o) for o in result]
            outputs = [u.primal for u in unpacked]
            if columns is None:
                columns = [[[] for _ in inputs] for _ in outputs]
            for i, u in enumerate(unpacked):
                columns[i][k].append(ember.zeros_like(u.primal) if u.tangent is None else u.tangent)
    if outputs is None:  # every input is empty: evaluate once for the output shapes
        outputs, out_tuple = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        columns = [[[] for _ in inputs] for _ in outputs]
    jac = []
    for i, o in enumerate(outputs):
        row = []
        for k, x in enumerate(inputs):
            cols = columns[i][k]
            if cols:
                # PyTorch's order: the columns stacked first, moved last, then reshaped.
                stacked = ember.stack(cols)
                row.append(stacked.permute(*range(1, stacked.dim()), 0).reshape(o.shape + x.shape))
            else:
                row.append(o.new_zeros(o.shape + x.shape))
        jac.append(row)
    return _unpack(jac, (out_tuple, in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs: per pair of inputs a tensor of
    shape input_i.shape + input_j.shape."""
    inputs, in_tuple = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output(*inp):
        out = func(*inp)
        is_out_tuple = isinstance(out, tuple)
        if is_out_tuple:
            for i, el in enumerate(out):
                if not isinstance(el, ember.Tensor):
                    raise TypeError(
                        "The outputs of the user-provided function given to hessian must be either a Tensor or a "
                        f"tuple of Tensors but the value at index {i} has type {type(el)}."
                    )
        elif not isinstance(out, ember.Tensor):
            raise TypeError(
                "The outputs of the user-provided function given to hessian must be either a Tensor or a "
                f"tuple of Tensors but the given outputs of the user-provided function has type {type(out)}."
            )
        if is_out_tuple or not isinstance(out, ember.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output, inp, create_graph=True)
        _check_outputs_require_grad(jac, strict=strict, what="jacobian")
        return jac

    res = jacobian(
        jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack(res, (in_tuple, in_tuple))


def _scalar_output(func, inputs, fn_name, create_graph, strict):
    outputs, out_tuple = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_outputs_require_grad(outputs, strict)
    if out_tuple or not isinstance(outputs[0], ember.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs


def _prepare_v(v, inputs, in_tuple, fn_name, create_graph):
    if v is not None:
        v, _ = _as_tuple(v, "v", fn_name)
        v = _prepare_inputs(v, create_graph, False)
        _check_v(v, inputs, in_tuple)
        return v
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided function "
            "is a single Tensor with a single element."
        )
    return (ember.ones_like(inputs[0]),)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a scalar function."""
    with ember.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare_inputs(inputs, create_graph, True)
        v = _prepare_v(v, inputs, in_tuple, "vhp", create_graph)
        outputs = _scalar_output(func, inputs, "vhp", create_graph, strict)
        jac = _grad(outputs, inputs, (None,), create_graph=True)
        _check_outputs_require_grad(tuple(j for j in jac if j is not None), strict, "jacobian")
        res = _grad(jac, inputs, v, create_graph)
        res = _zeros_for_unused(res, inputs, strict, create_graph, "double_back")
    return _unpack(_finish(outputs, create_graph), False), _unpack(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product of a scalar function
    (by the double-backward trick)."""
    with ember.enable_grad():
        inputs, in_tuple = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare_inputs(inputs, create_graph, True)
        v = _prepare_v(v, inputs, in_tuple, "hvp", create_graph)
        outputs = _scalar_output(func, inputs, "hvp", create_graph, strict)
        jac = _grad(outputs, inputs, (None,), create_graph=True)
        _check_outputs_require_grad(tuple(j for j in jac if j is not None), strict, "jacobian")
        grad_jac = tuple(ember.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _zeros_for_unused(jac, inputs, strict, create_graph, "back")
        res = _grad(double_back, grad_jac, v, create_graph)
        res = _zeros_for_unused(res, inputs, strict, create_graph, "double_back_trick")
    return _unpack(_finish(outputs, create_graph), False), _unpack(_finish(res, create_graph), in_tuple)
