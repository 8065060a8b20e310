"""torch.hash_tensor against PyTorch: the xor of every element's 64-bit
pattern (floating types through double, the others through int64), whole or
per dim, and PyTorch's errors."""

import numpy as np
import pytest
import torch

import ember


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e).split("\n")[0]
    return r.dtype.__repr__().split(".")[-1], tuple(r.shape), [int(v) for v in np.asarray(r.tolist()).reshape(-1)]


DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.hash_tensor(x),
        lambda lib, x: lib.hash_tensor(x, 1),
        lambda lib, x: lib.hash_tensor(x, 0, keepdim=True),
        lambda lib, x: lib.hash_tensor(x, (0, 2)),
        lambda lib, x: lib.hash_tensor(x, []),
        lambda lib, x: x.hash_tensor(-1),
        lambda lib, x: lib.hash_tensor(x.transpose(0, 2)[::2], 1),
    ],
)
def test_hash_tensor_values(call, dtype):
    rng = np.random.default_rng(len(dtype))
    arr = rng.standard_normal((4, 5, 7)) * 50
    arr.reshape(-1)[:3] = [np.nan, np.inf, -0.0]

    def make(lib):
        t = lib.from_numpy(arr.copy())
        if dtype == "bool":
            return t > 0
        if dtype in ("int8", "uint8", "int16", "int32", "int64"):
            t = t.clamp(-100, 100).nan_to_num(0.0) + (100 if dtype == "uint8" else 0)
        return t.to(getattr(lib, dtype))

    assert _outcome(ember, lambda lib: call(lib, make(lib))) == _outcome(torch, lambda lib: call(lib, make(lib)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.hash_tensor(lib.ones(2, 3), mode=1),
        lambda lib: lib.hash_tensor(lib.ones(2, dtype=lib.complex64)),
        lambda lib: lib.hash_tensor(lib.ones(2, dtype=lib.uint32)),
        lambda lib: lib.hash_tensor(lib.empty(0)),
        lambda lib: lib.hash_tensor(lib.empty(2, 0), 1),
        lambda lib: lib.hash_tensor(lib.empty(0, 3), 1),
        lambda lib: lib.hash_tensor(lib.ones(2, 3), 2),
        lambda lib: lib.hash_tensor(lib.ones(2, 3), (0, 0)),
        lambda lib: lib.hash_tensor(lib.tensor(3.5)),
        lambda lib: lib.hash_tensor(lib.tensor(3.5), 0, keepdim=True),
        lambda lib: lib.hash_tensor(lib.ones(2, 3), out=lib.empty(0, dtype=lib.int64)),
        lambda lib: lib.hash_tensor(lib.ones(2, 3), 1, out=lib.empty(5, dtype=lib.uint64)),
    ],
)
def test_hash_tensor_edges_and_errors(fn):
    assert _outcome(ember, fn) == _outcome(torch, fn)


def test_hash_tensor_is_not_a_view_and_has_no_grad():
    for lib in (ember, torch):
        x = lib.tensor([[1, 2], [3, 4]])
        h = lib.hash_tensor(x.unsqueeze(-1), -1)
        h.view(lib.int64).fill_(0)
        assert x.tolist() == [[1, 2], [3, 4]]
        y = lib.ones(3, requires_grad=True)
        assert lib.hash_tensor(y).requires_grad is False
