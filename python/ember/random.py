"""The default CPU generator's seed and state (torch.random)."""

from __future__ import annotations

import contextlib

from ember._C import default_generator

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state", "thread_safe_generator"]


def manual_seed(seed):
    """Seeds the default generator (and every CUDA device's) and returns it.
    Accepts anything int() accepts; seeds must lie in [-2**63, 2**64)."""
    seed = int(seed)
    import ember.cuda

    ember.cuda.manual_seed_all(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seeds the default generator non-deterministically, seeds the CUDA
    devices' generators with the same seed, and returns it."""
    new_seed = default_generator.seed()
    import ember.cuda

    ember.cuda.manual_seed_all(new_seed)
    return new_seed


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (PyTorch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores a state returned by get_rng_state()."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Restores the default generator's state, and those of the given CUDA
    devices (all of them by default), when the block exits."""
    if not enabled:
        yield
        return
    import ember.cuda

    if device_type != "cuda":
        devices = []
    elif devices is None:
        devices = list(range(ember.cuda.device_count()))
    else:
        devices = list(devices)
    state = get_rng_state()
    device_states = [ember.cuda.get_rng_state(device) for device in devices]
    try:
        yield
    finally:
        set_rng_state(state)
        for device, device_state in zip(devices, device_states):
            ember.cuda.set_rng_state(device_state, device)


def thread_safe_generator():
    """The generator of the DataLoader thread worker this runs in, or None (the default generator) in the
    main process and in process workers."""
    from ember.utils.data import get_worker_info

    info = get_worker_info()
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return info.rng.torch_generator
    return None
