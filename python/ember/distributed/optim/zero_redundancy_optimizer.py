"""ZeroRedundancyOptimizer: each rank keeps the optimizer state of its own
share of the parameters only.

Note [ZeRO partition]
Within each parameter group, parameters are taken largest first (stable for
equal sizes) and each goes to the rank whose share so far has the fewest
elements (the lowest rank on ties); the running sizes carry over from one
group to the next. A step runs the wrapped optimizer on this rank's share,
then every parameter is broadcast from the rank that owns it, so all
replicas end equal.
"""

from __future__ import annotations

from copy import deepcopy

import ember
import ember.distributed as dist
from ember.distributed.algorithms.join import Joinable, JoinHook
from ember.optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]


class _ZeROJoinHook(JoinHook):
    def __init__(self, zero):
        self.zero = zero

    def main_hook(self):
        # A joined rank still steps its share, taking part in the step's broadcasts.
        self.zero.step()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wraps optimizer_class so that its state is sharded over the process group (Note [ZeRO partition])."""

    def __init__(
        self,
        params,
        optimizer_class,
        process_group=None,
        parameters_as_bucket_view=False,
        overlap_with_ddp=False,
        **defaults,
    ):
        if isinstance(params, ember.Tensor):
            raise TypeError(f"`params` argument should be an iterable of Tensors, but got {ember.typename(params)}")
        params = list(params)
        if not params:
            raise ValueError("ZeroRedundancyOptimizer did not receive any parameters")
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported")
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)
        self.process_group = dist._get_default_group() if process_group is None else process_group
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self.global_rank = dist.get_global_rank(self.process_group, self.rank)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._overlap_with_ddp = overlap_with_ddp
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        self._default_device = params[0].device if isinstance(params[0], ember.Tensor) else ember.device("cpu")
        self._all_state_dicts = None
        self._build_partition()
        self.optim = optimizer_class(self._partition[self.rank], **defaults)
        self._copy_hyperparameters(self.optim.param_groups, self.param_groups)

    # ---- the partition ----------------------------------------------------------

    def _build_partition(self):
        shares = [[] for _ in range(self.world_size)]
        sizes = [0] * self.world_size
        self._owner = {}
        for group in self.param_groups:
            mine = [[] for _ in range(self.world_size)]
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                rank = sizes.index(min(sizes))
                mine[rank].append(p)
                sizes[rank] += p.numel()
                self._owner[id(p)] = rank
            for rank in range(self.world_size):
                shares[rank].append({**{k: v for k, v in group.items() if k != "params"}, "params": mine[rank]})
        self._partition = shares

    @staticmethod
    def _copy_hyperparameters(source, target):
        for src, dst in zip(source, target):
            for key, value in src.items():
                if key != "params":
                    dst[key] = value

    def _broadcast_params(self):
        works = []
        with ember.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    src = dist.get_global_rank(self.process_group, self._owner[id(p)])
                    works.append(dist.broadcast(p.detach(), src=src, group=self.process_group, async_op=True))
        for w in works:
            w.wait()

    # ---- optimizer interface ----------------------------------------------------

    def step(self, closure=None, **kwargs):
        """One step of the wrapped optimizer on this rank's share, then the parameters made equal everywhere."""
        self._copy_hyperparameters(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(**kwargs) if closure is None else self.optim.step(closure=closure, **kwargs)
        self._broadcast_params()
        self._copy_hyperparameters(self.optim.param_groups, self.param_groups)
        return loss

    def add_param_group(self, param_group):
        if getattr(self, "optim", None) is None:  # during Optimizer.__init__
            return super().add_param_group(param_group)
        super().add_param_group(param_group)
        self._build_partition()
        self.optim = self._optim_constructor(self._partition[self.rank], **self._optim_defaults)
        return None

    def _global_index(self):
        index, start = {}, 0
        for group in self.param_groups:
            for p in group["params"]:
                index[id(p)] = start
                start += 1
        return index

    def consolidate_state_dict(self, to=0):
        """Gathers every rank's optimizer state on rank `to` (in the group) for state_dict()."""
        index = self._global_index()
        local = self.optim.state_dict()
        local_params = [p for g in self.optim.param_groups for p in g["params"]]
        mine = {index[id(local_params[i])]: state for i, state in local["state"].items()}
        gathered = [None] * self.world_size if self.rank == to else None
        dist.gather_object(mine, gathered, dst=dist.get_global_rank(self.process_group, to), group=self.process_group)
        self._all_state_dicts = gathered

    def state_dict(self):
        """The whole optimizer's state, on the rank consolidate_state_dict() gathered it to."""
        if self._all_state_dicts is None:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you meant to save the "
                "global state."
            )
        full = Optimizer.state_dict(self)
        for shard in self._all_state_dicts:
            full["state"].update(shard)
        full["state"] = dict(sorted(full["state"].items()))
        return full

    def load_state_dict(self, state_dict):
        """Loads a consolidated state dict: each rank keeps the state of the parameters it owns."""
        index = self._global_index()
        state = deepcopy(state_dict["state"])
        self._copy_hyperparameters(state_dict["param_groups"], self.param_groups)
        self._copy_hyperparameters(self.param_groups, self.optim.param_groups)
        for group in self.param_groups:
            for p in group["params"]:
                if self._owner[id(p)] == self.rank and index[id(p)] in state:
                    self.optim.state[p] = state[index[id(p)]]

    # ---- Joinable -------------------------------------------------------------------

    def join_hook(self, **kwargs):
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        return self._default_device

    @property
    def join_process_group(self):
        return self.process_group
