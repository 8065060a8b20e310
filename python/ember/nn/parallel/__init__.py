"""ember.nn.parallel: DataParallel and data_parallel (on a machine without
GPUs, a plain call) and DistributedDataParallel (imported with
ember.distributed on first use)."""

from ember.nn.parallel.data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def __getattr__(name):
    if name in ("DistributedDataParallel", "distributed"):
        import importlib

        distributed = importlib.import_module("ember.nn.parallel.distributed")
        return distributed if name == "distributed" else distributed.DistributedDataParallel
    raise AttributeError(f"module 'ember.nn.parallel' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | {"DistributedDataParallel", "distributed"})
