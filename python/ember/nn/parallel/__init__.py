"""ember.nn.parallel: DistributedDataParallel (torch.nn.parallel)."""

from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
