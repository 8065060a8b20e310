"""Rprop (resilient backpropagation), with PyTorch's update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        _f.check_tensor_lr(lr)
        _f.check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _f.step_tensor()
                state["prev"] = ember.zeros_like(p)
                lr = _f.to_scalar(group["lr"])
                lr = lr.item() if isinstance(lr, ember.Tensor) else lr
                # a complex parameter's parts are two independent reals: both start at lr
                state["step_size"] = ember.full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p in params:
            state = self.state[p]
            grad = p.grad if not group["maximize"] else -p.grad
            prev, step_size = state["prev"], state["step_size"]
            _f.check_capturable(group["capturable"])
            state["step"] += 1
            param, grad, prev, step_size = _f.real_views(p, grad, prev, step_size)
            sign = grad.mul(prev).sign()
            sign[sign.gt(0)] = etaplus
            sign[sign.lt(0)] = etaminus
            sign[sign.eq(0)] = 1
            step_size.mul_(sign).clamp_(step_size_min, step_size_max)
            grad = grad.clone()
            grad[sign.eq(etaminus)] = 0
            _f.addcmul_(param, grad.sign(), step_size, value=-1)
            prev.copy_(grad)
