"""Join: training with uneven inputs across ranks.

Note [Join protocol]
Every iteration, each rank that still has inputs starts an all_reduce of a
one (Join.notify_join_context, called by the first joinable's forward). A
rank that ran out of inputs sits in Join.__exit__: it all-reduces a zero,
which meets those ones, so the sum counts the ranks still training; while it
is non-zero the joined rank runs each joinable's main_hook, which issues the
same collectives the training ranks issue in that iteration (with zeros).
When every rank has joined the sum is zero, and each post_hook runs with
whether this rank was the last to join.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod

import ember
import ember.distributed as dist

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """What a joined rank runs for a joinable: main_hook once per iteration
    the others still train, post_hook once all ranks have joined."""

    def main_hook(self) -> None:
        pass

    def post_hook(self, is_last_joiner: bool) -> None:
        pass


class _JoinConfig:
    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """A class whose instances take part in a Join context."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


class Join:
    """Context manager that lets ranks with fewer inputs shadow the collectives
    of the ranks still training (Note [Join protocol])."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, is_first_joinable=i == 0)
        groups = {id(j.join_process_group): j.join_process_group for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._device = joinables[0].join_device
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self._enable or exc_type is not None:
            return  # an error inside the context propagates as it is
        is_last_joiner = True
        rounds = 0
        while self._count_training_ranks() > 0:
            if rounds == 1000:
                warnings.warn(
                    f"Detected uneven input skew of greater than {rounds}. This means that rank {self._rank} has "
                    "at least this many fewer inputs than other currently-active ranks. This level of skew "
                    "could lead to performance degradation during training.",
                    stacklevel=2,
                )
            if self._throw_on_early_termination:
                ones = ember.ones(1, device=self._device)
                dist.all_reduce(ones, group=self._process_group)
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            rounds += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count_training_ranks(self):
        count = ember.zeros(1, device=self._device)
        dist.all_reduce(count, group=self._process_group)
        return count.item()

    @staticmethod
    def notify_join_context(joinable):
        """Tells the joined ranks that this one still trains; the Work of that
        all_reduce, or None when this joinable does not speak for the context."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        ones = ember.ones(1, device=joinable.join_device)
        work = dist.all_reduce(ones, group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = ember.zeros(1, device=joinable.join_device)
            dist.all_reduce(flag, group=group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
