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


def _numerical_jacobian(func, inputs, eps):
    """jac[i][j] = list over input-i elements of the flattened d(output j)."""
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
            with no_grad():
                elem.fill_(orig + eps)
                plus = [o.detach().reshape(-1).tolist() for o in _flat_outputs(func, inputs)]
                elem.fill_(orig - eps)
                minus = [o.detach().reshape(-1).tolist() for o in _flat_outputs(func, inputs)]
                elem.fill_(orig)
            columns.append([[(p - m) / (2 * eps) for p, m in zip(ps, ms)] for ps, ms in zip(plus, minus)])
        jac.append(columns)
    return base, jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when autograd's gradients of func at inputs match finite differences."""
    import ember

    inputs = _as_tuple(inputs)
    diff_inputs = [t for t in inputs if isinstance(t, ember.Tensor) and t.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, t in enumerate(diff_inputs):
        if t.dtype != ember.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or complex. ",
                stacklevel=2,
            )
    outputs, numerical = _numerical_jacobian(func, inputs, eps)
    if check_forward_ad and not _check_forward_ad(func, inputs, numerical, atol, rtol, raise_exception):
        return False
    if not check_backward_ad:
        return True
    outputs = _flat_outputs(func, inputs)
    for j, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        n_out = out.numel()
        for k in range(n_out):
            onehot = ember.zeros_like(out)
            _element(onehot, tuple(_unravel(k, tuple(out.shape)))).fill_(1.0)
            grads = ember.autograd.grad(out, diff_inputs, onehot, retain_graph=True, allow_unused=True)
            gi = 0
            for i, t in enumerate(inputs):
                if numerical[i] is None:
                    continue
                g = grads[gi]
                gi += 1
                analytical = g.reshape(-1).tolist() if g is not None else [0.0] * t.numel()
                for e, col in enumerate(numerical[i]):
                    num = col[j][k]
                    ana = analytical[e]
                    if not math.isclose(ana, num, rel_tol=rtol, abs_tol=atol) and abs(ana - num) > atol + rtol * abs(
                        num
                    ):
                        msg = (f"Jacobian mismatch for output {j} with respect to input {i},\n"
                               f"numerical:{num}\nanalytical:{ana}\n")
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def _check_forward_ad(func, inputs, numerical, atol, rtol, raise_exception):
    """Forward-mode columns of the Jacobian (one dual pass per input element,
    its tangent a basis vector) against the numerical ones."""
    import ember
    from ember.autograd import forward_ad

    for i, t in enumerate(inputs):
        if numerical[i] is None:
            continue
        for e, col in enumerate(numerical[i]):
            basis = ember.zeros(t.numel(), dtype=t.dtype, device=t.device)
            basis[e] = 1
            with forward_ad.dual_level():
                args = [forward_ad.make_dual(x.detach(), basis.view(t.shape)) if k == i else x
                        for k, x in enumerate(inputs)]
                outs = _flat_outputs(func, args)
                tangents = [forward_ad.unpack_dual(o).tangent for o in outs]
            for j, (out, tangent) in enumerate(zip(outs, tangents)):
                if not (out.is_floating_point() or out.is_complex()):
                    continue
                analytical = tangent.reshape(-1).tolist() if tangent is not None else [0.0] * out.numel()
                for k, (ana, num) in enumerate(zip(analytical, col[j])):
                    if abs(ana - num) > atol + rtol * abs(num):
                        msg = (f"Jacobian computed with forward mode mismatch for output {j} with respect to input "
                               f"{i},\nnumerical:{num}\nanalytical:{ana}\n")
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def _unravel(k, shape):
    out = []
    for s in reversed(shape):
        out.append(k % s)
        k //= s
    return reversed(out)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
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
        grad_outputs = tuple(
            (ember.rand(tuple(o.shape), dtype=o.dtype if o.is_floating_point() else ember.float64) * 2 - 1)
            .requires_grad_(True)
            for o in outs
        )
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
            grads = ember.autograd.grad([o for o, _ in diff], diff_inputs, [g for _, g in diff], create_graph=True,
                                        allow_unused=True)
            return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
