"""Signal processing: window functions (torch.signal)."""

from ember.signal import windows

__all__ = ["windows"]
