"""RAdam (rectified Adam, optionally with decoupled weight decay), with
PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _f.check_tensor_lr(lr)
        _f.check_lr(lr)
        _f.check_eps(eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _f.check_weight_decay(weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("decoupled_weight_decay", False)

    def _update_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _f.step_tensor()
                state["exp_avg"] = ember.zeros_like(p)
                state["exp_avg_sq"] = ember.zeros_like(p)
        beta1, beta2 = group["betas"]
        lr, eps, wd = _f.to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        for p in params:
            state = self.state[p]
            grad = p.grad if not group["maximize"] else -p.grad
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            _f.check_capturable(group["capturable"])
            state["step"] += 1
            step = state["step"].item()
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * wd)
                else:
                    grad = grad.add(p, alpha=wd)
            param, grad, exp_avg, exp_avg_sq = _f.real_views(p, grad, exp_avg, exp_avg_sq)
            exp_avg.lerp_(grad, 1 - beta1)
            _f.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            bias_corrected_exp_avg = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                # A scalar over a tensor is reciprocal(tensor) * scalar, as PyTorch's __rtruediv__.
                adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
            else:
                param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
