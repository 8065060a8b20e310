"""DistributedSampler: each rank's share of a dataset, in PyTorch's order."""

from __future__ import annotations

import math

import ember
from ember.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Splits the dataset's indices among num_replicas ranks; a (seed, epoch)
    pair gives every rank the same permutation, as PyTorch draws it."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        import ember.distributed as dist

        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # Whole rounds only: the tail that cannot go to every rank is dropped.
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            order = ember.randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[: self.total_size]
        else:
            missing = self.total_size - len(order)
            # Repeat the order from its start until every rank has num_samples.
            repeats = 1 if missing <= len(order) else math.ceil(missing / len(order))
            order += (order * repeats)[:missing]
        if len(order) != self.total_size:
            raise AssertionError(f"{len(order)} indices for a total size of {self.total_size}")
        mine = order[self.rank : self.total_size : self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(f"{len(mine)} indices for {self.num_samples} samples")
        return iter(mine)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch that, with the seed, fixes the next shuffle."""
        self.epoch = epoch
