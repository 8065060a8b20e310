"""SparseAdam: Adam for embedding tables, updating only the rows a step's gradient touches.

Ember has no sparse tensors: an Embedding(sparse=True) gradient arrives dense, and
the rows it touches are those with a non-zero entry. Those rows get PyTorch's
lazy Adam update (moments and parameter); the other rows keep their moments,
as the rows absent from a sparse gradient do in PyTorch."""

from __future__ import annotations

import math

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _f.check_tensor_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support complex parameters"
            )

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()
        with ember.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group):
        beta1, beta2 = group["betas"]
        lr, eps = _f.to_scalar(group["lr"]), group["eps"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = ember.zeros_like(p)
                state["exp_avg_sq"] = ember.zeros_like(p)
            state["step"] += 1
            grad = -p.grad if group["maximize"] else p.grad
            touched = grad != 0
            if grad.dim() > 1:
                touched = touched.flatten(1).any(1).reshape([-1] + [1] * (grad.dim() - 1))
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            new_avg = exp_avg + (grad - exp_avg) * (1 - beta1)
            new_sq = exp_avg_sq + (grad * grad - exp_avg_sq) * (1 - beta2)
            exp_avg.copy_(ember.where(touched, new_avg, exp_avg))
            exp_avg_sq.copy_(ember.where(touched, new_sq, exp_avg_sq))
            step = state["step"]
            step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
            update = new_avg / new_sq.sqrt().add_(eps) * -step_size
            p.add_(ember.where(touched, update, ember.zeros_like(update)))
