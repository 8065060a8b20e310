"""ember.utils.tensorboard: SummaryWriter, writing TensorBoard event files
without needing the tensorboard package."""

from ember.utils.tensorboard.writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
