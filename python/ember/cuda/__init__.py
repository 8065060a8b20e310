"""ember.cuda: device queries. Kernels arrive with the CUDA backend."""

from ember import _C


def is_available() -> bool:
    """True when Ember was built with CUDA and a device is usable."""
    return _C._cuda_device_count() > 0


def device_count() -> int:
    return _C._cuda_device_count()


def _check_available():
    if not _C._cuda_version():
        raise AssertionError("Torch not compiled with CUDA enabled")
    if not is_available():
        raise RuntimeError("No CUDA GPUs are available")
