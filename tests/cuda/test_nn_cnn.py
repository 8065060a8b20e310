"""A small CNN (convolutions, batch norm, ReLU, max and adaptive average
pooling, dropout off, a linear head) trained for a few SGD steps on CUDA:
the losses against PyTorch's for the same weights and data."""

from __future__ import annotations

import pytest
import torch
from _compare import DEVICE, TORCH_DEVICE, to_torch

import ember

pytestmark = pytest.mark.requires_cuda


def build(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1, groups=2),
        nn.GroupNorm(4, 16),
        nn.ReLU(),
        nn.AvgPool2d(2),
        nn.Conv2d(16, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    )


def copy_weights(src_torch, dst_ember):
    for (name, p_t), (_, p_e) in zip(src_torch.state_dict().items(), dst_ember.state_dict().items()):
        p_e.copy_(ember.from_numpy(p_t.detach().cpu().numpy().copy()))


@pytest.mark.parametrize("steps", [5])
def test_cnn_training_losses_match(steps):
    saved = (ember.backends.cudnn.allow_tf32, torch.backends.cudnn.allow_tf32)
    ember.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        torch.manual_seed(0)
        model_t = build(torch)
        model_e = build(ember)
        copy_weights(model_t, model_e)
        model_t = model_t.to(TORCH_DEVICE)
        model_e = model_e.to(DEVICE)
        opt_t = torch.optim.SGD(model_t.parameters(), lr=0.05, momentum=0.9)
        opt_e = ember.optim.SGD(model_e.parameters(), lr=0.05, momentum=0.9)
        g = torch.Generator().manual_seed(1)
        losses_t, losses_e = [], []
        for _ in range(steps):
            x = torch.randn(8, 3, 16, 16, generator=g)
            y = torch.randint(0, 10, (8,), generator=g)
            x_e = ember.from_numpy(x.numpy().copy()).to(DEVICE)
            y_e = ember.from_numpy(y.numpy().copy()).to(DEVICE)
            opt_t.zero_grad()
            loss_t = torch.nn.functional.cross_entropy(model_t(x.to(TORCH_DEVICE)), y.to(TORCH_DEVICE))
            loss_t.backward()
            opt_t.step()
            opt_e.zero_grad()
            loss_e = ember.nn.functional.cross_entropy(model_e(x_e), y_e)
            loss_e.backward()
            opt_e.step()
            losses_t.append(loss_t.item())
            losses_e.append(loss_e.item())
        torch.testing.assert_close(torch.tensor(losses_e), torch.tensor(losses_t), rtol=1e-4, atol=1e-4)
        # The running statistics followed the same batches.
        bn_e, bn_t = model_e[1], model_t[1]
        torch.testing.assert_close(to_torch(bn_e.running_var), bn_t.running_var.cpu(), rtol=1e-4, atol=1e-5)
    finally:
        ember.backends.cudnn.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
