"""Rows of the views, shape functions, copies, joining and splitting."""

from __future__ import annotations

import torch

from .core import SampleInput, make, transposed
from .families import view

T = "T"  # marks a spec whose input is transposed in memory


class Like:
    """An argument tensor of the sample's dtype and this shape."""

    def __init__(self, *shape):
        self.shape = shape


def specs(*cases):
    """Samples from (shape, args[, kwargs]) specs; a shape starting with T is
    built transposed; Like(...) arguments become tensors of the sample dtype."""

    def gen(dtype):
        out = []
        for i, case in enumerate(cases):
            shape, args, kwargs = case if len(case) == 3 else (*case, {})
            if shape and shape[0] == T:
                x = transposed(shape[1:], dtype, seed=i)
            else:
                x = make(shape, dtype, seed=i)
            args = tuple(make(a.shape, dtype, seed=50 + i) if isinstance(a, Like) else a for a in args)
            out.append(SampleInput((x, *args), dict(kwargs), name=f"{'x'.join(map(str, shape))}{list(args)}"))
        return out

    return gen


def _tensors(dtype, shapes, seed=0):
    return [make(s, dtype, seed=seed + i) for i, s in enumerate(shapes)]


def _join_samples(dtype):
    return [
        SampleInput((_tensors(dtype, [(2, 3), (1, 3)]),), name="dim0"),
        SampleInput((_tensors(dtype, [(2, 3), (2, 1)]), 1), name="dim1"),
        SampleInput((_tensors(dtype, [(2, 3), (0, 3)]),), name="empty"),
        SampleInput(([transposed((3, 2), dtype), make((1, 2), dtype)], 0), name="transposed"),
        SampleInput((_tensors(dtype, [(2, 3), (2, 4)]),), grad=False, name="mismatch"),
    ]


def _stack_samples(dtype):
    return [
        SampleInput((_tensors(dtype, [(2, 3), (2, 3)]),), name="dim0"),
        SampleInput((_tensors(dtype, [(2, 3), (2, 3)]), -1), name="last"),
        SampleInput(([make((), dtype), make((), dtype, seed=1)],), name="0-dim"),
        SampleInput((_tensors(dtype, [(2, 3), (3, 2)]),), grad=False, name="mismatch"),
    ]


def _cat(m, tensors, *args, **kwargs):
    return m.cat(tensors, *args, **kwargs)


def _stack(m, tensors, *args, **kwargs):
    return m.stack(tensors, *args, **kwargs)


IDX = torch.tensor([1, 4])
REPEATS = torch.tensor([1, 0, 2])

ROWS = [
    view(
        "view",
        specs(
            ((2, 3), ((3, 2),)),
            ((2, 3), ((-1,),)),
            ((), ((1,),)),
            ((0, 3), ((3, 0),)),
            ((T, 3, 4), ((12,),)),
            ((2, 3), ((4,),)),
        ),
        call=".view",
        method=False,
    ),
    view(
        "view",
        specs(((2, 4), (torch.uint8,)), ((2, 4), (torch.int16,)), ((2, 4), (torch.float32,))),
        variant="dtype",
        call=".view",
        method=False,
        supports_grad=False,
        supports_gradgrad=False,
    ),
    view(
        "reshape",
        specs(
            ((2, 3), ((3, 2),)),
            ((2, 3), ((-1,),)),
            ((), ((1,),)),
            ((0, 3), ((3, 0),)),
            ((T, 3, 4), ((12,),)),
            ((T, 3, 4), ((2, 2, 3),)),
            ((2, 3), ((4,),)),
        ),
    ),
    view(
        "unsqueeze",
        specs(((2, 3), (0,)), ((2, 3), (-1,)), ((), (0,)), ((T, 3, 4), (1,)), ((2, 3), (3,))),
    ),
    view(
        "permute",
        specs(((2, 3, 4), ((2, 0, 1),)), ((T, 3, 4), ((1, 0),)), ((), ((),)), ((2, 3), ((0, 0),))),
    ),
    view(
        "expand",
        specs(((3, 1), ((3, 4),)), ((1,), ((2, 3),)), ((3, 1), ((-1, 4),)), ((2, 3), ((4, 3),))),
        call=".expand",
        method=False,
    ),
    view("as_strided", specs(((3, 4), ((2, 2), (1, 2))), ((3, 4), ((2,), (3,), 1)))),
    view(
        "narrow",
        specs(((3, 4), (1, 1, 2)), ((3, 4), (0, -2, 1)), ((T, 3, 4), (0, 1, 2)), ((3, 4), (0, 2, 5))),
    ),
    view("unbind", specs(((2, 3), ()), ((2, 3), (1,)), ((T, 3, 4), (0,)))),
    view("select", specs(((2, 3), (1, -1)), ((2, 3), (0, 1)), ((T, 3, 4), (1, 2)), ((2, 3), (0, 5)))),
    view(
        "transpose",
        specs(((2, 3, 4), (0, 2)), ((), (0, -1)), ((T, 3, 4), (0, 1)), ((2, 3), (0, 2))),
    ),
    view("t", specs(((2, 3), ()), ((3,), ()), ((), ()), ((2, 3, 4), ()))),
    view("adjoint", specs(((2, 3), ()), ((2, 3, 4), ()), ((T, 3, 4), ()), ((3,), ()))),
    view("swapaxes", specs(((2, 3, 4), (0, 2)), ((T, 3, 4), (0, 1)))),
    view("swapdims", specs(((2, 3, 4), (0, 2)), ((T, 3, 4), (1, 0)))),
    view(
        "squeeze",
        specs(((1, 3, 1), ()), ((1, 3, 1), (0,)), ((1, 3, 1), ((0, 2),)), ((), ()), ((2, 3), (0,))),
    ),
    view("split", specs(((5, 2), (2,)), ((5, 2), (1, 1)), ((5, 2), ([2, 3],)), ((0, 2), (1,)))),
    view("split_with_sizes", specs(((5, 2), ([2, 3],)), ((5, 2), ([1, 1], 1)), ((5, 2), ([2, 2],)))),
    view("chunk", specs(((5, 2), (2,)), ((5, 2), (3, 0)), ((2, 6), (4, 1)))),
    view(
        "tensor_split",
        specs(((7, 2), (3,)), ((7, 2), ([1, 4],)), ((7, 2), (IDX,)), ((T, 3, 4), (2, 1))),
    ),
    view(
        "flatten",
        specs(((2, 3, 4), ()), ((2, 3, 4), (1,)), ((2, 3, 4), (0, 1)), ((), ()), ((T, 3, 4), ())),
    ),
    view("unflatten", specs(((2, 12), (1, (3, 4))), ((2, 12), (1, (-1, 4))), ((2, 12), (1, (5, 4))))),
    view("movedim", specs(((2, 3, 4), (0, 2)), ((2, 3, 4), ((0, 1), (2, 0))))),
    view("moveaxis", specs(((2, 3, 4), (0, 2)), ((2, 3, 4), ((0, 1), (2, 0))))),
    view(
        "expand_as",
        specs(((3, 1), (Like(3, 4),)), ((1,), (Like(2, 3),))),
        call=".expand_as",
        method=False,
    ),
    view(
        "view_as",
        specs(((2, 3), (Like(3, 2),)), ((2, 3), (Like(6),))),
        call=".view_as",
        method=False,
    ),
    view(
        "reshape_as",
        specs(((2, 3), (Like(3, 2),)), ((T, 3, 4), (Like(12),))),
        call=".reshape_as",
        method=False,
    ),
    view(
        "unfold",
        specs(((6,), (0, 2, 1)), ((3, 6), (1, 3, 2)), ((3, 6), (1, 7, 1))),
        call=".unfold",
        method=False,
    ),
    view("diagonal", specs(((3, 4), ()), ((3, 4), (1,)), ((2, 3, 4), (0, 1, 2)), ((3, 4), (-1,)))),
    view("contiguous", specs(((T, 3, 4), ()), ((2, 3), ())), call=".contiguous", method=False),
    view("clone", specs(((2, 3), ()), ((T, 3, 4), ()), ((), ()))),
    view(
        "to",
        specs(
            ((2, 3), (torch.float64,)),
            ((2, 3), (torch.int32,)),
            ((T, 3, 4), (torch.float32,)),
            ((2, 3), ("cpu",)),
        ),
        call=".to",
        method=False,
    ),
    view("flip", specs(((2, 3), ((0,),)), ((2, 3, 4), ((0, 2),)), ((T, 3, 4), ((1,),)), ((), ((),)))),
    view("fliplr", specs(((2, 3), ()), ((T, 3, 4), ()), ((3,), ()))),
    view("flipud", specs(((2, 3), ()), ((T, 3, 4), ()))),
    view(
        "roll",
        specs(((2, 3), (1,)), ((2, 3), (1, 1)), ((2, 3), ((1, -1), (0, 1))), ((T, 3, 4), (2, 0))),
    ),
    view(
        "repeat",
        specs(((2, 3), ((2, 1),)), ((3,), ((2, 2),)), ((2, 3), ((2,),))),
        call=".repeat",
        method=False,
    ),
    view("tile", specs(((2, 3), ((2,),)), ((2, 3), ((2, 1, 2),)), ((T, 3, 4), ((1, 2),)))),
    view(
        "tril",
        specs(((3, 4), ()), ((3, 4), (1,)), ((3, 4), (-1,)), ((2, 3, 4), ()), ((T, 3, 4), ())),
    ),
    view(
        "triu",
        specs(((3, 4), ()), ((3, 4), (1,)), ((3, 4), (-1,)), ((2, 3, 4), ()), ((T, 3, 4), ())),
    ),
    view("diag", specs(((3,), ()), ((3, 4), ()), ((3,), (1,)), ((3, 4), (-1,)), ((2, 3, 4), ()))),
    view(
        "repeat_interleave",
        specs(((3,), (2,)), ((2, 3), (2, 0)), ((2, 3), (REPEATS, 1)), ((T, 3, 4), (2, 1))),
    ),
    view("cat", _join_samples, call=_cat, method=False),
    view("stack", _stack_samples, call=_stack, method=False),
]
