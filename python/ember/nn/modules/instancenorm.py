"""The import path torch.nn.modules.instancenorm: the instance norms and their lazy forms."""

from ember.nn.modules.extra import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ember.nn.modules.lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]
