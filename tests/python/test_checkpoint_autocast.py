"""Checkpointed regions under autocast recompute under the same autocast
settings (as PyTorch's checkpoint), so the recomputed tensors have the
dtypes backward expects."""

from __future__ import annotations

import pytest
from conftest import torch

import ember


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_recompute_under_the_forward_autocast(use_reentrant):
    results = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        lin, ln = lib.nn.Linear(8, 8), lib.nn.LayerNorm(8)

        def block(t, lib=lib, lin=lin, ln=ln):
            q = lin(ln(t)).view(2, 3, 2, 4).transpose(1, 2)
            return lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)

        x = lib.randn(2, 3, 8, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=use_reentrant)
            loss = y.float().pow(2).sum()
        loss.backward()
        results.append((str(y.dtype).split(".")[-1], round(loss.item(), 2), x.grad.shape))
    assert results[0] == results[1]
