"""Fuzzing leftovers (round 10), each against PyTorch: narrow with a tensor start,
permute with tensor dims as varargs, pooling windows beyond an int, kron
of operands whose product cannot be viewed into the result, and index_fill's
value checks."""

import pytest
import torch

import ember


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type and first line are compared
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", r.tolist() if hasattr(r, "tolist") else tuple(r)


CASES = {
    "narrow_tensor_start": lambda L: L.arange(6).narrow(0, L.tensor(2), 3),
    "narrow_float_start": lambda L: L.arange(6).narrow(0, L.tensor(2.0), 3),
    "narrow_1d_start": lambda L: L.arange(6).narrow(0, L.tensor([2]), 3),
    "narrow_bool_start": lambda L: L.arange(6).narrow(0, L.tensor(True), 3),
    "narrow_fn_tensor_start": lambda L: L.narrow(L.arange(6).reshape(2, 3), 1, L.tensor(-2), 2),
    "permute_tensor_varargs": lambda L: L.ones(2, 3, 4).permute(L.tensor(2), L.tensor(0), 1).shape,
    "permute_float_tensor": lambda L: L.ones(2, 3).permute(L.tensor(1.0), 0).shape,
    "view_tensor_varargs": lambda L: L.arange(6).view(L.tensor(2), 3).shape,
    "avg_pool2d_kernel": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 4, 4), 2**40),
    "avg_pool2d_stride": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 4, 4), 2, 2**62),
    "avg_pool2d_padding": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 4, 4), 2, 1, -(2**40)),
    "avg_pool1d_kernel": lambda L: L.nn.functional.avg_pool1d(L.ones(1, 1, 4), 2**40),
    "max_pool2d_kernel": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 2**40),
    "max_pool2d_stride": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 2, 2**62),
    "max_pool2d_padding": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 2, 1, 2**40),
    "max_pool2d_dilation": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 2, 1, 0, 2**40),
    "avg_pool3d_stride": lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 4, 4, 4), 2, 2**40),
    "lp_pool2d_stride": lambda L: L.nn.functional.lp_pool2d(L.ones(1, 1, 4, 4), 2, 2, 2**40),
    "pool_int_max_ok": lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 4, 4), 2, 2**31 - 1),
    "kron_not_viewable": lambda L: L.kron(L.ones(2, 3).t(), L.arange(4.0).reshape(2, 2).flip(1)),
    "kron_transposed": lambda L: L.kron(L.ones(2, 3).t(), L.arange(6.0).reshape(2, 3).t()),
    "index_fill_complex_into_real": lambda L: L.zeros(2, 3).index_fill(1, L.tensor([0]), 1 + 2j),
    "index_fill_overflow": lambda L: L.zeros(2, dtype=L.uint8).index_fill(0, L.tensor([0]), 300),
    "index_fill_half_overflow": lambda L: L.zeros(2, dtype=L.float16).index_fill(0, L.tensor([0]), 1e5),
    "index_fill_complex_tensor": lambda L: L.view_as_real(
        L.zeros(2, dtype=L.complex64).index_fill(0, L.tensor([1]), L.tensor(1 + 2j))
    ),
    "index_fill_complex_tensor_into_real": lambda L: L.zeros(2).index_fill(0, L.tensor([1]), L.tensor(1 + 2j)),
    "kron_expanded": lambda L: L.kron(L.ones(2, 1).expand(2, 3), L.arange(4.0).reshape(2, 2)),
    "kron_vectors": lambda L: L.kron(L.arange(3.0), L.arange(2.0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch(name):
    fn = CASES[name]
    assert _outcome(ember, fn) == _outcome(torch, fn)
