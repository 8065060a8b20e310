"""Adadelta, with PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _f.check_tensor_lr(lr)
        _f.check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _f.check_eps(eps)
        _f.check_weight_decay(weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _f.step_tensor()
                state["square_avg"] = ember.zeros_like(p)
                state["acc_delta"] = ember.zeros_like(p)
        if params:
            _f.check_capturable(group["capturable"], supports_xla=False)
        lr, rho, eps, wd = _f.to_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        for p in params:
            state = self.state[p]
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            state["step"] += 1
            grad = p.grad if not group["maximize"] else -p.grad
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            param, grad, square_avg, acc_delta = _f.real_views(p, grad, square_avg, acc_delta)
            _f.addcmul_(square_avg.mul_(rho), grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            delta.div_(std).mul_(grad)
            _f.addcmul_(acc_delta.mul_(rho), delta, delta, value=1 - rho)
            param.add_(delta, alpha=-lr)
