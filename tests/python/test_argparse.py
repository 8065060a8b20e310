"""Python argument handling of generated bindings: positional/keyword rules,
varargs sizes, defaults, and PyTorch's TypeError messages."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

SAME_MESSAGE = [
    "lib.add(a, 'x')",
    "lib.add(a)",
    "lib.add(a, b, foo=1)",
    "a.add('x')",
    "lib.zeros('a')",
    "lib.zeros(2, dtype=3)",
    "lib.add(a, b, alpha='x')",
    "lib.ones(-1)",
    "a.sum(5)",
    "lib.cat(a)",
    "a.expand(3, 3)",
    "lib.ones(2, dtype=lib.float32, requires_grad=1)",
]


def outcome(expr, lib):
    a, b = lib.ones(2), lib.ones(2)  # noqa: F841  names the expressions use
    try:
        eval(expr)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("expr", SAME_MESSAGE)
def test_error_type_and_message(expr):
    assert outcome(expr, ember) == outcome(expr, torch)


# `int[1]? dim` without a default may be None but must be given, as in
# PyTorch: sum/mean with keepdim= and no dim match no overload.
@pytest.mark.parametrize(
    "expr",
    [
        "lib.sum(a, dim='x')",
        "a.view(2, 'x')",
        "lib.cat([a, 1])",
        "lib.sum(a, keepdim=True)",
        "a.sum(keepdim=True)",
        "lib.mean(a, keepdim=True)",
        "a.mean(keepdim=False, dtype=lib.float64)",
    ],
)
def test_error_type(expr):
    assert outcome(expr, ember)[0] == outcome(expr, torch)[0]


@pytest.mark.parametrize(
    "expr",
    [
        "lib.zeros(2, 3).shape",
        "lib.zeros((2, 3)).shape",
        "lib.zeros([2, 3]).shape",
        "lib.zeros(lib.Size([2, 3])).shape",
        "lib.ones(2, 3).view(3, 2).shape",
        "lib.ones(2, 3).view((3, 2)).shape",
        "lib.ones(2, 3).view(-1).shape",
        "lib.ones(2, 3).sum(1).tolist()",
        "lib.ones(2, 3).sum((0, 1)).tolist()",
        "lib.ones(2, 3).sum(dim=[1], keepdim=True).shape",
        "lib.ones(2, 3).sum(dtype=lib.float64).dtype",
        "lib.ones(2, 3).sum(None, True).shape",
        "lib.ones(2, 3).mean(dim=None, keepdim=True).shape",
        "lib.ones(2, 3).any(keepdim=True).shape",
        "lib.all(lib.ones(2, 3), None).shape",
        "lib.add(lib.ones(2), lib.ones(2), alpha=3).tolist()",
        "lib.add(input=lib.ones(2), other=2).tolist()",
        "lib.ones(2, 3).permute(1, 0).shape",
        "lib.ones(2, 3).permute((1, 0)).shape",
        "lib.full((2,), 7).dtype",
        "lib.full((2,), 7.5).dtype",
        "lib.full((2,), True).dtype",
        "lib.zeros(2, dtype=float).dtype",
        "lib.zeros(2, dtype=int).dtype",
        "lib.zeros(2, dtype=bool).dtype",
        "lib.ones(2, requires_grad=True).requires_grad",
    ],
)
def test_accepted_forms(expr):
    def run(lib):
        return repr(eval(expr, {"lib": lib}))

    assert run(ember) == run(torch)


# NumPy's argument names, which PyTorch's parser takes for dim, keepdim, input and other.
_NUMPY_NAMED_CALLS = [
    lambda m, t: m.sum(t, axis=0),
    lambda m, t: t.sum(axis=1),
    lambda m, t: t.mean(axis=0, keepdims=True),
    lambda m, t: m.max(t, axis=1),
    lambda m, t: m.cat([t, t], axis=0),
    lambda m, t: m.stack([t, t], axis=1),
    lambda m, t: t.argmax(axis=1),
    lambda m, t: m.linalg.vector_norm(x=t),
    lambda m, t: m.std(t, axis=0),
    lambda m, t: m.cumsum(t, axis=0),
    lambda m, t: m.squeeze(t.unsqueeze(0), axis=0),
    lambda m, t: m.linalg.cholesky(x=m.eye(2)),
    lambda m, t: m.any(t > 1, axis=0),
    lambda m, t: m.amax(t, axis=0, keepdims=True),
    lambda m, t: m.logsumexp(t, axis=1),
    lambda m, t: m.sort(t, axis=0),
    lambda m, t: m.var(t, axis=1, keepdims=True),
    lambda m, t: m.unbind(t, axis=1),
    lambda m, t: m.maximum(t, x2=t),
    lambda m, t: m.linalg.eigh(A=m.eye(2)),
    lambda m, t: m.linalg.vector_norm(t, axis=0, dim=1),
]


@pytest.mark.parametrize("call", range(len(_NUMPY_NAMED_CALLS)))
def test_numpy_argument_names(call):
    def run(m):
        try:
            return str(_NUMPY_NAMED_CALLS[call](m, m.arange(6.0).reshape(2, 3)))
        except Exception as e:  # noqa: BLE001 - the type and text are compared
            return type(e).__name__, str(e)

    assert run(ember) == run(torch)
