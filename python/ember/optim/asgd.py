"""ASGD (averaged SGD), with PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _f.check_tensor_lr(lr)
        _f.check_lr(lr)
        _f.check_weight_decay(weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _f.step_tensor()
                state["eta"] = _f.step_tensor().fill_(_f.to_scalar(group["lr"]))
                state["mu"] = _f.step_tensor().fill_(1.0)
                state["ax"] = ember.zeros_like(p)
        lr, lambd, alpha, t0, wd = (_f.to_scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"],
                                    group["weight_decay"])
        for p in params:
            state = self.state[p]
            grad = p.grad if not group["maximize"] else -p.grad
            mu, ax, eta = state["mu"], state["ax"], state["eta"]
            _f.check_capturable(group["capturable"], "params, mus, etas, and state_steps")
            state["step"] += 1
            param, grad, ax = _f.real_views(p, grad, ax)
            if wd != 0:
                grad = grad.add(param, alpha=wd)
            eta_value = eta.item()
            param.mul_(1 - lambd * eta_value)
            param.add_(grad, alpha=-eta_value)
            if mu.item() != 1:
                ax.add_(param.sub(ax).mul_(mu))
            else:
                ax.copy_(param)
            step = state["step"].item()
            eta.copy_(ember.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(ember.as_tensor(1 / max(1, step - t0)))
