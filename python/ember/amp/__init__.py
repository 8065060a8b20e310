"""ember.amp: automatic mixed precision (autocast regions and loss scaling)."""

from ember.amp import autocast_mode, grad_scaler
from ember.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from ember.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
