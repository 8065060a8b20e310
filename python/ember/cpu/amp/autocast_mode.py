"""ember.cpu.amp.autocast, deprecated as in PyTorch."""

import warnings

import ember
from ember.amp import autocast_mode as _amp


class autocast(_amp.autocast):  # noqa: N801
    def __init__(self, enabled=True, dtype=ember.bfloat16, cache_enabled=True):
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
