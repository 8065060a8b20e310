"""ember.optim: optimisers with PyTorch's update arithmetic."""

from ember.optim.optimizer import Optimizer
from ember.optim.sgd import SGD

__all__ = ["Optimizer", "SGD"]
