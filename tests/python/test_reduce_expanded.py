"""max/min/amax/amin/all/any over expanded inputs (stride-0 dims, which
these reductions read once): PyTorch's values, shapes and dtypes."""

import pytest
from conftest import torch

import ember

CASES = [
    ((5,), (4, 5), None),
    ((5,), (4, 5), 0),
    ((5,), (4, 5), 1),
    ((1, 5), (3, 4, 5), (0, 2)),
    ((3, 1), (3, 6), 1),
    ((3, 1), (3, 6), (0, 1)),
    ((1,), (1000,), None),
    ((2, 1, 4), (2, 7, 4), (1, 2)),
    ((0,), (3, 0), 0),
]
VALUES = [[1.5, -2.0, float("nan"), 0.0, -0.0], [0.0, -0.0, 3.0, -3.0, 2.0], [-0.0, 0.0, 1.0, 1.0, -7.0]]


def _make(lib, base, shape, values):
    n = 1
    for s in base:
        n *= s
    return lib.tensor((values * 2000)[:n]).reshape(base).expand(*shape)


@pytest.mark.parametrize("values", VALUES)
@pytest.mark.parametrize("base, shape, dim", CASES)
@pytest.mark.parametrize("name", ["amax", "amin", "all", "any", "max", "min"])
def test_reduce_expanded(name, base, shape, dim, values):
    def run(lib):
        x = _make(lib, base, shape, values)
        if name in ("all", "any"):
            x = x > 0.5
        try:
            if dim is None:
                r = getattr(x, name)()
            elif name in ("max", "min"):
                if isinstance(dim, tuple):
                    return "skip"
                r = getattr(x, name)(dim, keepdim=True).values
            else:
                r = getattr(x, name)(dim, keepdim=True) if name in ("amax", "amin") else getattr(x, name)(dim)
        except Exception as e:  # the exception's type is the comparison
            return type(e).__name__
        return str(r.dtype).split(".")[-1], tuple(r.shape), [str(v) for v in r.reshape(-1).tolist()]

    assert run(ember) == run(torch)
