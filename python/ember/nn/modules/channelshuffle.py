"""The import path torch.nn.modules.channelshuffle: ChannelShuffle."""

from ember.nn.modules.extra import ChannelShuffle

__all__ = ["ChannelShuffle"]
