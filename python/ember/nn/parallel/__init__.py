"""ember.nn.parallel: DataParallel and data_parallel (on a machine without
GPUs, a plain call) and DistributedDataParallel."""

from ember.nn.parallel.data_parallel import DataParallel, data_parallel
from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
