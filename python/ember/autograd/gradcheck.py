"""gradcheck: compares autograd's gradients with central finite differences."""

from __future__ import annotations

import itertools
import math
import warnings


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _element(t, index):
    """A view of one element of t (keeps dims; works for any strides)."""
    view = t
    for d, i in enumerate(index):
        view = view.narrow(d, i, 1)
    return view


def _indices(shape):
    return itertools.product(*(range(s) for s in shape)) if shape else [()]


def _flat_outputs(func, inputs):
    from ember._tensor import Tensor

    outs = _as_tuple(func(*inputs))
    return [o for o in outs if isinstance(o, Tensor)]


def _parts(t):
    """Perturbation directions of one element: 1, and 1j for complex tensors
    (the real and imaginary parts vary separately)."""
    return (1.0, 1j) if t.is_complex() else (1.0,)


def _real_components(t):
    """The values of t as a flat list of reals (complex: re, im interleaved)."""
    import ember

    t = t.detach()
    if t.is_complex():
        t = ember.view_as_real(t.resolve_conj())
    return t.reshape(-1).tolist()


def _numerical_jacobian(func, inputs, eps):
    """jac[i] = one column per real component of input i (element-major, real
    part before imaginary part); a column holds, per output, the central
    difference of the output's real components."""
    from ember import no_grad

    with no_grad():
        base = _flat_outputs(func, inputs)
    jac = []
    for t in inputs:
        if not (hasattr(t, "requires_grad") and t.requires_grad):
            jac.append(None)
            continue
        columns = []
        for index in _indices(tuple(t.shape)):
            elem = _element(t.detach(), index)
            orig = elem.item()
            for part in _parts(t):
                with no_grad():
                    elem.fill_(orig + eps * part)
                    plus = [_real_components(o) for o in _flat_outputs(func, inputs)]
                    elem.fill_(orig - eps * part)
                    minus = [_real_components(o) for o in _flat_outputs(func, inputs)]
                    elem.fill_(orig)
                columns.append([[(p - m) / (2 * eps) for p, m in zip(ps, ms)] for ps, ms in zip(plus, minus)])
        jac.append(columns)
    return base, jac


def _mismatch(ana, num, atol, rtol):
    return not math.isclose(ana, num, rel_tol=rtol, abs_tol=atol) and abs(ana - num) > atol + rtol * abs(num)


def _message(j, i, num, ana, complex_part=None, mode=""):
    prefix = f"While considering the {complex_part} part of complex outputs only, " if complex_part else ""
    where = f"Jacobian {mode}mismatch for output {j} with respect to input {i}"
    return f"{prefix}{where},\nnumerical:{num}\nanalytical:{ana}\n"


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _vjp_rows(out, diff_inputs):
    """(grad_output, real part name) per real component of out: a one-hot of
    1, or of 1j for the imaginary part of a complex output."""
    import ember

    for k in range(out.numel()):
        for part in _parts(out):
            onehot = ember.zeros_like(out)
            _element(onehot, tuple(_unravel(k, tuple(out.shape)))).fill_(part)
            yield onehot, ("imaginary" if part == 1j else "real") if out.is_complex() else None


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_batched_forward_grad=False,
    check_forward_ad=False,
    check_backward_ad=True,
    fast_mode=False,
    masked=None,
):
    """True when autograd's gradients of func at inputs match finite
    differences. Complex inputs and outputs are checked part by part (PyTorch's
    conjugate Wirtinger convention: the gradient of a real loss L is
    dL/d re + i dL/d im). fast_mode compares one random projection v^T J u;
    check_batched_grad compares grad(is_grads_batched=True) with the rows;
    check_grad_dtypes checks each gradient has its input's dtype; the first
    row's backward is run twice and must agree within nondet_tol."""
    import ember

    inputs = _as_tuple(inputs)
    diff_inputs = [t for t in inputs if isinstance(t, ember.Tensor) and t.requires_grad]
    if not diff_inputs:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them "
            "have requires_grad=True."
        )
    for i, t in enumerate(diff_inputs):
        if t.dtype not in (ember.float64, ember.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or complex. ",
                stacklevel=2,
            )
    if fast_mode:
        return _fast_gradcheck(
            func, inputs, diff_inputs, eps, atol, rtol, raise_exception, check_backward_ad, check_forward_ad
        )
    outputs, numerical = _numerical_jacobian(func, inputs, eps)
    if check_forward_ad and not _check_forward_ad(func, inputs, numerical, atol, rtol, raise_exception):
        return False
    if not check_backward_ad:
        return True
    outputs = _flat_outputs(func, inputs)
    differentiable = any(out.requires_grad for out in outputs)
    for j, out in enumerate(outputs):
        if not out.requires_grad and differentiable:
            continue  # PyTorch checks only the differentiable outputs when there are some
        if not out.requires_grad:
            # no output has a graph: none may depend on the inputs
            for i, columns in enumerate(numerical):
                for col in columns or ():
                    for num in col[j]:
                        if _mismatch(0.0, num, atol, rtol):
                            return _fail(_message(j, i, num, 0.0), raise_exception)
            continue
        rows = list(_vjp_rows(out, diff_inputs))
        for r, (onehot, part) in enumerate(rows):
            grads = ember.autograd.grad(out, diff_inputs, onehot, retain_graph=True, allow_unused=True)
            # reentrancy: the first row's backward, run again, gives the same values
            again = (
                ember.autograd.grad(out, diff_inputs, onehot, retain_graph=True, allow_unused=True) if r == 0 else grads
            )
            gi = 0
            for i, t in enumerate(inputs):
                if numerical[i] is None:
                    continue
                g, g2 = grads[gi], again[gi]
                gi += 1
                if g is not None and check_grad_dtypes and g.dtype != t.dtype:
                    return _fail("Gradient has dtype mismatch", raise_exception)
                if g is not None and tuple(g.shape) != tuple(t.shape):
                    return _fail("Analytical gradient has incorrect size", raise_exception)
                analytical = _real_components(g) if g is not None else [0.0] * len(numerical[i])
                if g is not None and g2 is not None:
                    repeat = _real_components(g2)
                    if any(abs(a - b) > nondet_tol for a, b in zip(analytical, repeat)):
                        return _fail(
                            "Backward is not reentrant, i.e., running backward with same input and grad_output "
                            "multiple times gives different values, although analytical gradient matches numerical "
                            f"gradient.The tolerance for nondeterminism was {nondet_tol}.",
                            raise_exception,
                        )
                for e, col in enumerate(numerical[i]):
                    num, ana = col[j][r], analytical[e]
                    if _mismatch(ana, num, atol, rtol):
                        return _fail(_message(j, i, num, ana, part), raise_exception)
        if check_batched_grad and rows and not _check_batched(out, diff_inputs, rows, atol, rtol, raise_exception):
            return False
    return True


def _check_batched(out, diff_inputs, rows, atol, rtol, raise_exception):
    """grad(is_grads_batched=True) over every one-hot row equals the rows one by one."""
    import ember

    stacked = ember.stack([onehot for onehot, _ in rows])
    batched = ember.autograd.grad(
        out, diff_inputs, stacked, retain_graph=True, allow_unused=True, is_grads_batched=True
    )
    for r, (onehot, _) in enumerate(rows):
        single = ember.autograd.grad(out, diff_inputs, onehot, retain_graph=True, allow_unused=True)
        for i, (b, g) in enumerate(zip(batched, single)):
            if (b is None) != (g is None):
                return _fail(
                    f"For output and input {i}, batched grad and per-row grad disagree on being None", raise_exception
                )
            if b is not None and not ember.allclose(b[r], g, rtol=rtol, atol=atol):
                return _fail(f"While computing batched gradients, got: {b[r]}\nExpected: {g}\n", raise_exception)
    return True


def _fast_gradcheck(func, inputs, diff_inputs, eps, atol, rtol, raise_exception, check_backward_ad, check_forward_ad):
    """One random direction u over the inputs and one v over the outputs:
    v^T (J u) by finite differences against (v^T J) u by backward and v^T (J u)
    by forward mode."""
    import ember
    from ember import no_grad

    gen = ember.Generator().manual_seed(0)

    def rand_like(t):
        r = ember.rand(tuple(t.shape), generator=gen, dtype=ember.float64) * 2 - 1
        if t.is_complex():
            r = ember.complex(r, ember.rand(tuple(t.shape), generator=gen, dtype=ember.float64) * 2 - 1)
        return r.to(t.dtype)

    u = [rand_like(t) for t in diff_inputs]
    with no_grad():
        base = _flat_outputs(func, inputs)
        shifted = []
        for sign in (1, -1):
            args, k = [], 0
            for t in inputs:
                if isinstance(t, ember.Tensor) and t.requires_grad:
                    args.append(t.detach() + sign * eps * u[k])
                    k += 1
                else:
                    args.append(t)
            shifted.append(_flat_outputs(func, args))
    outputs = _flat_outputs(func, inputs)

    def real_dot(a, b):
        return sum(x * y for x, y in zip(_real_components(a), _real_components(b)))

    for j, out in enumerate(outputs):
        if not (out.is_floating_point() or out.is_complex()):
            continue
        v = rand_like(base[j])
        numerical = real_dot(v, (shifted[0][j] - shifted[1][j]) / (2 * eps))
        if check_backward_ad and out.requires_grad:
            grads = ember.autograd.grad(out, diff_inputs, v, retain_graph=True, allow_unused=True)
            analytical = sum(real_dot(g, uk) for g, uk in zip(grads, u) if g is not None)
            if _mismatch(analytical, numerical, atol, rtol):
                return _fail(
                    _message(j, 0, numerical, analytical) + "(fast mode: projections v^T J u)", raise_exception
                )
        if check_forward_ad:
            from ember.autograd import forward_ad

            with forward_ad.dual_level():
                args, k = [], 0
                for t in inputs:
                    if isinstance(t, ember.Tensor) and t.requires_grad:
                        args.append(forward_ad.make_dual(t.detach(), u[k]))
                        k += 1
                    else:
                        args.append(t)
                tangent = forward_ad.unpack_dual(_flat_outputs(func, args)[j]).tangent
            analytical = real_dot(v, tangent) if tangent is not None else 0.0
            if _mismatch(analytical, numerical, atol, rtol):
                return _fail(
                    _message(j, 0, numerical, analytical, mode="computed with forward mode ")
                    + "(fast mode: projections v^T J u)",
                    raise_exception,
                )
    return True


def _check_forward_ad(func, inputs, numerical, atol, rtol, raise_exception):
    """Forward-mode columns of the Jacobian (one dual pass per real component
    of an input, its tangent a basis vector: 1, or 1j for an imaginary part)
    against the numerical ones."""
    import ember
    from ember.autograd import forward_ad

    for i, t in enumerate(inputs):
        if numerical[i] is None:
            continue
        directions = [(e, part) for e in range(t.numel()) for part in _parts(t)]
        for c, col in enumerate(numerical[i]):
            e, part = directions[c]
            basis = ember.zeros(t.numel(), dtype=t.dtype, device=t.device)
            basis.narrow(0, e, 1).fill_(part)
            with forward_ad.dual_level():
                args = [
                    forward_ad.make_dual(x.detach(), basis.view(t.shape)) if k == i else x for k, x in enumerate(inputs)
                ]
                outs = _flat_outputs(func, args)
                tangents = [forward_ad.unpack_dual(o).tangent for o in outs]
            for j, (out, tangent) in enumerate(zip(outs, tangents)):
                if not (out.is_floating_point() or out.is_complex()):
                    continue
                analytical = _real_components(tangent) if tangent is not None else [0.0] * len(col[j])
                for k, (ana, num) in enumerate(zip(analytical, col[j])):
                    if abs(ana - num) > atol + rtol * abs(num):
                        return _fail(_message(j, i, num, ana, mode="computed with forward mode "), raise_exception)
    return True


def _unravel(k, shape):
    out = []
    for s in reversed(shape):
        out.append(k % s)
        k //= s
    return reversed(out)


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_fwd_over_rev=False,
    check_rev_over_rev=True,
    fast_mode=False,
    masked=False,
):
    """True when the gradients of func's gradients at inputs match finite differences.

    The first derivatives (built with create_graph=True) are differentiated
    again, with respect to the inputs and to grad_outputs; grad_outputs
    default to random values in [-1, 1) that require grad.
    """
    import ember

    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        with ember.no_grad():
            outs = [o for o in _flat_outputs(func, inputs)]

        def random_like(o):
            real = o.dtype if o.is_floating_point() else ember.float64
            if o.is_complex():
                real = ember.float64 if o.dtype == ember.complex128 else ember.float32
                return ember.complex(
                    ember.rand(tuple(o.shape), dtype=real) * 2 - 1, ember.rand(tuple(o.shape), dtype=real) * 2 - 1
                )
            return ember.rand(tuple(o.shape), dtype=real) * 2 - 1

        grad_outputs = tuple(random_like(o).requires_grad_(True) for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)

    def first_derivatives(*args):
        # The numerical pass runs func under no_grad; the first derivatives need a graph.
        with ember.enable_grad():
            input_args = args[:-num_outputs]
            gouts = args[-num_outputs:]
            outputs = [o for o in _flat_outputs(func, input_args)]
            diff = [(o, g) for o, g in zip(outputs, gouts) if o.requires_grad]
            diff_inputs = [x for x in input_args if isinstance(x, ember.Tensor) and x.requires_grad]
            if not diff:
                return tuple()
            grads = ember.autograd.grad(
                [o for o, _ in diff], diff_inputs, [g for _, g in diff], create_graph=True, allow_unused=True
            )
            return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
    )
