"""RMSprop (centered, momentum), with PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _f.check_lr(lr)
        _f.check_eps(eps)
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        _f.check_weight_decay(weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = _f.run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
                wd, momentum, centered, maximize = (group["weight_decay"], group["momentum"], group["centered"],
                                                    group["maximize"])
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = _f.step_tensor()
                        state["square_avg"] = ember.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = ember.zeros_like(p)
                        if centered:
                            state["grad_avg"] = ember.zeros_like(p)
                    grad = p.grad if not maximize else -p.grad
                    square_avg = state["square_avg"]
                    state["step"] += 1
                    if wd != 0:
                        grad = grad.add(p, alpha=wd)
                    param, grad, square_avg = _f.real_views(p, grad, square_avg)
                    _f.addcmul_(square_avg.mul_(alpha), grad, grad, value=1 - alpha)
                    if centered:
                        (grad_avg,) = _f.real_views(state["grad_avg"])
                        grad_avg.lerp_(grad, 1 - alpha)
                        avg = _f.addcmul(square_avg, grad_avg, grad_avg, value=-1).sqrt_()
                    else:
                        avg = square_avg.sqrt()
                    avg = avg.add_(eps)
                    if momentum > 0:
                        (buf,) = _f.real_views(state["momentum_buffer"])
                        _f.addcdiv_(buf.mul_(momentum), grad, avg)
                        param.add_(buf, alpha=-lr)
                    else:
                        _f.addcdiv_(param, grad, avg, value=-lr)
        return loss
