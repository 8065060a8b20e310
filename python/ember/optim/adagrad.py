"""Adagrad (lr decay, initial accumulator), with PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _f.check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        _f.check_weight_decay(weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _f.check_eps(eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _f.check_fused_options(fused, differentiable, foreach)
        # As PyTorch, the state exists from construction on.
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _f.step_tensor()
                state["sum"] = ember.full_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        loss = _f.run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if group.get("fused"):
                        _f.check_fused_param(p)
                    state = self.state[p]
                    state["step"] += 1
                    step = state["step"].item()
                    grad = p.grad if not group["maximize"] else -p.grad
                    if wd != 0:
                        grad = grad.add(p, alpha=wd)
                    clr = lr / (1 + (step - 1) * lr_decay)
                    param, grad, total = _f.real_views(p, grad, state["sum"])
                    _f.addcmul_(total, grad, grad, value=1)
                    std = total.sqrt().add_(eps)
                    _f.addcdiv_(param, grad, std, value=-clr)
        return loss
