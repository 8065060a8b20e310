"""Adafactor: second moments kept as row and column means for matrices
(a vector's in full), with PyTorch's single-tensor update arithmetic."""

from __future__ import annotations

import ember
from ember.optim import _functional as _f
from ember.optim.optimizer import Optimizer

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        _f.check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr = _f.to_scalar(group["lr"])
        lr = lr.item() if isinstance(lr, ember.Tensor) else lr
        eps1_group, eps2 = group["eps"]
        wd, d, decay = group["weight_decay"], group["d"], group["beta2_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _f.step_tensor()
                if p.grad.dim() > 1:
                    state["row_var"] = p.grad.new_zeros((*p.grad.shape[:-1], 1))
                    state["col_var"] = p.grad.new_zeros((*p.grad.shape[:-2], 1, p.grad.shape[-1]))
                else:
                    state["variance"] = ember.zeros_like(p.grad)
            grad = p.grad if not group["maximize"] else -p.grad
            eps1 = ember.finfo(p.dtype).eps if eps1_group is None else eps1_group
            state["step"] += 1
            step = state["step"].item()
            one_minus_beta2 = step**decay
            rho = min(lr, 1 / (step**0.5))
            alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
            if wd != 0:
                p.mul_(1 - lr * wd)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_var.lerp_(ember.norm(grad, dim=-1, keepdim=True).square_().div_(grad.shape[-1]), one_minus_beta2)
                col_var.lerp_(ember.norm(grad, dim=-2, keepdim=True).square_().div_(grad.shape[-2]), one_minus_beta2)
                estimate = row_var @ col_var
                estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                state["variance"].lerp_(grad * grad, one_minus_beta2)
                estimate = state["variance"].clone()
            update = estimate.clamp_(min=eps1 * eps1).rsqrt_()
            update.mul_(grad)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            p.add_(update, alpha=-alpha / denom)
