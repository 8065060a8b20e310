"""Warnings PyTorch gives that Ember gives too, against torch: the category, the
text, how often, and that each points at the caller's line (this file)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from conftest import torch

import ember


def record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message), w.filename) for w in caught]


def same_warnings(case, pytorch_points_here=True):
    """case(lib) warns in Ember as in PyTorch; Ember's warnings point at this file."""
    got, want = record(lambda: case(ember)), record(lambda: case(torch))
    assert [(c, m) for c, m, _ in got] == [(c, m) for c, m, _ in want]
    assert got, "the case warns"
    assert all(f == __file__ for _, _, f in got)
    if pytorch_points_here:
        assert all(f == __file__ for _, _, f in want)


@pytest.mark.parametrize("align_corners", [None, False, True])
def test_grid_sample_and_affine_grid_default_align_corners(align_corners):
    def case(lib):
        F = lib.nn.functional
        theta = lib.tensor([[[1.0, 0.2, 0.0], [0.1, 0.9, 0.1]]])
        grid = F.affine_grid(theta, (1, 1, 3, 3), align_corners=align_corners)
        F.grid_sample(lib.arange(9.0).reshape(1, 1, 3, 3), grid, align_corners=align_corners)
        F.grid_sample(lib.arange(9.0).reshape(1, 1, 3, 3), grid, mode="nearest", align_corners=align_corners)

    if align_corners is None:
        same_warnings(case)
    else:
        assert record(lambda: case(ember)) == record(lambda: case(torch)) == []


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.upsample(x, scale_factor=2),
        lambda F, x: F.upsample(x, size=(4, 6), mode="bilinear", align_corners=False),
        lambda F, x: F.upsample_nearest(x, scale_factor=2),
        lambda F, x: F.upsample_bilinear(x, size=(3, 5)),
    ],
)
def test_upsample_deprecations(call):
    same_warnings(lambda lib: call(lib.nn.functional, lib.arange(6.0).reshape(1, 1, 2, 3)))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, F, x: F.mse_loss(x, x, size_average=True),
        lambda lib, F, x: F.mse_loss(x, x, reduce=False),
        lambda lib, F, x: F.l1_loss(x, x, size_average=False, reduce=True),
        lambda lib, F, x: F.nll_loss(x.log_softmax(1), lib.tensor([0, 1, 2]), reduce=False),
        lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 1, 2]), size_average=False),
        lambda lib, F, x: F.kl_div(x, x, reduce=False),
        lambda lib, F, x: F.soft_margin_loss(x, x, size_average=True),
        lambda lib, F, x: lib.nn.MSELoss(size_average=False),
        lambda lib, F, x: lib.nn.CrossEntropyLoss(reduce=False),
    ],
)
def test_legacy_reduction_arguments(call):
    # PyTorch's own warning points inside torch.nn (functional.py, loss.py); Ember's at the caller.
    same_warnings(lambda lib: call(lib, lib.nn.functional, lib.linspace(-1.0, 1.0, 12).reshape(3, 4)), False)


def test_list_of_ndarrays_warns_once():
    """PyTorch warns once a process: each library runs in a fresh one."""
    program = textwrap.dedent(
        """
        import sys, warnings
        import numpy as np
        lib = __import__(sys.argv[1])
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.tensor([np.array([]), np.array([])])
            lib.tensor([np.float64(1.0), np.float32(2.0)])
            lib.tensor([[np.array([1.0, 2.0])]])
            lib.tensor((np.array([1.0, 2.0]), np.array([3.0, 4.0])))
            lib.as_tensor([np.array([1, 2])])
        for w in caught:
            print(w.category.__name__, str(w.message), w.filename, w.lineno)
        """
    )
    out = [
        subprocess.run(
            [sys.executable, "-c", program, name], capture_output=True, text=True, check=True, timeout=120
        ).stdout
        for name in ("ember", "torch")
    ]
    assert out[0] == out[1]
    assert out[0].count("\n") == 1 and "extremely slow" in out[0] and "<string> 10" in out[0]


def test_list_of_ndarrays_warning_in_process():
    from ember import _tensor

    saved = list(_tensor._NDARRAY_LIST_WARNED)
    _tensor._NDARRAY_LIST_WARNED.clear()
    try:
        caught = record(lambda: ember.tensor([np.array([1.0]), np.array([2.0])]))
    finally:
        _tensor._NDARRAY_LIST_WARNED[:] = saved or [True]
    assert [(c, f) for c, _, f in caught] == [(UserWarning, __file__)]
    assert str(caught[0][1]).startswith("Creating a tensor from a list of numpy.ndarrays is extremely slow.")


def test_grad_of_a_non_leaf_warns_on_each_read():
    def case(lib):
        x = lib.randn(3, requires_grad=True)
        y = x * 2
        assert y.grad is None and x.grad is None
        kept = x * 3
        kept.retain_grad()
        assert kept.grad is None
        with lib.no_grad():
            assert (x * 2).grad is None
        assert y.grad is None

    got, want = record(lambda: case(ember)), record(lambda: case(torch))
    assert len(got) == len(want) == 2
    for (c, m, f), (tc, tm, _) in zip(got, want):
        assert c is tc is UserWarning and f == __file__
        assert tm.startswith(m) and m.endswith("for more information.")
