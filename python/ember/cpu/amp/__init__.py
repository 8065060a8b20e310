"""ember.cpu.amp: PyTorch's deprecated CPU spellings of ember.amp."""

from ember.cpu.amp import autocast_mode, grad_scaler
from ember.cpu.amp.autocast_mode import autocast
from ember.cpu.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast"]
