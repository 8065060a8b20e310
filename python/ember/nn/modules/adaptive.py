"""AdaptiveLogSoftmaxWithLoss, where PyTorch defines it (torch.nn.modules.adaptive)."""

from ember.nn.modules.rest import _ASMoutput, AdaptiveLogSoftmaxWithLoss  # noqa: F401

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
