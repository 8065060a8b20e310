"""ember.cuda.amp: PyTorch's deprecated CUDA spellings of ember.amp."""

from ember.cuda.amp import autocast_mode, common, grad_scaler
from ember.cuda.amp.autocast_mode import autocast, custom_bwd, custom_fwd
from ember.cuda.amp.common import amp_definitely_not_available
from ember.cuda.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd"]
