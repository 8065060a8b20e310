"""autograd.Function under vmap, as PyTorch's torch.func runs it.

A Function applied to BatchedTensors takes the user's ``vmap`` staticmethod
when it has one. With ``generate_vmap_rule = True`` it runs as one node of
the physical tensors (the batch in dimension 0) whose forward, setup_context
and backward run the user's code under the vmap level again, on
BatchedTensors: the user writes per-sample code and autograd sees one
batched call (Note [Generated vmap rule])."""

from __future__ import annotations

import contextlib
import functools
from typing import NamedTuple

from ember._functorch.batched import LEVELS, BatchedTensor

_EXTENDING = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    batch_size: int
    randomness: str


def setup_context_required():
    return RuntimeError(
        "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must "
        f"override the setup_context staticmethod. {_EXTENDING}"
    )


def _level_entry(level):
    for entry in LEVELS:
        if entry[0] == level:
            return entry
    raise AssertionError(f"vmap level {level} is not active")


@contextlib.contextmanager
def _under_level(entry):
    """The vmap level of entry active (again, for a backward run after vmap returned)."""
    if any(e[0] == entry[0] for e in LEVELS):
        yield
        return
    from ember._functorch import dispatch  # (imports ember.autograd: not at import time)

    LEVELS.append(entry)
    dispatch.enter()
    try:
        yield
    finally:
        dispatch.exit_()
        LEVELS.remove(entry)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def apply_vmapped(cls, base_vmap, args, kwargs):
    """cls.apply(*args, **kwargs) with BatchedTensors among args."""
    level = max(a.level for a in args if isinstance(a, BatchedTensor))
    entry = _level_entry(level)
    batched = tuple(isinstance(a, BatchedTensor) and a.level == level for a in args)
    physical = [a.value if b else a for a, b in zip(args, batched)]
    if cls.vmap is not base_vmap:
        in_dims = tuple(0 if b else None for b in batched)
        outputs, out_dims = cls.vmap(VmapInfo(entry[1], entry[2]), in_dims, *physical, **kwargs)
        single = not isinstance(outputs, tuple)
        outputs, out_dims = _as_tuple(outputs), (out_dims,) if single else _as_tuple(out_dims)
        wrapped = tuple(
            o if d is None else BatchedTensor(o if d == 0 else o.movedim(d, 0), level)
            for o, d in zip(outputs, out_dims)
        )
        return wrapped[0] if single else wrapped
    if not cls.generate_vmap_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and "
            f"implement the vmap staticmethod or set generate_vmap_rule=True. {_EXTENDING}"
        )
    state = {}
    outputs = _generated_rule_class().apply(cls, entry, batched, kwargs, state, *physical)
    wrapped = tuple(BatchedTensor(o, level) if b else o for o, b in zip(outputs, state["batched_outputs"]))
    return wrapped if state["tuple_output"] else wrapped[0]


class _InnerCtx:
    """The ctx the user's setup_context and backward see under the generated rule."""

    to_save = ()
    non_differentiable = ()
    materialize_grads = True
    needs_input_grad = ()

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def mark_dirty(self, *args):
        raise RuntimeError("mark_dirty is not supported for an autograd.Function under vmap")

    def set_materialize_grads(self, value):
        self.materialize_grads = value

    @property
    def saved_tensors(self):
        return self.to_save


@functools.cache
def _generated_rule_class():
    from ember.autograd.function import Function  # (it imports this module)

    class GeneratedRule(Function):
        # Note [Generated vmap rule]
        # Applied to the physical tensors (cls, level entry, which inputs are
        # batched, kwargs, a dict for what forward learns, *inputs). forward
        # re-wraps the batched inputs and runs the user's forward under the
        # level; backward wraps the batched gradients likewise and returns,
        # per input, the physical gradient: a batched input's as it is, an
        # unbatched input's summed over the batch (it served every sample).
        generate_vmap_rule = True
        _seen_by_transforms = True  # nested vmap levels apply it again, level by level

        @staticmethod
        def forward(cls, entry, batched, kwargs, state, *physical):
            level = entry[0]
            args = tuple(BatchedTensor(p, level) if b else p for p, b in zip(physical, batched))
            with _under_level(entry):
                outputs = cls.forward(*args, **kwargs)
            state["args"], state["outputs"] = args, outputs
            state["tuple_output"] = isinstance(outputs, tuple)
            outputs = _as_tuple(outputs)
            flags = tuple(isinstance(o, BatchedTensor) and o.level == level for o in outputs)
            state["batched_outputs"] = flags
            return tuple(o.value if f else o for o, f in zip(outputs, flags))

        @staticmethod
        def setup_context(ctx, inputs, output):
            cls, entry, batched, _kwargs, state = inputs[:5]
            inner = _InnerCtx()
            inner.needs_input_grad = ctx.needs_input_grad[5:]
            with _under_level(entry):
                cls.setup_context(inner, state["args"], state["outputs"])
            ctx.inner, ctx.cls, ctx.entry, ctx.batched = inner, cls, entry, batched
            ctx.batched_outputs = state["batched_outputs"]
            user_outputs = _as_tuple(state["outputs"])
            dropped = [o for u, o in zip(user_outputs, output) if any(u is n for n in inner.non_differentiable)]
            if dropped:
                ctx.mark_non_differentiable(*dropped)
            ctx.set_materialize_grads(inner.materialize_grads)
            ctx.input_shapes = [tuple(p.shape) if hasattr(p, "shape") else None for p in inputs[5:]]

        @staticmethod
        def backward(ctx, *grads):
            level, size = ctx.entry[0], ctx.entry[1]
            grads = tuple(
                BatchedTensor(g, level) if f and g is not None else g for g, f in zip(grads, ctx.batched_outputs)
            )
            with _under_level(ctx.entry):
                results = _as_tuple(ctx.cls.backward(ctx.inner, *grads))
            physical = []
            for r, b, shape in zip(results, ctx.batched, ctx.input_shapes):
                batched_r = isinstance(r, BatchedTensor) and r.level == level
                if r is None:
                    physical.append(None)
                elif not b:
                    physical.append(r.value.sum(0) if batched_r else r)
                else:
                    physical.append(_per_sample_sum_to(r.value if batched_r else r.expand(size, *r.shape), shape))
            return (None, None, None, None, None, *physical)

    GeneratedRule.__name__ = GeneratedRule.__qualname__ = "GeneratedRule"
    return GeneratedRule


def _per_sample_sum_to(value, shape):
    """value (batch, *g) summed to (batch, *s), s expandable to g: what the
    engine does for each sample's gradient of an input of shape s."""
    if tuple(value.shape) == tuple(shape):
        return value
    lead = value.dim() - len(shape)
    return value.sum_to_size((shape[0],) + (1,) * lead + tuple(shape[1:])).reshape(shape)


