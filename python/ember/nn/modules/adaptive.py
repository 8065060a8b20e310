"""AdaptiveLogSoftmaxWithLoss, where PyTorch defines it (torch.nn.modules.adaptive)."""

from ember.nn.modules.rest import AdaptiveLogSoftmaxWithLoss, _ASMoutput  # noqa: F401

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
