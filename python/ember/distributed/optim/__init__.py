"""ember.distributed.optim: optimizers for data-parallel training."""

from ember.distributed.optim.zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
