"""The default CPU generator's seed and state (torch.random)."""

from __future__ import annotations

import contextlib

from ember._C import default_generator

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


def manual_seed(seed):
    """Seeds the default generator and returns it. Accepts anything int()
    accepts; seeds must lie in [-2**63, 2**64)."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seeds the default generator non-deterministically and returns the seed."""
    return default_generator.seed()


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
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Restores the default generator's state when the block exits."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
