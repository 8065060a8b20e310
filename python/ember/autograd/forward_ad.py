"""Forward-mode automatic differentiation (PyTorch's torch.autograd.forward_ad).

Inside a `dual_level`, `make_dual(primal, tangent)` gives a tensor that
carries a tangent; every operation on it computes its result's tangent (a
Jacobian-vector product) from the forward formulas of ops.yaml, and
`unpack_dual` reads it back. Tangents live on the tensors' autograd
metadata in C++ (src/ember/autograd/ForwardAD.h); leaving the level drops
them. As in PyTorch, one level may be open at a time.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember import _C
from ember.autograd.grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

# The open level (-1: none); read by ember.func and by printing.
_current_level = -1


def enter_dual_level():
    """Opens a new forward-AD level and returns its index."""
    global _current_level
    new_level = _C._enter_dual_level()
    if new_level != _current_level + 1:
        raise RuntimeError(
            "Entering a new forward AD level but the current level is not valid. Make sure you did not modified it "
            "directly."
        )
    _current_level = new_level
    return new_level


def exit_dual_level(*, level=None):
    """Closes the given level (the current one by default); every tangent set
    at it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        )
    _C._exit_dual_level(level=level)
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` whose tangent at `level` is `tangent` (same size;
    both floating point or complex)."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    return _C._make_dual(tensor, tangent, level=level)


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal (a view without the tangent)
    and the tangent (None when there is none)."""

    primal: Any
    tangent: Any


def unpack_dual(tensor, *, level=None):
    """The primal and the tangent of `tensor` at `level` (the current one by
    default), as an UnpackedDualTensor."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = _C._fw_grad(tensor, level)
    return UnpackedDualTensor(_C._fw_primal(tensor, level), tangent)


class dual_level(_DecoratorContextManager):  # noqa: N801
    """Context manager (and decorator) for one forward-AD level: entered,
    it returns the level; on exit every tangent set inside is dropped."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()


def _tangent_for_printing(tensor):
    """The tangent that `repr` shows (None outside a level)."""
    if _current_level < 0:
        return None
    return _C._fw_grad(tensor, _current_level)


def _is_fwd_grad_enabled():
    return _C._is_fwd_grad_enabled()


def _set_fwd_grad_enabled(enabled):
    """Switches tangent propagation on this thread; returns the previous state."""
    return _C._set_fwd_grad_enabled(bool(enabled))


# ---- custom autograd.Function (its jvp staticmethod) -------------------------


def _input_tangents(args):
    """Per argument its tangent at the open level (None for non-tensors and
    tensors without one), or None when no argument has a tangent."""
    import ember

    found = False
    tangents = []
    for a in args:
        t = _C._fw_grad(a, _current_level) if isinstance(a, ember.Tensor) else None
        found = found or t is not None
        tangents.append(t)
    return tangents if found else None


def _run_custom_jvp(cls, ctx, tangents, outputs, args, kwargs):
    """Runs cls.jvp(ctx, *tangents) and gives each output its tangent."""
    import ember

    ctx._in_jvp = True
    was_enabled = _C._set_fwd_grad_enabled(False)
    try:
        if getattr(cls, "_jvp_from_backward", False):
            results = _jvp_from_backward(cls, args, kwargs, tangents)
        else:
            with ember.no_grad():
                results = cls.jvp(ctx, *tangents)
    finally:
        _C._set_fwd_grad_enabled(was_enabled)
        ctx._in_jvp = False
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    results = results if isinstance(results, tuple) else (results,)
    if len(results) != len(outs):
        raise RuntimeError(
            f"jvp() returned an incorrect number of tangents (was {len(results)} but expected {len(outs)})"
        )
    for out, tangent in zip(outs, results):
        if tangent is None or not isinstance(out, ember.Tensor):
            continue
        if not (out.is_floating_point() or out.is_complex()):
            continue
        _C._set_fw_grad(out, tangent, _current_level)


def _jvp_from_backward(cls, args, kwargs, tangents):
    """The outputs' tangents of a Function whose backward is itself
    differentiable (Ember's linear-algebra Functions), without a jvp of its
    own: J v is the gradient, with respect to u, of <vjp(u), v>."""
    import ember

    with ember.enable_grad():
        primals = [
            a.detach().requires_grad_() if t is not None else a for a, t in zip(args, tangents)
        ]
        outs = cls.apply(*primals, **kwargs)
        outs_t = outs if isinstance(outs, tuple) else (outs,)
        diff = [o for o in outs_t if isinstance(o, ember.Tensor) and o.requires_grad]
        us = [ember.zeros_like(o).requires_grad_() for o in diff]
        wrt = [p for p, t in zip(primals, tangents) if t is not None]
        vjps = ember.autograd.grad(diff, wrt, us, create_graph=True, allow_unused=True) if diff else []
        total = None
        for g, t in zip(vjps, [t for t in tangents if t is not None]):
            if g is not None:
                # the real inner product Re <vjp(u), v>: its gradient in u is J v,
                # for complex tensors too (PyTorch's conjugate Wirtinger gradients)
                term = (g.conj() * t).real.sum() if g.is_complex() or t.is_complex() else (g * t).sum()
                total = term if total is None else total + term
        jvps = [None] * len(us)
        if total is not None and total.requires_grad:
            jvps = ember.autograd.grad(total, us, allow_unused=True)
    found = iter(jvps)
    results = tuple(
        (next(found) if isinstance(o, ember.Tensor) and o.requires_grad else None) for o in outs_t
    )
    return results if isinstance(outs, tuple) else results[0]


def _is_dual(tensor):
    """Whether `tensor` carries a tangent at the open level (composites that
    skip their differentiable path for plain inputs check it)."""
    return _current_level >= 0 and tensor is not None and _C._fw_grad(tensor, _current_level) is not None
