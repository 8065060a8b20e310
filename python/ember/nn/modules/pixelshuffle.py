"""The import path torch.nn.modules.pixelshuffle: PixelShuffle, PixelUnshuffle."""

from ember.nn.modules.extra import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
