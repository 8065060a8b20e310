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


# ---- seeds: kept until a device is used, as PyTorch queues them --------------------

_queued_seed = None


def manual_seed(seed) -> None:
    global _queued_seed
    _queued_seed = int(seed)


def manual_seed_all(seed) -> None:
    manual_seed(seed)


def seed() -> None:
    import random as _random

    manual_seed(_random.getrandbits(63))


def seed_all() -> None:
    seed()


def initial_seed() -> int:
    _check_available()
    return _queued_seed if _queued_seed is not None else 0


# ---- device state and memory ------------------------------------------------------


def is_initialized() -> bool:
    return False


def current_device() -> int:
    _check_available()
    return 0


def set_device(device) -> None:
    _check_available()


def get_device_name(device=None) -> str:
    _check_available()
    raise RuntimeError("ember's CUDA backend reports no device name yet")


def synchronize(device=None) -> None:
    _check_available()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


def empty_cache() -> None:
    """Nothing is cached before a device is used."""


def memory_allocated(device=None) -> int:
    return 0


def max_memory_allocated(device=None) -> int:
    return 0


def memory_reserved(device=None) -> int:
    return 0


def max_memory_reserved(device=None) -> int:
    return 0


from ember.cuda import amp  # noqa: E402
