"""autograd.Function under torch.func transforms (generated vmap rule, the
user's vmap staticmethod, PyTorch's errors), compared with PyTorch."""

from __future__ import annotations

import pytest
import torch

import ember


def _functions(L):
    class Square(L.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class CubeAndSlope(L.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, scale):
            return x**3 * scale, 3 * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], inputs[1], output[1])

        @staticmethod
        def backward(ctx, g, g_slope):
            x, scale, slope = ctx.saved_tensors
            return g * slope * scale + g_slope * 6 * x, g * x**3

    class OldStyle(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoVmap(L.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class OwnVmap(NoVmap):
        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2 + info.batch_size, in_dims[0]

    return Square, CubeAndSlope, OldStyle, NoVmap, OwnVmap


CASES = {
    "vmap_of_grad": lambda L, F, x, w: L.func.vmap(L.func.grad(lambda a: F[0].apply(a).sum()))(x),
    "grad_of_vmap": lambda L, F, x, w: L.func.grad(lambda a: L.func.vmap(F[0].apply)(a).sum())(x),
    "jacrev": lambda L, F, x, w: L.func.jacrev(F[0].apply)(x[0]),
    "vmap_of_jacrev": lambda L, F, x, w: L.func.vmap(L.func.jacrev(F[0].apply))(x),
    "two_outputs_vmap_of_grad": lambda L, F, x, w: L.func.vmap(
        L.func.grad(lambda a, s: sum(o.sum() for o in F[1].apply(a, s)), argnums=(0, 1)), in_dims=(0, None)
    )(x, w),
    "unbatched_input_grad": lambda L, F, x, w: L.func.grad(
        lambda s: L.func.vmap(lambda a: F[1].apply(a, s)[0].sum())(x).sum()
    )(w),
    "backward_after_vmap": lambda L, F, x, w: _backward_after_vmap(L, F, x),
    "own_vmap_rule": lambda L, F, x, w: L.func.vmap(F[4].apply)(x),
}


def _backward_after_vmap(L, F, x):
    leaf = x.clone().requires_grad_()
    L.func.vmap(F[1].apply, in_dims=(0, None))(leaf, L.tensor(1.5, dtype=x.dtype))[0].sum().backward()
    return leaf.grad


@pytest.mark.parametrize("case", sorted(CASES))
def test_custom_function_under_transforms_as_torch(case):
    results = []
    for L in (torch, ember):
        F = _functions(L)
        x = L.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=L.float64)
        w = L.tensor(0.75, dtype=L.float64)
        out = CASES[case](L, F, x, w)
        results.append([t.tolist() for t in (out if isinstance(out, tuple) else (out,))])
    assert results[1] == results[0]


@pytest.mark.parametrize(
    "case",
    [
        lambda L, F: L.func.grad(lambda a: F[2].apply(a).sum())(L.ones(3)),
        lambda L, F: L.func.vmap(F[2].apply)(L.ones(2, 3)),
        lambda L, F: L.func.jacrev(F[2].apply)(L.ones(3)),
        lambda L, F: L.func.vmap(F[3].apply)(L.ones(2, 3)),
    ],
)
def test_custom_function_transform_errors_as_torch(case):
    messages = []
    for L in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            case(L, _functions(L))
        messages.append(str(info.value).split(" For more details")[0].replace("NoVmap", "F"))
    assert messages[1] == messages[0]


def test_old_style_function_outside_transforms_still_works():
    F = _functions(ember)
    x = ember.ones(3, requires_grad=True)
    F[2].apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
