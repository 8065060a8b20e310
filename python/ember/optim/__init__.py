"""ember.optim: optimisers with PyTorch's update arithmetic."""

from ember.optim import lr_scheduler
from ember.optim.adagrad import Adagrad
from ember.optim.adam import Adam, AdamW
from ember.optim.optimizer import Optimizer
from ember.optim.rmsprop import RMSprop
from ember.optim.sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
