"""Sample-input generators shared by the families: each returns a function
dtype -> [SampleInput] with broadcast shapes, non-contiguous layouts, empty
and 0-dim tensors, Python scalars and, for floats, edge values."""

from __future__ import annotations

import torch

from .core import SampleInput, make, transposed

EDGE_FLOATS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 0.5, -1.5, 1e-4, 2.0, -7.25]


def is_float(dtype):
    return dtype.is_floating_point


def scalar_for(dtype, value=2.5):
    """A Python number of the dtype's kind (bool -> True)."""
    if dtype == torch.bool:
        return True
    return value if is_float(dtype) else int(value)


def unary(low=-3.0, high=3.0, edge=True, extra=()):
    """One tensor: plain, 0-dim, empty, transposed, strided and edge values."""

    def gen(dtype):
        out = [
            SampleInput((make((2, 3), dtype, low, high, seed=1),), name="2x3"),
            SampleInput((make((), dtype, low, high, seed=2),), name="0-dim"),
            SampleInput((make((0, 3), dtype, low, high),), name="empty"),
            SampleInput(
                (transposed((3, 4), dtype, low=low, high=high, seed=3),), name="transposed"
            ),
            SampleInput((make((2, 3), dtype, low, high, seed=4, noncontig=True),), name="strided"),
        ]
        if edge and is_float(dtype):
            out.append(
                SampleInput(
                    (make((len(EDGE_FLOATS),), dtype, values=EDGE_FLOATS),), grad=False, name="edge"
                )
            )
        out += [
            SampleInput((make(s, dtype, low, high, seed=5),), kw, name=f"kw{i}")
            for i, (s, kw) in enumerate(extra)
        ]
        return out

    return gen


def binary(
    low=-3.0,
    high=3.0,
    rhs_low=None,
    rhs_high=None,
    scalar=2.5,
    scalar_first=False,
    mixed=True,
    edge=True,
):
    """Two operands: same shape, broadcast one way and both ways, 0-dim,
    transposed against strided, empty, a Python scalar, a 0-dim float64
    operand (type promotion), and edge values against edge values."""
    rl = low if rhs_low is None else rhs_low
    rh = high if rhs_high is None else rhs_high

    def gen(dtype):
        a = lambda shape, seed, **kw: make(shape, dtype, low, high, seed=seed, **kw)
        b = lambda shape, seed, **kw: make(shape, dtype, rl, rh, seed=seed, **kw)
        out = [
            SampleInput((a((2, 3), 1), b((2, 3), 2)), name="same"),
            SampleInput((a((2, 3), 3), b((3,), 4)), name="broadcast"),
            SampleInput((a((2, 1), 5), b((1, 3), 6)), name="broadcast-both"),
            SampleInput((a((), 7), b((2, 3), 8)), name="0-dim-lhs"),
            SampleInput(
                (
                    transposed((3, 4), dtype, low=low, high=high, seed=9),
                    make((3, 4), dtype, rl, rh, seed=10, noncontig=True),
                ),
                name="noncontig",
            ),
            SampleInput((a((0, 3), 11), b((3,), 12)), name="empty"),
        ]
        if scalar is not None:
            out.append(SampleInput((a((2, 3), 13), scalar_for(dtype, scalar)), name="scalar"))
            if scalar_first:
                out.append(
                    SampleInput((scalar_for(dtype, scalar), b((2, 3), 14)), name="scalar-first")
                )
        if mixed:
            out.append(
                SampleInput(
                    (a((2, 3), 15), make((), torch.float64, rl, rh, seed=16)),
                    grad=False,
                    name="0-dim-f64",
                )
            )
        if edge and is_float(dtype):
            e = make((len(EDGE_FLOATS),), dtype, values=EDGE_FLOATS)
            out.append(SampleInput((e, e.flip(0).clone()), grad=False, name="edge"))
        return out

    return gen


def binary_errors(lib=None):
    """Shapes that do not broadcast."""
    return [
        SampleInput((make((2, 3), torch.float32), make((4,), torch.float32)), name="no-broadcast")
    ]


def ternary(low=-3.0, high=3.0, third=None, third_low=None, third_high=None):
    """Three operands (lerp, addcmul, where ...): same shapes, broadcast, strided, 0-dim, empty;
    `third` replaces the third operand by a Python scalar in one extra sample."""
    tl = low if third_low is None else third_low
    th = high if third_high is None else third_high

    def gen(dtype):
        a = lambda shape, seed, lo=low, hi=high, **kw: make(shape, dtype, lo, hi, seed=seed, **kw)
        out = [
            SampleInput((a((2, 3), 1), a((2, 3), 2), a((2, 3), 3, tl, th)), name="same"),
            SampleInput((a((2, 3), 4), a((3,), 5), a((2, 1), 6, tl, th)), name="broadcast"),
            SampleInput((a((), 7), a((), 8), a((), 9, tl, th)), name="0-dim"),
            SampleInput(
                (
                    transposed((3, 4), dtype, low=low, high=high, seed=10),
                    a((3, 4), 11, noncontig=True),
                    a((3, 4), 12, tl, th),
                ),
                name="noncontig",
            ),
            SampleInput((a((0, 3), 13), a((0, 3), 14), a((3,), 15, tl, th)), name="empty"),
        ]
        if third is not None:
            out.append(
                SampleInput((a((2, 3), 16), a((2, 3), 17), scalar_for(dtype, third)), name="scalar")
            )
        return out

    return gen


def reduction(
    low=-3.0, high=3.0, dims=True, keepdim=True, dim_kw="dim", full=True, multi_dim=True, empty=True
):
    """One tensor reduced: the whole tensor, along a dim (negative too), keepdim,
    several dims, a 0-dim input, an empty input, a transposed input."""

    def gen(dtype):
        a = lambda shape, seed, **kw: make(shape, dtype, low, high, seed=seed, **kw)
        out = []
        if full:
            out += [
                SampleInput((a((2, 3), 1),), name="all"),
                SampleInput((a((), 2),), name="0-dim"),
            ]
        if dims:
            out += [
                SampleInput((a((2, 3, 4), 3), 1), name="dim"),
                SampleInput(
                    (transposed((3, 4), dtype, low=low, high=high, seed=4), -1),
                    name="dim-transposed",
                ),
                SampleInput((a((), 9), 0), name="0-dim-dim"),
            ]
            if keepdim:
                out.append(SampleInput((a((2, 3), 5), 0), {"keepdim": True}, name="keepdim"))
            if multi_dim:
                out.append(SampleInput((a((2, 3, 4), 6), (0, 2)), name="dims"))
            if empty:
                out.append(SampleInput((a((0, 3), 7), 1), name="empty"))
        return out

    return gen


def dim_out_of_range():
    """A dim past the last one."""
    return [SampleInput((make((2, 3), torch.float32), 5), name="dim-out-of-range")]
