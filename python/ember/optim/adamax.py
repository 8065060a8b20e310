"""Adamax (Adam with the infinity norm), with PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _f.check_tensor_lr(lr)
        _f.check_lr(lr)
        _f.check_eps(eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _f.check_weight_decay(weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _f.step_tensor()
                state["exp_avg"] = ember.zeros_like(p)
                state["exp_inf"] = ember.zeros_like(p)
        beta1, beta2 = group["betas"]
        lr, eps, wd = _f.to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        for p in params:
            _f.check_capturable(group["capturable"])
            state = self.state[p]
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            grad = p.grad if not group["maximize"] else -p.grad
            state["step"] += 1
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            param, grad, exp_avg, exp_inf = _f.real_views(p, grad, exp_avg, exp_inf)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_inf.copy_(ember.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
            bias_correction = 1 - beta1 ** state["step"].item()
            clr = lr / bias_correction
            _f.addcdiv_(param, exp_avg, exp_inf, value=-clr)
