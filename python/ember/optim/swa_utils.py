"""Stochastic weight averaging and exponential moving averages of a model's
weights (AveragedModel), the SWA learning-rate schedule (SWALR) and
update_bn, with PyTorch's arithmetic."""

from __future__ import annotations

import itertools
import math
from copy import deepcopy

import ember
from ember.nn import Module
from ember.optim.lr_scheduler import LRScheduler, _per_group

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place update of lists of averages: ema = ema + (1 - decay) * (p - ema)."""
    _check_decay(decay)

    def ema_update(ema_params, current_params, _):
        with ember.no_grad():
            floating = ema_params[0].is_floating_point()
            for avg, cur in zip(ema_params, current_params):
                if floating:
                    avg.lerp_(cur, 1 - decay)
                else:
                    avg.copy_(avg * decay + cur * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place update of lists of running means over the models seen."""

    def swa_update(averaged_params, current_params, num_averaged):
        with ember.no_grad():
            floating = averaged_params[0].is_floating_point()
            for avg, cur in zip(averaged_params, current_params):
                if floating:
                    avg.lerp_(cur, 1 / (num_averaged + 1))
                elif isinstance(num_averaged, ember.Tensor):
                    avg.addcdiv_(cur - avg, num_averaged + 1)
                else:
                    avg.add_(cur - avg, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The exponential moving average of one parameter: decay * ema + (1 - decay) * p."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with ember.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one parameter over the models seen."""

    def swa_update(averaged_param, current_param, num_averaged):
        with ember.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of a model whose parameters (and buffers, with use_buffers=True)
    are the average of the models given to update_parameters."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averages, currents = [], []
        first = bool(self.n_averaged == 0)
        for avg, cur in zip(mine, theirs):
            cur = cur.detach().to(avg.device)
            averages.append(avg.detach())
            currents.append(cur)
            if first:
                avg.detach().copy_(cur)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None:
                for group in _by_dtype(averages, currents):
                    self.multi_avg_fn(group[0], group[1], self.n_averaged)
            else:
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for avg, cur in zip(averages, currents):
                    avg.copy_(avg_fn(avg, cur, self.n_averaged.to(avg.device)))
        if not self.use_buffers:
            for mine_b, theirs_b in zip(self.module.buffers(), model.buffers()):
                mine_b.detach().copy_(theirs_b.detach().to(mine_b.device))
        self.n_averaged += 1


def _by_dtype(averages, currents):
    groups = {}
    for a, c in zip(averages, currents):
        g = groups.setdefault((str(a.device), a.dtype), ([], []))
        g[0].append(a)
        g[1].append(c)
    return list(groups.values())


def update_bn(loader, model, device=None):
    """Recomputes the running statistics of model's batch norms over one pass of loader."""
    from ember.nn.modules.batchnorm import _BatchNorm

    with ember.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs (cosine or linear), then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, strategy):
        self._anneal_strategy = strategy
        self.anneal_func = self._cosine_anneal if strategy == "cos" else self._linear_anneal

    def get_lr(self):
        self._check_get_lr()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev)]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
