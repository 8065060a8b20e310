"""NAdam (Nesterov-accelerated Adam, with momentum decay and optionally
decoupled weight decay), with PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["NAdam"]


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _f.check_tensor_lr(lr)
        _f.check_lr(lr)
        _f.check_eps(eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _f.check_weight_decay(weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
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
                state["mu_product"] = _f.step_tensor().fill_(1.0)
                state["exp_avg"] = ember.zeros_like(p)
                state["exp_avg_sq"] = ember.zeros_like(p)
        beta1, beta2 = group["betas"]
        lr, eps, wd = _f.to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        momentum_decay, decoupled = group["momentum_decay"], group["decoupled_weight_decay"]
        for p in params:
            state = self.state[p]
            grad = p.grad if not group["maximize"] else -p.grad
            exp_avg, exp_avg_sq, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
            _f.check_capturable(group["capturable"], "params, mu_products and state_steps")
            state["step"] += 1
            step = state["step"].item()
            bias_correction2 = 1 - beta2**step
            if wd != 0:
                if decoupled:
                    p.mul_(1 - lr * wd)
                else:
                    grad = grad.add(p, alpha=wd)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu
            param, grad, exp_avg, exp_avg_sq = _f.real_views(p, grad, exp_avg, exp_avg_sq)
            exp_avg.lerp_(grad, 1 - beta1)
            _f.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            mu_product_value = mu_product.item()
            mu_product_next = mu_product_value * mu_next
            denom.add_(eps)
            _f.addcdiv_(param, grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product_value))
            _f.addcdiv_(param, exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
