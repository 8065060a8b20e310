"""ember.nn.parallel: DataParallel and data_parallel (on a machine without GPUs, a plain call)."""

from ember.nn.parallel.data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
