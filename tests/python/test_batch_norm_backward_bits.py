"""Batch norm gradients bit for bit with PyTorch's CPU kernels: contiguous
planes, rows of channels (channels-last and (N, C) inputs, whose partial
sums follow PyTorch's thread blocks), and other layouts (an expanded
gradient, a transposed input); training and eval, float and double, with
and without affine parameters."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

CASES = [
    ("bn1d_2d", (8, 4), "1d", {}),
    ("bn1d_2d_wide", (37, 19), "1d", {}),
    ("bn1d_3d", (4, 3, 5), "1d", {}),
    ("bn1d_3d_long", (3, 2, 29), "1d", {}),
    ("bn2d", (2, 3, 4, 4), "2d", {}),
    ("bn2d_odd", (3, 5, 7, 3), "2d", {}),
    ("bn2d_channels_last", (2, 11, 3, 5), "2d", {"channels_last": True}),
    ("bn2d_channels_last_wide", (3, 20, 2, 3), "2d", {"channels_last": True}),
    ("bn2d_no_affine", (2, 3, 6, 2), "2d", {"affine": False}),
    ("bn2d_double", (2, 3, 4, 5), "2d", {"dtype": "float64"}),
    ("bn3d", (2, 4, 3, 2, 5), "3d", {}),
    ("bn2d_transposed_input", (4, 3, 5, 2), "2d", {"transposed": True}),
]


def grads(lib, shape, kind, options, loss, train):
    dtype = getattr(lib, options.get("dtype", "float32"))
    g = lib.Generator().manual_seed(11)
    x = lib.randn(*shape, generator=g, dtype=dtype)
    if options.get("transposed"):
        x = x.transpose(2, 3).contiguous().transpose(2, 3)
    if options.get("channels_last"):
        x = x.contiguous(memory_format=lib.channels_last)
    x.requires_grad_()
    mod = getattr(lib.nn, f"BatchNorm{kind}")(shape[1], affine=options.get("affine", True)).to(dtype)
    if mod.weight is not None:
        with lib.no_grad():
            mod.weight.copy_(lib.rand(shape[1], generator=g, dtype=dtype) + 0.5)
            mod.bias.copy_(lib.randn(shape[1], generator=g, dtype=dtype))
    if not train:
        mod(x.detach())  # running statistics from one batch
        mod.eval()
    y = mod(x)
    if loss == "weighted":
        gy = lib.randn(y.shape, generator=g, dtype=dtype)
        y.backward(gy.contiguous(memory_format=lib.channels_last) if options.get("channels_last") else gy)
    elif loss == "sum":
        y.sum().backward()
    else:
        y.pow(2).mean().backward()
    out = [x.grad]
    if mod.weight is not None:
        out += [mod.weight.grad, mod.bias.grad]
    return [t.flatten().tolist() for t in out]


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("loss", ["weighted", "sum", "square_mean"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradients_bit_for_bit(case, loss, train):
    _, shape, kind, options = case
    ours = grads(ember, shape, kind, options, loss, train)
    theirs = grads(torch, shape, kind, options, loss, train)
    assert ours == theirs


def test_thread_blocks_follow_the_thread_count():
    # Rows of channels: PyTorch's partial sums depend on its thread count.
    before = (ember.get_num_threads(), torch.get_num_threads())
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            torch.set_num_threads(threads)
            args = ((53, 7), "1d", {}, "weighted", True)
            assert grads(ember, *args) == grads(torch, *args)
    finally:
        ember.set_num_threads(before[0])
        torch.set_num_threads(before[1])
